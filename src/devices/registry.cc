#include "devices/registry.h"

#include "core/text.h"
#include "devices/cpu/cpu_device.h"
#include "opscope/opscope.h"

namespace opscope::devices {

const char* Name(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHostToDevice: return "h2d";
    case CopyKind::kDeviceToHost: return "d2h";
    case CopyKind::kDeviceToDevice: return "d2d";
  }
  return "?";
}

const char* Name(StreamOp op) {
  switch (op) {
    case StreamOp::kCopy: return "copy";
    case StreamOp::kScale: return "scale";
    case StreamOp::kAdd: return "add";
    case StreamOp::kTriad: return "triad";
  }
  return "?";
}

std::unique_ptr<Network> Device::CreateNetwork(const NetworkSpec&, const NetworkOptions&) {
  throw Error(ErrorCode::kUnsupported, properties().id + " has no network layers in this build");
}

int ArraysTouched(StreamOp op) { return op == StreamOp::kCopy || op == StreamOp::kScale ? 2 : 3; }

std::vector<std::string> ListDevices() { return {"cpu"}; }

std::string DefaultDevice() { return ListDevices().front(); }

std::unique_ptr<Device> OpenDevice(const std::string& name, const DeviceOptions& options) {
  if (name == "cpu" || name == "cpu:0") return cpu::CreateCpuDevice(options);
  const bool cuda = name.rfind("cuda", 0) == 0;
  throw Error(ErrorCode::kUnsupported,
              "unknown or unavailable device '" + core::EscapeForTerminal(name) +
                  "': " + (cuda ? "this build of opscope has no CUDA backend; " : "") +
                  "devices present: cpu");
}

}  // namespace opscope::devices
