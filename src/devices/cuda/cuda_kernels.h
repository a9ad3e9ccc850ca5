// The device code opscope's CUDA backend needs beyond the libraries: STREAM
// kernels on the SMs and FMA loops for the measured ceilings.
#ifndef OPSCOPE_DEVICES_CUDA_CUDA_KERNELS_H_
#define OPSCOPE_DEVICES_CUDA_CUDA_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>

namespace opscope::cuda {

// op: 0 copy c=a, 1 scale b=s*c, 2 add c=a+b, 3 triad a=b+s*c (s = 3), over n doubles.
cudaError_t LaunchStream(int op, double* a, double* b, double* c, size_t n, int blocks,
                         cudaStream_t stream);

constexpr int kFmaThreads = 256;
constexpr int kFmaChains = 8;  // independent FMA chains per thread
// FMA chains in registers; each thread does kFmaChains * iterations FMAs
// (bf16: __hfma2 on pairs, so twice the FLOPs per instruction). The result goes to
// `sink` (blocks * kFmaThreads floats) so the work cannot be optimized away.
cudaError_t LaunchFmaLoopF32(float* sink, int blocks, int iterations, cudaStream_t stream);
cudaError_t LaunchFmaLoopBf16(float* sink, int blocks, int iterations, cudaStream_t stream);

// The network's own element-wise steps (devices/cuda/cudnn_network.cc).
// dx[i][j] = (exp(logp[i][j]) - (j == labels[i])) * scale, added to dx when accumulating.
cudaError_t LaunchSoftmaxXentBackward(const float* logp, const int32_t* labels, int64_t n,
                                      int64_t k, float scale, float* dx, bool accumulate,
                                      cudaStream_t stream);
// *loss = mean over i of -logp[i][labels[i]].
cudaError_t LaunchXentLoss(const float* logp, const int32_t* labels, int64_t n, int64_t k,
                           float* loss, cudaStream_t stream);
// torch.optim.SGD with momentum: m = first ? g : mu * m + g; w -= lr * m.
cudaError_t LaunchSgdMomentum(float* w, const float* g, float* m, int64_t n, float lr, float mu,
                              bool first, cudaStream_t stream);

}  // namespace opscope::cuda

#endif  // OPSCOPE_DEVICES_CUDA_CUDA_KERNELS_H_
