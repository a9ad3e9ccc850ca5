// Where a trace's operators execute: its device (GPU, NPU, MTIA kernels and
// copies) when it records device work, otherwise the CPU threads that run
// operators. Busy time, idle gaps and the step breakdown are measured on it.
#ifndef OPSCOPE_ANALYZE_COMPUTE_DEVICE_H_
#define OPSCOPE_ANALYZE_COMPUTE_DEVICE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/intervals.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

enum class ComputeOn { kNone, kDevice, kCpu };
const char* Name(ComputeOn on);  // "none", "device", "cpu"

// kDevice when some kernel, copy or set lasts; else kCpu when some host
// operator (or collective annotation) lasts; else kNone.
ComputeOn ComputeDeviceOf(const TraceModel& model);

// Whether a CPU trace's annotation scopes stand for its work: it records no
// framework operator and no device work, only the program's own scopes (a
// trace of opscope's C, C++ or Python API, or of torch.profiler's
// record_function alone). Then those scopes are what ran.
bool ScopesAreTheWork(const TraceModel& model);

// What each event is on the compute device: on a device, by its class (compute
// kernels, communication kernels, copies and sets; DMA tasks and device waits
// as communication where the trace has collectives, else as memory and as no
// work); on the CPU, framework operators (compute or communication by name)
// and the collectives the framework records as annotations (gloo:all_reduce),
// and where the scopes are the work (ScopesAreTheWork), every annotation
// scope but data loading (waiting for the next batch is not compute).
enum class Work : uint8_t { kNone, kCompute, kCommunication, kMemory };
std::vector<Work> ComputeWork(const TraceModel& model, ComputeOn on);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_COMPUTE_DEVICE_H_
