// Matmul through OpenBLAS (cblas_sgemm for fp32, cblas_sbgemm for bf16), so
// reports can set libraries side by side.
#ifndef OPSCOPE_DEVICES_CPU_OPENBLAS_KERNELS_H_
#define OPSCOPE_DEVICES_CPU_OPENBLAS_KERNELS_H_

#include <memory>
#include <string>

#include "devices/device.h"

namespace opscope::devices::cpu {

std::unique_ptr<Kernel> CreateOpenblasMatmul(const MatmulSpec& spec, const void* a, const void* b,
                                             float* c);
// Empty when OpenBLAS can run `dtype`, else why not.
Applicability OpenblasApplicability(DType dtype);
void SetOpenblasThreads(int threads);
// "OpenBLAS 0.3.21 (core Haswell)": the kernels it actually runs.
std::string OpenblasVersion();

}  // namespace opscope::devices::cpu

#endif  // OPSCOPE_DEVICES_CPU_OPENBLAS_KERNELS_H_
