// The entry point of libopscope_backend_cuda.so (see devices/backend.h).
#include <cuda_runtime.h>

#include "collect/device_activity.h"
#include "devices/backend.h"
#include "devices/cuda/cuda_device.h"
#include "devices/cuda/cupti_tracer.h"

namespace opscope::cuda {
namespace {

std::string DeviceName(uint32_t ordinal) {
  cudaDeviceProp p{};
  return cudaGetDeviceProperties(&p, static_cast<int>(ordinal)) == cudaSuccess ? std::string(p.name)
                                                                               : std::string();
}

void EnableTracing() {
  CuptiTracer& tracer = CuptiTracer::Instance();
  tracer.set_device_namer(DeviceName);
  collect::RegisterActivitySource(Activity::kCuda, &tracer);
}

std::unique_ptr<devices::Device> Open(int ordinal, const devices::DeviceOptions&) {
  auto device = OpenCudaDevice(ordinal);
  // A device opened in this process can be traced: ProfilerOptions::activities
  // may now name Activity::kCuda.
  EnableTracing();
  return device;
}

const devices::BackendApi kApi{
    devices::kBackendAbi, "cuda", CountDevices, Open, EnableTracing, "libopscope_cuda_inject.so"};

}  // namespace
}  // namespace opscope::cuda

extern "C" __attribute__((visibility("default"))) const opscope::devices::BackendApi*
opscope_backend_v1() {
  return &opscope::cuda::kApi;
}
