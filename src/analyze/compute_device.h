// Where a trace's operators execute: its device (GPU, NPU, MTIA kernels and
// copies) when it records device work, otherwise the CPU threads that run
// operators. Busy time, idle gaps and the step breakdown are measured on it.
#ifndef OPSCOPE_ANALYZE_COMPUTE_DEVICE_H_
#define OPSCOPE_ANALYZE_COMPUTE_DEVICE_H_

#include <string>
#include <vector>

#include "analyze/intervals.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

enum class ComputeOn { kNone, kDevice, kCpu };
const char* Name(ComputeOn on);  // "none", "device", "cpu"

// kDevice when some kernel, copy or set lasts; else kCpu when some host
// operator lasts; else kNone.
ComputeOn ComputeDeviceOf(const TraceModel& model);

// Whether event e is work on the compute device: device events for kDevice,
// host operators for kCpu.
inline bool IsComputeEvent(ComputeOn on, EventClass cls) {
  return on == ComputeOn::kDevice ? IsDevice(cls)
                                  : on == ComputeOn::kCpu && cls == EventClass::kHostOp;
}

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_COMPUTE_DEVICE_H_
