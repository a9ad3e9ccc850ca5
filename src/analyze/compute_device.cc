#include "analyze/compute_device.h"

#include <algorithm>

#include "analyze/names.h"

namespace opscope::analyze {

const char* Name(ComputeOn on) {
  switch (on) {
    case ComputeOn::kNone: return "none";
    case ComputeOn::kDevice: return "device";
    case ComputeOn::kCpu: return "cpu";
  }
  return "?";
}

ComputeOn ComputeDeviceOf(const TraceModel& model) {
  bool host_ops = false;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.duration_ns[e] <= 0) continue;
    if (IsDevice(model.cls[e])) return ComputeOn::kDevice;
    host_ops |= model.cls[e] == EventClass::kHostOp;
  }
  if (host_ops) return ComputeOn::kCpu;
  const std::vector<Work> work = ComputeWork(model, ComputeOn::kCpu);
  for (size_t e = 0; e < model.size(); ++e) {
    if (work[e] != Work::kNone && model.duration_ns[e] > 0) return ComputeOn::kCpu;
  }
  return ComputeOn::kNone;
}

std::vector<Work> ComputeWork(const TraceModel& model, ComputeOn on) {
  std::vector<Work> out(model.size(), Work::kNone);
  if (on == ComputeOn::kNone) return out;
  if (on == ComputeOn::kDevice) {
    // DMA tasks and device waits are the collectives' own where the trace has
    // collectives (HCCL moves data by SDMA on its stream, and ranks wait on
    // each other's notifies); without any, DMA is memory traffic and a wait
    // is no work (the device idles until the event it waits for).
    const bool collectives = std::find(model.cls.begin(), model.cls.end(),
                                       EventClass::kCommunication) != model.cls.end();
    for (size_t e = 0; e < model.size(); ++e) {
      switch (model.cls[e]) {
        case EventClass::kKernel: out[e] = Work::kCompute; break;
        case EventClass::kCommunication: out[e] = Work::kCommunication; break;
        case EventClass::kMemcpy:
        case EventClass::kMemset: out[e] = Work::kMemory; break;
        case EventClass::kDma: out[e] = collectives ? Work::kCommunication : Work::kMemory; break;
        case EventClass::kDeviceWait:
          out[e] = collectives ? Work::kCommunication : Work::kNone;
          break;
        default: break;
      }
    }
    return out;
  }
  const std::vector<bool> comm = ClassifyNames(model, IsCommunication);
  const bool scopes = ScopesAreTheWork(model);
  const std::vector<bool> data = scopes ? ClassifyNames(model, IsDataLoading) : std::vector<bool>();
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    if (cls == EventClass::kHostOp) {
      out[e] = comm[model.name[e]] ? Work::kCommunication : Work::kCompute;
    } else if (cls == EventClass::kAnnotation && comm[model.name[e]]) {
      out[e] = Work::kCommunication;
    } else if (cls == EventClass::kAnnotation && scopes && !data[model.name[e]]) {
      out[e] = Work::kCompute;
    }
  }
  return out;
}

bool ScopesAreTheWork(const TraceModel& model) {
  bool scopes = false;
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    if (cls == EventClass::kHostOp || IsDevice(cls)) return false;
    scopes |= cls == EventClass::kAnnotation && model.duration_ns[e] > 0;
  }
  return scopes;
}

}  // namespace opscope::analyze
