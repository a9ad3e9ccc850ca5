// The CPU backend's entry in the registry: built into the program (see
// devices/backend.h); one device, "cpu".
#include "devices/backend.h"
#include "devices/cpu/cpu_device.h"
#include "opscope/opscope.h"

namespace opscope::devices::cpu {
namespace {

int CountDevices(std::string*) { return 1; }

std::unique_ptr<Device> Open(int ordinal, const DeviceOptions& options) {
  if (ordinal != 0) {
    throw Error(ErrorCode::kUnsupported,
                "there is one CPU device, cpu (or cpu:0), not cpu:" + std::to_string(ordinal));
  }
  return CreateCpuDevice(options);
}

const BackendApi kApi{kBackendAbi, "cpu", CountDevices, Open, nullptr, ""};

}  // namespace
}  // namespace opscope::devices::cpu

extern "C" const opscope::devices::BackendApi* opscope_builtin_backend_cpu() {
  return &opscope::devices::cpu::kApi;
}
