// Which devices this build and machine have, and opening one by name ("cpu",
// "cuda:0"), through the backends of devices/backend.h.
#ifndef OPSCOPE_DEVICES_REGISTRY_H_
#define OPSCOPE_DEVICES_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "devices/backend.h"
#include "devices/device.h"

namespace opscope::devices {

// The devices present, best first (accelerators, then the CPU).
std::vector<std::string> ListDevices();
// The best device present: the default of --device.
std::string DefaultDevice();
// Throws Error(kUnsupported) for a device this build or machine does not have,
// naming the kinds it has.
std::unique_ptr<Device> OpenDevice(const std::string& name, const DeviceOptions& options = {});

}  // namespace opscope::devices

#endif  // OPSCOPE_DEVICES_REGISTRY_H_
