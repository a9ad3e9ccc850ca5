// Benchmark data: fresh random inputs (never zeros) and checks of results
// against double-precision references.
#ifndef OPSCOPE_WORKLOADS_DATA_H_
#define OPSCOPE_WORKLOADS_DATA_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "devices/device.h"

namespace opscope::workloads {

// Fills `count` elements with uniform values in [-1, 1] from a generator seeded
// anew for every call (so each run and each buffer set gets different data).
void FillRandom(void* data, size_t count, devices::DType dtype);
void FillRandom(double* data, size_t count);
// The same for device memory, staged through the host; `keep` receives the host copy.
void FillRandomOn(devices::Device& device, void* device_dst, size_t count, devices::DType dtype,
                  std::vector<char>* keep = nullptr);

// The relative error bound for a dot product of length `k` accumulated in fp32
// from `dtype` inputs, relative to sum |a_i * b_i|:
// fp32: 8 * sqrt(k) * 2^-24; bf16 and fp16 inputs: 32 * sqrt(k) * 2^-24; tf32: the
// fp32 bound plus 2^-9 for rounding the inputs to tf32. A result the device
// wrote in `output` rather than fp32 adds that type's unit roundoff (bf16
// 2^-8, fp16 2^-11): |round(c) - c| <= u |c| <= u sum |a_i * b_i|.
double ErrorBound(devices::DType dtype, int64_t k, devices::DType output = devices::DType::kF32);

struct Verification {
  bool passed = true;
  double max_relative_error = 0;
  int64_t checked = 0;
  std::string detail;  // the first failure, if any
};

// Checks `samples` entries of C = A * B (all entries when C is small) against
// double-precision dot products of the same inputs; `output`: the type the
// device wrote C in before it was widened (see ErrorBound).
Verification VerifyMatmul(const devices::MatmulSpec& spec, const void* a, const void* b,
                          const float* c, int samples = 64,
                          devices::DType output = devices::DType::kF32);

// Checks `samples` output points of a convolution (plain NCHW / OIHW layouts).
Verification VerifyConv2d(const devices::Conv2dSpec& spec, const void* src, const void* weights,
                          const float* dst, int samples = 64,
                          devices::DType output = devices::DType::kF32);

}  // namespace opscope::workloads

#endif  // OPSCOPE_WORKLOADS_DATA_H_
