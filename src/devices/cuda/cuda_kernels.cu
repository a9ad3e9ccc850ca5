#include <cuda_bf16.h>

#include "devices/cuda/cuda_kernels.h"

namespace opscope::cuda {
namespace {

constexpr int kStreamThreads = 256;

// Two doubles (16 bytes) per access; a scalar tail for odd n.
template <int Op>
__global__ void StreamKernel(double* __restrict__ a, double* __restrict__ b, double* __restrict__ c,
                             size_t n) {
  constexpr double s = 3.0;
  const size_t pairs = n / 2;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  auto* a2 = reinterpret_cast<double2*>(a);
  auto* b2 = reinterpret_cast<double2*>(b);
  auto* c2 = reinterpret_cast<double2*>(c);
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < pairs;
       i += stride) {
    if constexpr (Op == 0) {
      c2[i] = a2[i];
    } else if constexpr (Op == 1) {
      const double2 v = c2[i];
      b2[i] = make_double2(s * v.x, s * v.y);
    } else if constexpr (Op == 2) {
      const double2 x = a2[i], y = b2[i];
      c2[i] = make_double2(x.x + y.x, x.y + y.y);
    } else {
      const double2 x = b2[i], y = c2[i];
      a2[i] = make_double2(x.x + s * y.x, x.y + s * y.y);
    }
  }
  if ((n & 1) != 0 && blockIdx.x == 0 && threadIdx.x == 0) {
    const size_t j = n - 1;
    if constexpr (Op == 0) c[j] = a[j];
    if constexpr (Op == 1) b[j] = s * c[j];
    if constexpr (Op == 2) c[j] = a[j] + b[j];
    if constexpr (Op == 3) a[j] = b[j] + s * c[j];
  }
}

__global__ void FmaLoopF32(float* sink, int iterations) {
  float x[kFmaChains];
  const float seed = static_cast<float>(threadIdx.x) * 1e-7f;
#pragma unroll
  for (int k = 0; k < kFmaChains; ++k) x[k] = seed + k;
  const float m = 0.999999f, add = 1e-7f;
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int k = 0; k < kFmaChains; ++k) x[k] = fmaf(x[k], m, add);
  }
  float sum = 0;
#pragma unroll
  for (int k = 0; k < kFmaChains; ++k) sum += x[k];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

__global__ void FmaLoopBf16(float* sink, int iterations) {
  __nv_bfloat162 x[kFmaChains];
  const float seed = static_cast<float>(threadIdx.x) * 1e-3f;
#pragma unroll
  for (int k = 0; k < kFmaChains; ++k) x[k] = __floats2bfloat162_rn(seed + k, seed - k);
  const __nv_bfloat162 m = __floats2bfloat162_rn(0.999f, 0.999f);
  const __nv_bfloat162 add = __floats2bfloat162_rn(1e-3f, 1e-3f);
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int k = 0; k < kFmaChains; ++k) x[k] = __hfma2(x[k], m, add);
  }
  float sum = 0;
#pragma unroll
  for (int k = 0; k < kFmaChains; ++k) sum += __low2float(x[k]) + __high2float(x[k]);
  sink[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

__global__ void SoftmaxXentBackwardKernel(const float* logp, const int32_t* labels, int64_t n,
                                          int64_t k, float scale, float* dx, bool accumulate) {
  const int64_t total = n * k;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / k, col = i % k;
    const float g = (expf(logp[i]) - (col == labels[row] ? 1.f : 0.f)) * scale;
    dx[i] = accumulate ? dx[i] + g : g;
  }
}

__global__ void XentLossKernel(const float* logp, const int32_t* labels, int64_t n, int64_t k,
                               float* loss) {
  __shared__ double partial[256];
  double sum = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum -= logp[i * k + labels[i]];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *loss = static_cast<float>(partial[0] / static_cast<double>(n));
}

__global__ void SgdMomentumKernel(float* w, const float* g, float* m, int64_t n, float lr, float mu,
                                  bool first) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float buf = first ? g[i] : mu * m[i] + g[i];
    m[i] = buf;
    w[i] -= lr * buf;
  }
}

int BlocksFor(int64_t n) {
  const int64_t blocks = (n + 255) / 256;
  return static_cast<int>(blocks < 4096 ? (blocks < 1 ? 1 : blocks) : 4096);
}

}  // namespace

cudaError_t LaunchSoftmaxXentBackward(const float* logp, const int32_t* labels, int64_t n,
                                      int64_t k, float scale, float* dx, bool accumulate,
                                      cudaStream_t stream) {
  SoftmaxXentBackwardKernel<<<BlocksFor(n * k), 256, 0, stream>>>(logp, labels, n, k, scale, dx,
                                                                  accumulate);
  return cudaGetLastError();
}

cudaError_t LaunchXentLoss(const float* logp, const int32_t* labels, int64_t n, int64_t k,
                           float* loss, cudaStream_t stream) {
  XentLossKernel<<<1, 256, 0, stream>>>(logp, labels, n, k, loss);
  return cudaGetLastError();
}

cudaError_t LaunchSgdMomentum(float* w, const float* g, float* m, int64_t n, float lr, float mu,
                              bool first, cudaStream_t stream) {
  SgdMomentumKernel<<<BlocksFor(n), 256, 0, stream>>>(w, g, m, n, lr, mu, first);
  return cudaGetLastError();
}

cudaError_t LaunchStream(int op, double* a, double* b, double* c, size_t n, int blocks,
                         cudaStream_t stream) {
  switch (op) {
    case 0: StreamKernel<0><<<blocks, kStreamThreads, 0, stream>>>(a, b, c, n); break;
    case 1: StreamKernel<1><<<blocks, kStreamThreads, 0, stream>>>(a, b, c, n); break;
    case 2: StreamKernel<2><<<blocks, kStreamThreads, 0, stream>>>(a, b, c, n); break;
    default: StreamKernel<3><<<blocks, kStreamThreads, 0, stream>>>(a, b, c, n); break;
  }
  return cudaGetLastError();
}

cudaError_t LaunchFmaLoopF32(float* sink, int blocks, int iterations, cudaStream_t stream) {
  FmaLoopF32<<<blocks, kFmaThreads, 0, stream>>>(sink, iterations);
  return cudaGetLastError();
}

cudaError_t LaunchFmaLoopBf16(float* sink, int blocks, int iterations, cudaStream_t stream) {
  FmaLoopBf16<<<blocks, kFmaThreads, 0, stream>>>(sink, iterations);
  return cudaGetLastError();
}

}  // namespace opscope::cuda
