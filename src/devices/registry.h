// Which backends this build has, and opening a device by name ("cpu", "cuda:0").
#ifndef OPSCOPE_DEVICES_REGISTRY_H_
#define OPSCOPE_DEVICES_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "devices/device.h"

namespace opscope::devices {

struct DeviceOptions {
  int threads = 0;  // CPU worker threads; 0: all the CPUs this process may use
};

// The devices present, best first; the CPU is always there.
std::vector<std::string> ListDevices();
// The best device present: the default of --device.
std::string DefaultDevice();
// Throws Error(kUnsupported) for a device this build or machine does not have.
std::unique_ptr<Device> OpenDevice(const std::string& name, const DeviceOptions& options = {});

}  // namespace opscope::devices

#endif  // OPSCOPE_DEVICES_REGISTRY_H_
