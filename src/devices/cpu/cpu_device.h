// The CPU as a Device: host memory is device memory, kernels run on oneDNN,
// OpenBLAS or the device's own thread pool, and synchronizing waits for them.
#ifndef OPSCOPE_DEVICES_CPU_CPU_DEVICE_H_
#define OPSCOPE_DEVICES_CPU_CPU_DEVICE_H_

#include <memory>

#include "devices/backend.h"
#include "devices/device.h"

namespace opscope::devices::cpu {

class ThreadPool;

std::unique_ptr<Device> CreateCpuDevice(const DeviceOptions& options);

// The CPU device's own thread pool (copies, STREAM and FMA kernels).
ThreadPool& PoolOf(Device& cpu_device);

}  // namespace opscope::devices::cpu

#endif  // OPSCOPE_DEVICES_CPU_CPU_DEVICE_H_
