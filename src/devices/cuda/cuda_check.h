// Errors of the CUDA libraries as opscope Errors naming the call.
#ifndef OPSCOPE_DEVICES_CUDA_CUDA_CHECK_H_
#define OPSCOPE_DEVICES_CUDA_CUDA_CHECK_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>

namespace opscope::cuda {

// kResourceExhausted for an allocation failure, else kInternal.
void Check(cudaError_t status, const char* what);
// kUnsupported for CUBLAS_STATUS_NOT_SUPPORTED / CUDNN_STATUS_NOT_SUPPORTED.
void CheckBlas(cublasStatus_t status, const char* what);
void CheckDnn(cudnnStatus_t status, const char* what);
// Copies device memory to the host on `stream` and waits for it.
void CopyToHost(void* host, const void* device, size_t bytes, cudaStream_t stream);

}  // namespace opscope::cuda

#endif  // OPSCOPE_DEVICES_CUDA_CUDA_CHECK_H_
