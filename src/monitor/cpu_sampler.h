// The CPU sampler: utilization per core and in total (/proc/stat), memory
// (/proc/meminfo), a process's resident memory, per-core frequency (cpufreq, or
// what /proc/cpuinfo reports), temperature (hwmon), package energy and power
// (powercap RAPL), and load average.
#ifndef OPSCOPE_MONITOR_CPU_SAMPLER_H_
#define OPSCOPE_MONITOR_CPU_SAMPLER_H_

#include <filesystem>
#include <memory>

#include "monitor/sampler.h"

namespace opscope::monitor {

struct CpuSamplerPaths {
  std::filesystem::path proc = "/proc";
  std::filesystem::path sys = "/sys";
};

// `paths` lets tests point the sampler at a fabricated /proc and /sys.
std::unique_ptr<Sampler> CreateCpuSampler(int pid = 0, CpuSamplerPaths paths = {});

}  // namespace opscope::monitor

#endif  // OPSCOPE_MONITOR_CPU_SAMPLER_H_
