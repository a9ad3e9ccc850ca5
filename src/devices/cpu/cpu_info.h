// What the CPU is and what it can do in theory: model, ISA features, caches,
// clock, and theoretical peak FLOP/s per data type with the formula used.
#ifndef OPSCOPE_DEVICES_CPU_CPU_INFO_H_
#define OPSCOPE_DEVICES_CPU_CPU_INFO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "devices/device.h"

namespace opscope::devices::cpu {

struct CoreModel {
  std::string microarchitecture;
  int fma_units = 2;         // FMA pipes per core
  int fma_width_bits = 256;  // width of each pipe
  bool has_fma = true;
  bool has_avx512 = false;
  bool has_avx512_bf16 = false;
  bool has_amx_bf16 = false;
};

// Reads /proc/cpuinfo, /sys caches and the clock. `threads` is the cores used;
// `measured_ghz` > 0 is the all-core clock measured under load, used for the
// peaks when the kernel reports no maximum frequency (as in virtual machines).
DeviceProperties ProbeCpu(int threads, double measured_ghz = 0);

// The core model for a vendor/family/model and ISA flags (exposed for tests).
CoreModel ModelCore(const std::string& vendor, int family, int model,
                    const std::vector<std::string>& flags);

// One cache described by a CPUID cache leaf (Intel leaf 4, AMD 0x8000001D: the
// same layout): size = ways x partitions x line size x sets. Data and unified
// caches only; an instruction cache or the leaf's end gives false.
bool CacheFromCpuid(uint32_t eax, uint32_t ebx, uint32_t ecx, CacheLevel& cache);

// The caches CPUID lists (for machines whose /sys has no cache folders, as some
// virtual machines); empty on other processors. `source` names the leaf used.
std::vector<CacheLevel> CachesFromCpuid(std::string& source);

// Theoretical peaks of `cores` cores at `ghz` for the given core model.
std::vector<Peak> TheoreticalPeaks(const CoreModel& core, int cores, double ghz);

}  // namespace opscope::devices::cpu

#endif  // OPSCOPE_DEVICES_CPU_CPU_INFO_H_
