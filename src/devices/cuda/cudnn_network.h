// ResNet-style networks (devices/network.h) on cuDNN and cuBLAS.
#ifndef OPSCOPE_DEVICES_CUDA_CUDNN_NETWORK_H_
#define OPSCOPE_DEVICES_CUDA_CUDNN_NETWORK_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <memory>

#include "devices/device.h"
#include "devices/network.h"

namespace opscope::cuda {

// fp32 (FMA convolutions) or tf32 (tensor-core convolutions), NCHW. The handles
// must be bound to `stream`; everything the network launches goes there.
std::unique_ptr<devices::Network> CreateCudnnNetwork(devices::Device& device, cudnnHandle_t dnn,
                                                     cublasHandle_t blas, cudaStream_t stream,
                                                     const devices::NetworkSpec& spec,
                                                     const devices::NetworkOptions& options);

}  // namespace opscope::cuda

#endif  // OPSCOPE_DEVICES_CUDA_CUDNN_NETWORK_H_
