#include "analyze/compute_device.h"

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
  return host_ops ? ComputeOn::kCpu : ComputeOn::kNone;
}

}  // namespace opscope::analyze
