#include "devices/cpu/onednn_kernels.h"

#include <fmt/format.h>

#include <cstring>

#include "opscope/opscope.h"

namespace opscope::devices::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

memory::data_type ToDnnl(DType dtype) {
  return dtype == DType::kF32 ? memory::data_type::f32 : memory::data_type::bf16;
}

[[noreturn]] void Unsupported(const std::string& what, const dnnl::error& e) {
  throw Error(ErrorCode::kUnsupported, "oneDNN cannot run " + what + ": " + e.what());
}

class MatmulKernel final : public Kernel {
 public:
  MatmulKernel(dnnl::engine& engine, dnnl::stream& stream, const MatmulSpec& s, const void* a,
               const void* b, float* c)
      : stream_(stream), c_(c), bytes_(static_cast<size_t>(s.m * s.n) * sizeof(float)) {
    try {
      const memory::desc a_md({s.m, s.k}, ToDnnl(s.dtype), tag::ab);
      const memory::desc b_md({s.k, s.n}, ToDnnl(s.dtype), tag::ab);
      const memory::desc c_md({s.m, s.n}, memory::data_type::f32, tag::ab);
      pd_ = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, c_md), engine);
      primitive_ = dnnl::matmul(pd_);
      a_ = memory(a_md, engine, const_cast<void*>(a));
      b_ = memory(b_md, engine, const_cast<void*>(b));
      c_mem_ = memory(c_md, engine, c);
    } catch (const dnnl::error& e) {
      Unsupported(fmt::format("matmul {}x{}x{} {}", s.m, s.n, s.k, Name(s.dtype)), e);
    }
  }
  void Run() override {
    primitive_.execute(stream_,
                       {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_mem_}});
  }
  void ReadOutput(void* out) override {
    stream_.wait();
    std::memcpy(out, c_, bytes_);
  }
  std::string Implementation() const override { return pd_.impl_info_str(); }

 private:
  dnnl::stream& stream_;
  float* c_;
  size_t bytes_;
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul primitive_;
  memory a_, b_, c_mem_;
};

// dnnl_sgemm, oneDNN's JIT GEMM: on plain row-major fp32 operands it beats the
// matmul primitive at large sizes (bench/matmul_vs_numpy).
class SgemmKernel final : public Kernel {
 public:
  SgemmKernel(const MatmulSpec& s, const void* a, const void* b, float* c)
      : spec_(s), a_(static_cast<const float*>(a)), b_(static_cast<const float*>(b)), c_(c) {}
  void Run() override {
    const dnnl_status_t status = dnnl_sgemm('N', 'N', spec_.m, spec_.n, spec_.k, 1.0f, a_, spec_.k,
                                            b_, spec_.n, 0.0f, c_, spec_.n);
    if (status != dnnl_success) {
      throw Error(ErrorCode::kInternal, "dnnl_sgemm failed with status " + std::to_string(status));
    }
  }
  void ReadOutput(void* out) override {
    std::memcpy(out, c_, static_cast<size_t>(spec_.m * spec_.n) * sizeof(float));
  }
  std::string Implementation() const override { return "dnnl_sgemm (JIT GEMM)"; }

 private:
  MatmulSpec spec_;
  const float* a_;
  const float* b_;
  float* c_;
};

class ConvKernel final : public Kernel {
 public:
  ConvKernel(dnnl::engine& engine, dnnl::stream& stream, const Conv2dSpec& s, const void* src,
             const void* weights, float* dst)
      : engine_(engine), stream_(stream) {
    try {
      const memory::dims src_dims{s.batch, s.in_channels, s.in_h, s.in_w};
      const memory::dims dst_dims{s.batch, s.out_channels, s.out_h(), s.out_w()};
      memory::dims wei_dims{s.out_channels, s.in_channels / s.groups, s.kernel_h, s.kernel_w};
      tag wei_tag = tag::oihw;
      if (s.groups > 1) {
        wei_dims = {s.groups, s.out_channels / s.groups, s.in_channels / s.groups, s.kernel_h,
                    s.kernel_w};
        wei_tag = tag::goihw;
      }
      const auto dt = ToDnnl(s.dtype);
      const memory::desc src_any(src_dims, dt, tag::any), wei_any(wei_dims, dt, tag::any),
          dst_any(dst_dims, memory::data_type::f32, tag::any);
      const dnnl::convolution_forward::desc desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_any, wei_any,
          dst_any, {s.stride_h, s.stride_w}, {s.pad_h, s.pad_w}, {s.pad_h, s.pad_w});
      pd_ = dnnl::convolution_forward::primitive_desc(desc, engine);
      primitive_ = dnnl::convolution_forward(pd_);
      const memory user_src({src_dims, dt, tag::nchw}, engine, const_cast<void*>(src));
      const memory user_wei({wei_dims, dt, wei_tag}, engine, const_cast<void*>(weights));
      user_dst_ = memory({dst_dims, memory::data_type::f32, tag::nchw}, engine, dst);
      blocked_ = !(pd_.src_desc() == user_src.get_desc());
      src_ = Prepare(user_src, pd_.src_desc());
      wei_ = Prepare(user_wei, pd_.weights_desc());
      dst_ = pd_.dst_desc() == user_dst_.get_desc() ? user_dst_ : memory(pd_.dst_desc(), engine);
      stream_.wait();
    } catch (const dnnl::error& e) {
      Unsupported("this convolution", e);
    }
  }
  void Run() override {
    primitive_.execute(stream_,
                       {{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, wei_}, {DNNL_ARG_DST, dst_}});
  }
  void ReadOutput(void* out) override {
    memory plain(user_dst_.get_desc(), engine_, out);
    if (dst_.get_desc() == plain.get_desc()) {
      stream_.wait();
      std::memcpy(out, dst_.get_data_handle(), plain.get_desc().get_size());
    } else {
      dnnl::reorder(dst_, plain).execute(stream_, dst_, plain);
      stream_.wait();
    }
  }
  std::string Implementation() const override {
    return std::string(pd_.impl_info_str()) + (blocked_ ? ", blocked layouts" : ", plain layouts");
  }

 private:
  memory Prepare(const memory& user, const memory::desc& wanted) {
    if (user.get_desc() == wanted) return user;
    memory converted(wanted, engine_);
    dnnl::reorder(user, converted).execute(stream_, const_cast<memory&>(user), converted);
    return converted;
  }

  dnnl::engine& engine_;
  dnnl::stream& stream_;
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward primitive_;
  memory src_, wei_, dst_, user_dst_;
  bool blocked_ = false;
};

}  // namespace

std::unique_ptr<Kernel> CreateOnednnMatmul(dnnl::engine& engine, dnnl::stream& stream,
                                           const MatmulSpec& spec, const void* a, const void* b,
                                           float* c) {
  if (spec.impl == "onednn" && spec.dtype == DType::kF32) {
    return std::make_unique<SgemmKernel>(spec, a, b, c);
  }
  return std::make_unique<MatmulKernel>(engine, stream, spec, a, b, c);
}

std::unique_ptr<Kernel> CreateOnednnConv2d(dnnl::engine& engine, dnnl::stream& stream,
                                           const Conv2dSpec& spec, const void* src,
                                           const void* weights, float* dst) {
  return std::make_unique<ConvKernel>(engine, stream, spec, src, weights, dst);
}

std::string OnednnBf16Missing(dnnl::engine& engine) {
  try {
    const memory::desc md({16, 16}, memory::data_type::bf16, tag::ab);
    const memory::desc out({16, 16}, memory::data_type::f32, tag::ab);
    dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, out), engine);
    return {};
  } catch (const dnnl::error& e) {
    return "oneDNN " + OnednnVersion() +
           " has no bf16 kernels for this CPU (its bf16 paths need AVX-512): " + e.what();
  }
}

std::string OnednnVersion() {
  const dnnl_version_t* v = dnnl_version();
  return fmt::format("oneDNN {}.{}.{} ({})", v->major, v->minor, v->patch,
                     v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other threading");
}

}  // namespace opscope::devices::cpu
