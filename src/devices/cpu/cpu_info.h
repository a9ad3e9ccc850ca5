// What the CPU is and what it can do in theory: model, ISA features, caches,
// clock, and theoretical peak FLOP/s per data type with the formula used.
#ifndef OPSCOPE_DEVICES_CPU_CPU_INFO_H_
#define OPSCOPE_DEVICES_CPU_CPU_INFO_H_

#include <cstdint>
#include <functional>
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

// The all-core clock measured under load, and how (for the clock's source).
struct MeasuredClock {
  double ghz = 0;
  std::string how;
};

// Whether the kernel reports the cores' maximum clock (cpufreq); virtual
// machines often do not, and then the clock is measured.
bool KernelReportsMaxClock();

// One clock per machine: `measure_round` (one round of the measurement) is run
// until two rounds in a row agree within 0.5% (at most 10; interruptions only
// slow a round, so the faster of the last two is kept), and the result is kept
// in the clock cache (core/clock_cache.h) and reused while it describes this
// machine, so that every call reports the same peaks.
MeasuredClock MachineClock(int threads, const std::function<double()>& measure_round);

// Reads /proc/cpuinfo, /sys caches and the clock. `threads` is the cores used;
// `measured` (ghz > 0) is used for the peaks when the kernel reports no maximum
// frequency (as in virtual machines).
DeviceProperties ProbeCpu(int threads, const MeasuredClock& measured = {});

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
