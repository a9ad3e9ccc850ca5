// NVIDIA GPUs through NVML, loaded with dlopen at run time (no link-time
// dependency; only the functions used are declared). OPSCOPE_NVML_LIBRARY
// overrides the library path (tests point it at a fake).
#ifndef OPSCOPE_MONITOR_NVML_SAMPLER_H_
#define OPSCOPE_MONITOR_NVML_SAMPLER_H_

#include <memory>
#include <string>
#include <vector>

#include "monitor/sampler.h"

namespace opscope::monitor {

// One sampler per GPU; on failure an empty list and `why` ("no NVIDIA driver: ...").
std::vector<std::unique_ptr<Sampler>> OpenNvmlSamplers(std::string& why);

}  // namespace opscope::monitor

#endif  // OPSCOPE_MONITOR_NVML_SAMPLER_H_
