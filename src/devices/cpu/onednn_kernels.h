// Matmul and convolution through oneDNN primitives.
#ifndef OPSCOPE_DEVICES_CPU_ONEDNN_KERNELS_H_
#define OPSCOPE_DEVICES_CPU_ONEDNN_KERNELS_H_

#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "devices/device.h"

namespace opscope::devices::cpu {

// Plain row-major operands, as numpy and torch.mm hold them. impl "onednn" takes
// the fastest oneDNN path for the dtype (dnnl_sgemm for fp32, the matmul
// primitive for bf16); "onednn-matmul" always takes the matmul primitive.
std::unique_ptr<Kernel> CreateOnednnMatmul(dnnl::engine& engine, dnnl::stream& stream,
                                           const MatmulSpec& spec, const void* a, const void* b,
                                           float* c);

// oneDNN picks its preferred (blocked) layouts; inputs are reordered into them
// once, here, and the output is reordered back only by ReadOutput(), so Run()
// times the convolution alone, as benchdnn does.
std::unique_ptr<Kernel> CreateOnednnConv2d(dnnl::engine& engine, dnnl::stream& stream,
                                           const Conv2dSpec& spec, const void* src,
                                           const void* weights, float* dst);

std::string OnednnVersion();

// Whether this oneDNN has bf16 matmul and convolution kernels for this CPU
// (oneDNN 2.x needs AVX-512 for bf16; without it no primitive is built):
// "" when it has, else why not. Found by building a small primitive once.
std::string OnednnBf16Missing(dnnl::engine& engine);

}  // namespace opscope::devices::cpu

#endif  // OPSCOPE_DEVICES_CPU_ONEDNN_KERNELS_H_
