// The CUDA backend, built as the plugin libopscope_backend_cuda.so (see backend.h): the
// main program loads it only when a cuda device is asked for, so opscope runs on
// machines without the CUDA libraries.
#ifndef OPSCOPE_DEVICES_CUDA_CUDA_DEVICE_H_
#define OPSCOPE_DEVICES_CUDA_CUDA_DEVICE_H_

#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "devices/cuda/cuda_check.h"
#include "devices/device.h"

namespace opscope::cuda {

// How many CUDA devices this process sees; 0 with `why` set when none.
int CountDevices(std::string* why);
std::unique_ptr<devices::Device> OpenCudaDevice(int ordinal);

}  // namespace opscope::cuda

#endif  // OPSCOPE_DEVICES_CUDA_CUDA_DEVICE_H_
