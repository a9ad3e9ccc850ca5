#include "analyze/importers/rocprof/rocprof_records.h"

namespace opscope::analyze {

std::string_view KernelSymbolName(std::string_view name) {
  if (name.ends_with(" [clone .kd]")) name.remove_suffix(12);
  if (name.ends_with(".kd")) name.remove_suffix(3);
  return name;
}

CopyDirection MemoryCopyDirection(std::string_view operation, bool same_agent) {
  if (operation.ends_with("HOST_TO_DEVICE")) return CopyDirection::kHostToDevice;
  if (operation.ends_with("DEVICE_TO_HOST")) return CopyDirection::kDeviceToHost;
  if (operation.ends_with("DEVICE_TO_DEVICE")) {
    return same_agent ? CopyDirection::kDeviceToDevice : CopyDirection::kPeerToPeer;
  }
  if (operation.ends_with("HOST_TO_HOST")) return CopyDirection::kHostToHost;
  return CopyDirection::kUnknown;
}

}  // namespace opscope::analyze
