#include "devices/cpu/onednn_network.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "devices/network_plan.h"
#include "devices/network_storage.h"
#include "opscope/opscope.h"

namespace opscope::devices {

namespace cpu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Dt = memory::data_type;
using Args = std::unordered_map<int, memory>;
using dnnl::algorithm;
using dnnl::prop_kind;

// convolution_auto picks the same kernels here (measured: 575-582 ms per step either way).
constexpr algorithm kConvAlgorithm = algorithm::convolution_direct;

using Storage = NetworkStorage;
using Pool = NetworkPool;
using enum NetworkPool;

// A device allocation with its oneDNN memory object; frees itself.
class Tensor {
 public:
  Tensor() = default;
  Tensor(Storage& storage, Pool pool, const memory::desc& md, const dnnl::engine& engine)
      : storage_(&storage), pool_(pool), bytes_(std::max<size_t>(md.get_size(), 1)) {
    data_ = storage.Allocate(pool, bytes_);
    mem_ = memory(md, engine, data_);
  }
  ~Tensor() { Reset(); }
  Tensor(Tensor&& other) noexcept { *this = std::move(other); }
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) {
      Reset();
      storage_ = other.storage_, pool_ = other.pool_, bytes_ = other.bytes_;
      data_ = std::exchange(other.data_, nullptr);
      mem_ = std::move(other.mem_);
      other.mem_ = memory();
    }
    return *this;
  }
  void Reset() {
    if (data_ != nullptr) storage_->Free(pool_, data_, bytes_);
    data_ = nullptr;
    mem_ = memory();
  }
  explicit operator bool() const { return data_ != nullptr; }
  const memory& mem() const { return mem_; }
  memory::desc md() const { return mem_.get_desc(); }
  float* f32() const { return static_cast<float*>(data_); }
  size_t bytes() const { return bytes_; }

 private:
  Storage* storage_ = nullptr;
  Pool pool_ = kActivations;
  size_t bytes_ = 0;
  void* data_ = nullptr;
  memory mem_;
};

// A traced operator of the plan, with the layout this backend gives its output.
struct Op {
  TracedOp planned;
  std::string layout;
  const std::string& name() const { return planned.name; }
};

struct Param {
  ParamKind kind;
  memory::dims plain_dims;
  Tag plain_tag;
  memory::desc md;  // the layout the forward primitive reads (fp32 master)
  Tensor value, grad, momentum;
  Tensor low;  // the weights in the working precision, when it is not fp32
  bool trainable = true;
  bool momentum_set = false;  // torch.optim.SGD: the first step sets the buffer to the gradient
};

struct Layer {
  LayerSpec spec;
  memory::dims out_dims;
  memory::desc out_md;
  std::vector<int> consumers;
  bool keep_output = false;  // the backward pass needs it (by this layer or a consumer)
  bool needs_input_gradient = false;
  std::vector<Param> params;

  // Primitives and their descriptors.
  dnnl::primitive fwd, bwd_data, bwd_weights, relu_bwd, add_accumulate;
  memory::desc src_md;               // the layout the primitive reads input 0 in
  memory::desc fwd_weights_md;       // conv, linear
  memory::desc bwd_data_weights_md;  // conv, linear: the layout backward data reads
  memory::desc bwd_diff_dst_md;      // what the backward primitives read as d(output)
  memory::desc bwd_diff_src_md;      // what backward data writes
  memory::desc diff_weights_md;      // what backward weights writes
  memory::desc bwd_src_md;           // the layout backward weights reads the input in
  memory::desc mean_md, var_md, workspace_md;
  memory::desc add_b_md;  // the layout the add reads its second input in

  // Per iteration.
  Tensor out, src_copy, mean, var, workspace, diff;
  int forward_pending = 0;  // consumers yet to run forward
  Op op_fwd, op_bwd_data, op_bwd_weights, op_bwd;
};

// The scope arguments of a traced operator.
ScopeArgs ArgsOf(const Op& op) { return op.planned.Args(op.layout); }

Dt DataType(DType dtype) {
  switch (dtype) {
    case DType::kF32: return Dt::f32;
    case DType::kBF16: return Dt::bf16;
    default:
      throw Error(ErrorCode::kUnsupported,
                  std::string("networks run in fp32 or bf16, not ") + devices::Name(dtype));
  }
}

// A readable name of a memory layout: "nchw", "nChw16c", "OIhw16i16o" or "blocked".
std::string LayoutName(const memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked) return "any";
  const auto& b = d.format_desc.blocking;
  const int n = d.ndims;
  // Dimensions from outermost to innermost stride, then the inner blocks.
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return b.strides[x] > b.strides[y]; });
  const char* letters = n == 4 ? "nchw" : n == 2 ? "nc" : "abcdef";
  std::string out;
  for (const int i : order) {
    bool blocked = false;
    for (int k = 0; k < b.inner_nblks; ++k) blocked |= b.inner_idxs[k] == i;
    out += blocked ? static_cast<char>(std::toupper(letters[i])) : letters[i];
  }
  for (int k = 0; k < b.inner_nblks; ++k) {
    out += std::to_string(b.inner_blks[k]) + letters[b.inner_idxs[k]];
  }
  return out;
}

class OnednnNetwork final : public Network {
 public:
  OnednnNetwork(Device& device, dnnl::engine& engine, dnnl::stream& stream, const NetworkSpec& spec,
                const NetworkOptions& options)
      : storage_(device),
        engine_(engine),
        stream_(stream),
        spec_(spec),
        options_(options),
        plan_(PlanNetwork(spec, options)),
        dt_(DataType(options.dtype)) {
    attr_.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    input_md_ = memory::desc(plan_.input_dims, Dt::f32, Tag::nchw);
    layers_.resize(spec.layers.size());
    for (size_t i = 0; i < spec.layers.size(); ++i) {
      layers_[i].spec = spec.layers[i];
      layers_[i].consumers = plan_.layers[i].consumers;
      layers_[i].keep_output = plan_.layers[i].keep_output;
    }
    std::mt19937_64 rng(options.seed);
    for (size_t i = 0; i < layers_.size(); ++i) {
      try {
        Build(static_cast<int>(i), rng);
      } catch (const dnnl::error& e) {
        throw Error(
            ErrorCode::kUnsupported,
            fmt::format("oneDNN cannot build layer {} ({}, {}) in {} {}: {}", i,
                        spec.layers[i].name, devices::Name(spec.layers[i].kind),
                        devices::Name(options.dtype), devices::Name(options.layout), e.what()));
      }
    }
    sgd_op_ = Op{plan_.optimizer, ""};
  }

  ~OnednnNetwork() override { ReleaseIteration(); }

  void SetInput(const float* images, const int32_t* labels) override {
    images_ = images;
    labels_ = labels;
  }

  void Forward() override {
    if (images_ == nullptr) throw Error(ErrorCode::kInvalidArgument, "Forward() before SetInput()");
    ReleaseIteration();
    scratchpad_ =
        Tensor(storage_, kWorkspace,
               memory::desc({static_cast<int64_t>(scratchpad_bytes_)}, Dt::u8, Tag::x), engine_);
    input_ = memory(input_md_, engine_, const_cast<float*>(images_));
    for (auto& layer : layers_) layer.forward_pending = static_cast<int>(layer.consumers.size());
    for (size_t i = 0; i < layers_.size(); ++i) {
      Layer& layer = layers_[i];
      RunForward(static_cast<int>(i));
      for (const int in : layer.spec.inputs) {
        if (in < 0) continue;
        Layer& producer = layers_[in];
        if (--producer.forward_pending == 0 && !producer.keep_output && !options_.keep_outputs) {
          producer.out.Reset();
        }
      }
    }
    if (!options_.training) scratchpad_.Reset();
  }

  void Backward(const float* output_gradient) override {
    if (!options_.training) {
      throw Error(ErrorCode::kInvalidArgument, "Backward() on a network built for inference");
    }
    if (!layers_.back().out)
      throw Error(ErrorCode::kInvalidArgument, "Backward() before Forward()");
    Layer& last = layers_.back();
    if (last.spec.kind != LayerKind::kSoftmaxCrossEntropy) {
      if (output_gradient == nullptr) {
        throw Error(ErrorCode::kInvalidArgument,
                    "Backward() of a network without a loss needs d(loss)/d(output)");
      }
      memory user(PlainMd(last.out_dims, Dt::f32), engine_, const_cast<float*>(output_gradient));
      last.diff = Tensor(storage_, kActivations, last.out_md, engine_);
      Reorder(user, last.diff.mem(), last.spec.name);
    }
    if (options_.input_gradient) {
      input_gradient_ = Tensor(storage_, kActivations, input_md_, engine_);
      std::memset(input_gradient_.f32(), 0, input_gradient_.bytes());
    }
    for (int i = static_cast<int>(layers_.size()) - 1; i >= 0; --i) {
      RunBackward(i);
      Layer& layer = layers_[i];
      layer.out.Reset(), layer.src_copy.Reset(), layer.mean.Reset(), layer.var.Reset();
      layer.workspace.Reset(), layer.diff.Reset();
    }
    scratchpad_.Reset();
    backward_done_ = true;
  }

  void Update() override {
    if (!backward_done_) throw Error(ErrorCode::kInvalidArgument, "Update() before Backward()");
    OPSCOPE_SCOPE_DYN(sgd_op_.name(), ArgsOf(sgd_op_));
    const float lr = options_.learning_rate, mu = options_.momentum;
    for (auto& layer : layers_) {
      for (auto& p : layer.params) {
        if (!p.trainable) continue;
        const int64_t n = static_cast<int64_t>(p.value.bytes() / sizeof(float));
        float* w = p.value.f32();
        float* m = p.momentum.f32();
        const float* g = p.grad.f32();
        const bool first = !p.momentum_set;
#pragma omp parallel for schedule(static)
        for (int64_t k = 0; k < n; ++k) {
          const float buf = first ? g[k] : mu * m[k] + g[k];
          m[k] = buf;
          w[k] -= lr * buf;
        }
        p.momentum_set = true;
        if (p.low) Reorder(p.value.mem(), p.low.mem(), layer.spec.name, "Cast");
      }
    }
    backward_done_ = false;
  }

  float Loss() const override { return loss_; }

  int64_t ParameterCount() const override {
    int64_t n = 0;
    for (const auto& layer : layers_) {
      for (const auto& p : layer.params) {
        if (p.trainable) n += Elements(p.plain_dims);
      }
    }
    return n;
  }

  NetworkMemory Memory() const override { return storage_.Memory(); }

  void ResetPeakMemory() override { storage_.ResetPeak(); }

  std::vector<int64_t> OutputShape(int layer) const override {
    CheckLayerIndex(layers_, layer);
    return layers_[layer].out_dims;
  }

  void ReadOutput(int layer, float* out) const override {
    CheckLayerIndex(layers_, layer);
    const Layer& l = layers_[layer];
    if (!l.out) {
      throw Error(ErrorCode::kInvalidArgument,
                  "the output of " + l.spec.name + " is not held (run Forward(), keep_outputs)");
    }
    memory user(PlainMd(l.out_dims, Dt::f32), engine_, out);
    Reorder(l.out.mem(), user, l.spec.name);
  }

  void ReadInputGradient(float* out) const override {
    if (!input_gradient_) {
      throw Error(ErrorCode::kInvalidArgument,
                  "no input gradient: build with input_gradient and run Backward()");
    }
    std::memcpy(out, input_gradient_.f32(), input_gradient_.bytes());
  }

  int64_t ParameterSize(int layer, ParamKind kind) const override {
    return Elements(FindLayerParam(layers_, layer, kind).plain_dims);
  }

  void ReadParameter(int layer, ParamKind kind, float* out) const override {
    const Param& p = FindLayerParam(layers_, layer, kind);
    memory user(memory::desc(p.plain_dims, Dt::f32, p.plain_tag), engine_, out);
    Reorder(p.value.mem(), user, layers_[layer].spec.name);
  }

  void WriteParameter(int layer, ParamKind kind, const float* values) override {
    Param& p = const_cast<Param&>(FindLayerParam(layers_, layer, kind));
    memory user(memory::desc(p.plain_dims, Dt::f32, p.plain_tag), engine_,
                const_cast<float*>(values));
    Reorder(user, p.value.mem(), layers_[layer].spec.name);
    if (p.low) Reorder(p.value.mem(), p.low.mem(), layers_[layer].spec.name);
  }

  void ReadGradient(int layer, ParamKind kind, float* out) const override {
    const Param& p = FindLayerParam(layers_, layer, kind);
    if (!p.trainable)
      throw Error(ErrorCode::kInvalidArgument, "running statistics have no gradient");
    memory user(memory::desc(p.plain_dims, Dt::f32, p.plain_tag), engine_, out);
    Reorder(p.grad.mem(), user, layers_[layer].spec.name);
  }

  std::vector<std::string> Implementations() const override {
    std::vector<std::string> out;
    for (const auto& layer : layers_) {
      out.push_back(layer.spec.name + ": " + (layer.fwd ? ImplOf(layer.fwd) : "opscope"));
    }
    return out;
  }

  int64_t LayoutConversions() const override { return conversions_; }

 private:
  static std::string ImplOf(const dnnl::primitive& p) {
    const_dnnl_primitive_desc_t pd = nullptr;
    dnnl_primitive_get_primitive_desc(p.get(), &pd);
    const char* info = nullptr;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &info);
    return info != nullptr ? info : "?";
  }

  memory::desc PlainMd(const memory::dims& dims, Dt dt) const {
    return memory::desc(dims, dt,
                        dims.size() == 4   ? Tag::nchw
                        : dims.size() == 2 ? Tag::nc
                                           : Tag::x);
  }

  // The activation layout a primitive is asked for: any (it picks) or a plain one.
  memory::desc ActivationMd(const memory::dims& dims) const {
    if (dims.size() != 4) return memory::desc(dims, dt_, Tag::nc);
    switch (options_.layout) {
      case Layout::kBlocked: return memory::desc(dims, dt_, Tag::any);
      case Layout::kNchw: return memory::desc(dims, dt_, Tag::nchw);
      case Layout::kNhwc: return memory::desc(dims, dt_, Tag::nhwc);
    }
    return memory::desc(dims, dt_, Tag::any);
  }

  memory::desc InputMd(int layer, int which) const {
    const int in = layers_[layer].spec.inputs[which];
    return in < 0 ? input_md_ : layers_[in].out_md;
  }
  memory::dims InputDims(int layer, int which) const {
    const int in = layers_[layer].spec.inputs[which];
    return in < 0 ? memory::dims{spec_.batch, spec_.channels, spec_.height, spec_.width}
                  : layers_[in].out_dims;
  }
  const memory& InputMem(int layer, int which) const {
    const int in = layers_[layer].spec.inputs[which];
    if (in < 0) return input_;
    if (!layers_[in].out) {
      throw Error(ErrorCode::kInternal, "the output of " + layers_[in].spec.name + " was freed");
    }
    return layers_[in].out.mem();
  }

  void NoteScratchpad(const dnnl::primitive_desc_base& pd) {
    scratchpad_bytes_ = std::max<size_t>(scratchpad_bytes_, pd.scratchpad_desc().get_size());
  }

  Param& AddParam(Layer& layer, ParamKind kind, const memory::dims& plain_dims, Tag plain_tag,
                  const memory::desc& md, const std::vector<float>& init, bool trainable = true) {
    Param& p = layer.params.emplace_back();
    p.kind = kind;
    p.plain_dims = plain_dims;
    p.plain_tag = plain_tag;
    p.md = md;
    p.trainable = trainable;
    p.value = Tensor(storage_, trainable ? kParameters : kBuffers, md, engine_);
    if (p.value.bytes() > 0) std::memset(p.value.f32(), 0, p.value.bytes());  // block padding
    memory user(memory::desc(plain_dims, Dt::f32, plain_tag), engine_,
                const_cast<float*>(init.data()));
    Reorder(user, p.value.mem(), layer.spec.name);
    if (trainable && options_.training) {
      p.grad = Tensor(storage_, kGradients, md, engine_);
      std::memset(p.grad.f32(), 0, p.grad.bytes());
      p.momentum = Tensor(storage_, kOptimizer, md, engine_);
      std::memset(p.momentum.f32(), 0, p.momentum.bytes());
    }
    return p;
  }

  // The weights in the working precision, in the forward primitive's layout.
  void AddLowPrecisionCopy(Layer& layer, Param& p, const memory::desc& low_md) {
    if (dt_ == Dt::f32) return;
    p.low = Tensor(storage_, kBuffers, low_md, engine_);
    Reorder(p.value.mem(), p.low.mem(), layer.spec.name);
  }

  static std::vector<float> Normal(std::mt19937_64& rng, int64_t n, float stddev) {
    std::normal_distribution<float> d(0.f, stddev);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = d(rng);
    return v;
  }
  static std::vector<float> Uniform(std::mt19937_64& rng, int64_t n, float bound) {
    std::uniform_real_distribution<float> d(-bound, bound);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = d(rng);
    return v;
  }

  static Op OpFrom(const TracedOp& planned, const memory::desc& layout) {
    return Op{planned, LayoutName(layout)};
  }

  void Build(int index, std::mt19937_64& rng) {
    Layer& l = layers_[index];
    const LayerSpec& s = l.spec;
    const memory::dims in = InputDims(index, 0);
    const memory::desc in_md = InputMd(index, 0);
    const bool training = options_.training;
    const prop_kind fwd_prop =
        training ? prop_kind::forward_training : prop_kind::forward_inference;
    // Shapes, parameters and the traced operators come from the plan.
    const LayerPlan& plan = plan_.layers[index];
    l.out_dims = plan.out_dims;
    l.needs_input_gradient = plan.needs_input_gradient;
    size_t next_param = 0;
    const auto initial = [&] { return InitialValues(plan.params.at(next_param++), rng); };
    switch (s.kind) {
      case LayerKind::kConv: {
        const memory::dims wd = plan.params[0].dims, strides{s.stride, s.stride}, pad{s.pad, s.pad};
        const memory::desc w_any(wd, dt_, Tag::any);
        const auto fpd = dnnl::convolution_forward::primitive_desc(
            dnnl::convolution_forward::desc(fwd_prop, kConvAlgorithm, ActivationMd(in), w_any,
                                            ActivationMd(l.out_dims), strides, pad, pad),
            attr_, engine_);
        NoteScratchpad(fpd);
        l.fwd = dnnl::convolution_forward(fpd);
        l.src_md = fpd.src_desc();
        l.out_md = fpd.dst_desc();
        l.fwd_weights_md = fpd.weights_desc();
        // The fp32 master weights have the forward primitive's layout.
        AddParam(l, ParamKind::kWeight, wd, Tag::oihw, FpLayoutOf(l.fwd_weights_md), initial());
        AddLowPrecisionCopy(l, l.params.back(), l.fwd_weights_md);
        if (training) {
          // Asked for the layouts at hand first (no reorders); any layout if unimplemented.
          const auto bwpd =
              FirstThatBuilds<dnnl::convolution_backward_weights::primitive_desc>([&](bool exact) {
                return dnnl::convolution_backward_weights::primitive_desc(
                    dnnl::convolution_backward_weights::desc(
                        kConvAlgorithm, exact ? l.src_md : memory::desc(in, dt_, Tag::any),
                        exact ? FpLayoutOf(l.fwd_weights_md) : memory::desc(wd, Dt::f32, Tag::any),
                        exact ? l.out_md : memory::desc(l.out_dims, dt_, Tag::any), strides, pad,
                        pad),
                    attr_, engine_, fpd);
              });
          NoteScratchpad(bwpd);
          l.bwd_weights = dnnl::convolution_backward_weights(bwpd);
          l.bwd_src_md = bwpd.src_desc();
          l.diff_weights_md = bwpd.diff_weights_desc();
          l.bwd_diff_dst_md = bwpd.diff_dst_desc();
          if (l.needs_input_gradient) {
            const auto bdpd =
                FirstThatBuilds<dnnl::convolution_backward_data::primitive_desc>([&](bool exact) {
                  return dnnl::convolution_backward_data::primitive_desc(
                      dnnl::convolution_backward_data::desc(
                          kConvAlgorithm, exact ? in_md : ActivationMd(in), w_any,
                          exact ? l.out_md : l.bwd_diff_dst_md, strides, pad, pad),
                      attr_, engine_, fpd);
                });
            NoteScratchpad(bdpd);
            l.bwd_data = dnnl::convolution_backward_data(bdpd);
            l.bwd_data_weights_md = bdpd.weights_desc();
            l.bwd_diff_src_md = bdpd.diff_src_desc();
          }
        }
        break;
      }
      case LayerKind::kBatchNorm: {
        l.src_md = in_md;
        auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
        if (s.relu) flags |= dnnl::normalization_flags::fuse_norm_relu;
        if (!training) flags |= dnnl::normalization_flags::use_global_stats;
        const auto fpd = dnnl::batch_normalization_forward::primitive_desc(
            dnnl::batch_normalization_forward::desc(fwd_prop, in_md, options_.bn_epsilon, flags),
            attr_, engine_);
        NoteScratchpad(fpd);
        l.fwd = dnnl::batch_normalization_forward(fpd);
        l.out_md = fpd.dst_desc();
        l.mean_md = fpd.mean_desc();
        l.var_md = fpd.variance_desc();
        if (training && s.relu) l.workspace_md = fpd.workspace_desc();
        const int64_t c = in[1];
        const memory::dims cd{c};
        const memory::desc vec(cd, Dt::f32, Tag::x);
        AddParam(l, ParamKind::kScale, cd, Tag::x, vec, initial());
        AddParam(l, ParamKind::kShift, cd, Tag::x, vec, initial());
        AddParam(l, ParamKind::kRunningMean, cd, Tag::x, vec, initial(), false);
        AddParam(l, ParamKind::kRunningVar, cd, Tag::x, vec, initial(), false);
        if (training) {
          const auto bpd = dnnl::batch_normalization_backward::primitive_desc(
              dnnl::batch_normalization_backward::desc(prop_kind::backward, l.out_md, in_md,
                                                       options_.bn_epsilon, flags),
              attr_, engine_, fpd);
          NoteScratchpad(bpd);
          l.bwd_data = dnnl::batch_normalization_backward(bpd);
          l.bwd_diff_dst_md = bpd.diff_dst_desc();
          l.bwd_diff_src_md = bpd.diff_src_desc();
        }
        break;
      }
      case LayerKind::kRelu: {
        l.src_md = in_md;
        const auto alg =
            training ? algorithm::eltwise_relu_use_dst_for_bwd : algorithm::eltwise_relu;
        const auto fpd = dnnl::eltwise_forward::primitive_desc(
            dnnl::eltwise_forward::desc(fwd_prop, alg, in_md, 0.f, 0.f), attr_, engine_);
        NoteScratchpad(fpd);
        l.fwd = dnnl::eltwise_forward(fpd);
        l.out_md = fpd.dst_desc();
        if (training) {
          const auto bpd = dnnl::eltwise_backward::primitive_desc(
              dnnl::eltwise_backward::desc(alg, l.out_md, l.out_md, 0.f, 0.f), attr_, engine_, fpd);
          NoteScratchpad(bpd);
          l.bwd_data = dnnl::eltwise_backward(bpd);
          l.bwd_diff_src_md = bpd.diff_src_desc();
        }
        break;
      }
      case LayerKind::kMaxPool:
      case LayerKind::kGlobalAvgPool: {
        const bool max = s.kind == LayerKind::kMaxPool;
        const int64_t k_h = max ? s.kernel : in[2], k_w = max ? s.kernel : in[3];
        const int64_t stride = max ? s.stride : 1, pad = max ? s.pad : 0;
        l.src_md = in_md;
        const auto alg = max ? algorithm::pooling_max : algorithm::pooling_avg_exclude_padding;
        const memory::dims strides{stride, stride}, kernel{k_h, k_w}, pads{pad, pad};
        const auto fpd = dnnl::pooling_forward::primitive_desc(
            dnnl::pooling_forward::desc(fwd_prop, alg, in_md, ActivationMd(l.out_dims), strides,
                                        kernel, pads, pads),
            attr_, engine_);
        NoteScratchpad(fpd);
        l.fwd = dnnl::pooling_forward(fpd);
        l.out_md = fpd.dst_desc();
        if (training && max) l.workspace_md = fpd.workspace_desc();
        if (training) {
          const auto bpd = dnnl::pooling_backward::primitive_desc(
              dnnl::pooling_backward::desc(alg, in_md, l.out_md, strides, kernel, pads, pads),
              attr_, engine_, fpd);
          NoteScratchpad(bpd);
          l.bwd_data = dnnl::pooling_backward(bpd);
          l.bwd_diff_dst_md = bpd.diff_dst_desc();
          l.bwd_diff_src_md = bpd.diff_src_desc();
        }
        break;
      }
      case LayerKind::kLinear: {
        const int64_t o = plan.params[0].dims[0], features = plan.params[0].dims[1];
        l.src_md = in_md;
        const memory::dims wd =
            in.size() == 4 ? memory::dims{o, features, 1, 1} : memory::dims{o, features};
        const Tag plain_w = in.size() == 4 ? Tag::oihw : Tag::oi;
        // The classifier's weights in the layout the primitive prefers.
        const memory::desc w_md(wd, dt_, Tag::any), bias_md({o}, Dt::f32, Tag::x);
        const memory::desc dst_md(l.out_dims, dt_, Tag::nc);
        const auto fpd = dnnl::inner_product_forward::primitive_desc(
            dnnl::inner_product_forward::desc(fwd_prop, in_md, w_md, bias_md, dst_md), attr_,
            engine_);
        NoteScratchpad(fpd);
        l.fwd = dnnl::inner_product_forward(fpd);
        l.out_md = fpd.dst_desc();
        l.fwd_weights_md = fpd.weights_desc();
        AddParam(l, ParamKind::kWeight, wd, plain_w, FpLayoutOf(l.fwd_weights_md), initial());
        AddLowPrecisionCopy(l, l.params.back(), l.fwd_weights_md);
        AddParam(l, ParamKind::kBias, {o}, Tag::x, bias_md, initial());
        if (training) {
          const auto bwpd = dnnl::inner_product_backward_weights::primitive_desc(
              dnnl::inner_product_backward_weights::desc(in_md, memory::desc(wd, Dt::f32, Tag::any),
                                                         bias_md, dst_md),
              attr_, engine_, fpd);
          NoteScratchpad(bwpd);
          l.bwd_weights = dnnl::inner_product_backward_weights(bwpd);
          l.diff_weights_md = bwpd.diff_weights_desc();
          l.bwd_diff_dst_md = bwpd.diff_dst_desc();
          if (l.needs_input_gradient) {
            const auto bdpd = dnnl::inner_product_backward_data::primitive_desc(
                dnnl::inner_product_backward_data::desc(in_md, w_md, dst_md), attr_, engine_, fpd);
            NoteScratchpad(bdpd);
            l.bwd_data = dnnl::inner_product_backward_data(bdpd);
            l.bwd_data_weights_md = bdpd.weights_desc();
            l.bwd_diff_src_md = bdpd.diff_src_desc();
          }
        }
        break;
      }
      case LayerKind::kAdd: {
        l.src_md = in_md;
        l.add_b_md = in_md;         // the second input is reordered to the first's layout if needed
        dnnl::primitive_attr attr;  // a copy of attr_ would share its handle
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        if (s.relu) {
          dnnl::post_ops ops;
          ops.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
          attr.set_post_ops(ops);
        }
        const auto fpd = dnnl::binary::primitive_desc(
            dnnl::binary::desc(algorithm::binary_add, in_md, in_md, in_md), attr, engine_);
        NoteScratchpad(fpd);
        l.fwd = dnnl::binary(fpd);
        l.out_md = fpd.dst_desc();
        if (training && s.relu) {
          const auto hint = dnnl::eltwise_forward::primitive_desc(
              dnnl::eltwise_forward::desc(prop_kind::forward_training,
                                          algorithm::eltwise_relu_use_dst_for_bwd, l.out_md, 0.f,
                                          0.f),
              attr_, engine_);
          const auto bpd = dnnl::eltwise_backward::primitive_desc(
              dnnl::eltwise_backward::desc(algorithm::eltwise_relu_use_dst_for_bwd, l.out_md,
                                           l.out_md, 0.f, 0.f),
              attr_, engine_, hint);
          NoteScratchpad(bpd);
          l.relu_bwd = dnnl::eltwise_backward(bpd);
        }
        break;
      }
      case LayerKind::kSoftmaxCrossEntropy: {
        l.src_md = in_md;
        l.out_md = memory::desc(in, Dt::f32, Tag::nc);  // the probabilities
        break;
      }
    }
    // The plan's operators, with this backend's layout of what each writes.
    l.op_fwd = OpFrom(plan.forward, l.out_md);
    if (training) {
      const bool weighted = s.kind == LayerKind::kConv || s.kind == LayerKind::kLinear;
      (weighted ? l.op_bwd_weights : l.op_bwd) =
          OpFrom(plan.backward, weighted ? l.src_md : l.out_md);
      if (!plan.backward_data.empty())
        l.op_bwd_data = OpFrom(plan.backward_data, l.bwd_diff_src_md);
    }
    // An add whose second input arrives in another layout reorders it (not expected).
    // Accumulating a second gradient into this layer's output: diff += contribution.
    if (training && l.consumers.size() > 1) {
      const auto apd = dnnl::binary::primitive_desc(
          dnnl::binary::desc(algorithm::binary_add, l.out_md, l.out_md, l.out_md), attr_, engine_);
      NoteScratchpad(apd);
      l.add_accumulate = dnnl::binary(apd);
    }
  }

  // Builds with the layouts at hand (true) and, where oneDNN has no optimized
  // implementation for them (none, or its reference one), with layouts of its
  // choice (false).
  template <typename Pd, typename F>
  static Pd FirstThatBuilds(F&& build) {
    try {
      Pd pd = build(true);
      if (std::string_view(pd.impl_info_str()).rfind("ref", 0) != 0) return pd;
    } catch (const dnnl::error&) {
    }
    return build(false);
  }

  // The fp32 counterpart of a (possibly low-precision) layout.
  static memory::desc FpLayoutOf(const memory::desc& md) {
    memory::desc out = md;
    out.data.data_type = dnnl_f32;
    return out;
  }

  void Execute(const Op& op, dnnl::primitive& p, Args args) {
    OPSCOPE_SCOPE_DYN(op.name(), ArgsOf(op));
    if (scratchpad_) args[DNNL_ARG_SCRATCHPAD] = scratchpad_.mem();
    p.execute(stream_, args);
    stream_.wait();
  }

  // from -> to, any layouts; cached per pair of layouts.
  // Traced as `op`: "Reorder" (a layout conversion of an activation or a
  // gradient, counted), "ReorderWeights", "Copy" or "Cast".
  void Reorder(const memory& from, const memory& to, const std::string& module,
               const char* op = "Reorder") const {
    const memory::desc a = from.get_desc(), b = to.get_desc();
    dnnl::reorder* r = nullptr;
    for (auto& [x, y, prim] : reorder_cache_) {
      if (x == a && y == b) r = &prim;
    }
    if (r == nullptr) {
      reorder_cache_.emplace_back(a, b, dnnl::reorder(from, to));
      r = &std::get<2>(reorder_cache_.back());
    }
    const std::string layouts = LayoutName(a) + "->" + LayoutName(b);
    OPSCOPE_SCOPE_DYN(op, ScopeArgs{.shapes = "",
                                    .dtype = "",
                                    .flops = 0,
                                    .bytes = static_cast<int64_t>(a.get_size() + b.get_size()),
                                    .category = "cpu_op",
                                    .layout = layouts,
                                    .module = module});
    r->execute(stream_, const_cast<memory&>(from), const_cast<memory&>(to));
    stream_.wait();
    if (std::string_view(op) == "Reorder") ++conversions_;
  }

  // A tensor in layout `md` holding `t`: `t` itself when the layouts agree.
  const memory& InLayout(const memory& t, const memory::desc& md, Tensor& temp,
                         const std::string& module, const char* op = "Reorder") {
    if (t.get_desc() == md) return t;
    temp = Tensor(storage_, kWorkspace, md, engine_);
    Reorder(t, temp.mem(), module, op);
    return temp.mem();
  }

  void RunForward(int index) {
    Layer& l = layers_[index];
    const LayerSpec& s = l.spec;
    const memory& in = InputMem(index, 0);
    switch (s.kind) {
      case LayerKind::kConv: {
        const memory* src = &in;
        if (in.get_desc() != l.src_md) {  // the first convolution's plain input, typically
          l.src_copy = Tensor(storage_, kActivations, l.src_md, engine_);
          Reorder(in, l.src_copy.mem(), s.name);
          src = &l.src_copy.mem();
        }
        l.out = Tensor(storage_, kActivations, l.out_md, engine_);
        const Param& w = l.params[0];
        Execute(l.op_fwd, l.fwd,
                {{DNNL_ARG_SRC, *src},
                 {DNNL_ARG_WEIGHTS, w.low ? w.low.mem() : w.value.mem()},
                 {DNNL_ARG_DST, l.out.mem()}});
        break;
      }
      case LayerKind::kBatchNorm: {
        l.out = Tensor(storage_, kActivations, l.out_md, engine_);
        Args args{{DNNL_ARG_SRC, in},
                  {DNNL_ARG_DST, l.out.mem()},
                  {DNNL_ARG_SCALE, l.params[0].value.mem()},
                  {DNNL_ARG_SHIFT, l.params[1].value.mem()}};
        if (options_.training) {
          l.mean = Tensor(storage_, kActivations, l.mean_md, engine_);
          l.var = Tensor(storage_, kActivations, l.var_md, engine_);
          args[DNNL_ARG_MEAN] = l.mean.mem();
          args[DNNL_ARG_VARIANCE] = l.var.mem();
          if (s.relu) {
            l.workspace = Tensor(storage_, kActivations, l.workspace_md, engine_);
            args[DNNL_ARG_WORKSPACE] = l.workspace.mem();
          }
        } else {
          args[DNNL_ARG_MEAN] = l.params[2].value.mem();
          args[DNNL_ARG_VARIANCE] = l.params[3].value.mem();
        }
        Execute(l.op_fwd, l.fwd, std::move(args));
        if (options_.training) {
          // Running statistics as torch: the unbiased batch variance, momentum 0.1.
          const int64_t c = l.out_dims[1];
          const double count = static_cast<double>(Elements(l.out_dims) / c);
          const float m = options_.bn_momentum;
          const float unbias = count > 1 ? static_cast<float>(count / (count - 1)) : 1.f;
          float* rm = l.params[2].value.f32();
          float* rv = l.params[3].value.f32();
          for (int64_t k = 0; k < c; ++k) {
            rm[k] = (1 - m) * rm[k] + m * l.mean.f32()[k];
            rv[k] = (1 - m) * rv[k] + m * l.var.f32()[k] * unbias;
          }
        }
        break;
      }
      case LayerKind::kRelu:
        l.out = Tensor(storage_, kActivations, l.out_md, engine_);
        Execute(l.op_fwd, l.fwd, {{DNNL_ARG_SRC, in}, {DNNL_ARG_DST, l.out.mem()}});
        break;
      case LayerKind::kMaxPool:
      case LayerKind::kGlobalAvgPool: {
        l.out = Tensor(storage_, kActivations, l.out_md, engine_);
        Args args{{DNNL_ARG_SRC, in}, {DNNL_ARG_DST, l.out.mem()}};
        if (l.workspace_md.get_size() > 0 && options_.training && s.kind == LayerKind::kMaxPool) {
          l.workspace = Tensor(storage_, kActivations, l.workspace_md, engine_);
          args[DNNL_ARG_WORKSPACE] = l.workspace.mem();
        }
        Execute(l.op_fwd, l.fwd, std::move(args));
        break;
      }
      case LayerKind::kLinear: {
        l.out = Tensor(storage_, kActivations, l.out_md, engine_);
        const Param& w = l.params[0];
        Execute(l.op_fwd, l.fwd,
                {{DNNL_ARG_SRC, in},
                 {DNNL_ARG_WEIGHTS, w.low ? w.low.mem() : w.value.mem()},
                 {DNNL_ARG_BIAS, l.params[1].value.mem()},
                 {DNNL_ARG_DST, l.out.mem()}});
        break;
      }
      case LayerKind::kAdd: {
        Tensor temp;
        const memory& b = InLayout(InputMem(index, 1), l.add_b_md, temp, s.name);
        l.out = Tensor(storage_, kActivations, l.out_md, engine_);
        Execute(l.op_fwd, l.fwd,
                {{DNNL_ARG_SRC_0, in}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, l.out.mem()}});
        break;
      }
      case LayerKind::kSoftmaxCrossEntropy: {
        OPSCOPE_SCOPE_DYN(l.op_fwd.name(), ArgsOf(l.op_fwd));
        if (labels_ == nullptr) {
          throw Error(ErrorCode::kInvalidArgument, "a network with a loss needs labels");
        }
        Tensor temp;
        const memory& logits_mem = InLayout(in, l.out_md, temp, s.name);
        const float* logits = static_cast<const float*>(logits_mem.get_data_handle());
        l.out = Tensor(storage_, kActivations, l.out_md, engine_);
        const int64_t n = l.out_dims[0], k = l.out_dims[1];
        double total = 0;
        for (int64_t i = 0; i < n; ++i) {
          const int32_t label = labels_[i];
          if (label < 0 || label >= k) {
            throw Error(ErrorCode::kInvalidArgument,
                        fmt::format("label {} of image {} is outside [0, {})", label, i, k));
          }
          const float* x = logits + i * k;
          float* p = l.out.f32() + i * k;
          const float top = *std::max_element(x, x + k);
          double sum = 0;
          for (int64_t j = 0; j < k; ++j) sum += std::exp(static_cast<double>(x[j] - top));
          const double log_sum = std::log(sum);
          for (int64_t j = 0; j < k; ++j) {
            p[j] = static_cast<float>(std::exp(static_cast<double>(x[j] - top) - log_sum));
          }
          total += log_sum - static_cast<double>(x[label] - top);
        }
        loss_ = static_cast<float>(total / static_cast<double>(n));
        break;
      }
    }
  }

  // Adds a contribution to d(loss)/d(output of `producer`) (or of the input, -1).
  void AddGradient(int producer, Tensor&& contribution, const std::string& module) {
    if (producer < 0) {
      if (!input_gradient_) return;
      Tensor plain(storage_, kWorkspace, input_md_, engine_);
      Reorder(contribution.mem(), plain.mem(), module);
      const int64_t n = static_cast<int64_t>(plain.bytes() / sizeof(float));
      for (int64_t k = 0; k < n; ++k) input_gradient_.f32()[k] += plain.f32()[k];
      return;
    }
    Layer& p = layers_[producer];
    if (!p.diff) {
      if (contribution.md() == p.out_md) {
        p.diff = std::move(contribution);
      } else {
        p.diff = Tensor(storage_, kActivations, p.out_md, engine_);
        Reorder(contribution.mem(), p.diff.mem(), module);
      }
      return;
    }
    Tensor temp;
    const memory& c = InLayout(contribution.mem(), p.out_md, temp, module);
    const int64_t e = Elements(p.out_dims), esize = dt_ == Dt::bf16 ? 2 : 4;
    const Op op{TracedOp{"AccumulateGrad", ShapesText({p.out_dims}), p.op_fwd.planned.dtype,
                         p.spec.name, e, 3 * esize * e},
                LayoutName(p.out_md)};
    Execute(op, p.add_accumulate,
            {{DNNL_ARG_SRC_0, p.diff.mem()}, {DNNL_ARG_SRC_1, c}, {DNNL_ARG_DST, p.diff.mem()}});
  }

  // Backward of a layer with weights (convolution, linear): the weights'
  // gradient (and the bias's, in `extra`), then d(input) for its producer.
  void WeightedBackward(Layer& l, const memory& src, const memory& diff, Args extra) {
    Param& w = l.params[0];
    {
      Tensor dw_temp;
      const bool direct = l.diff_weights_md == w.grad.md();
      if (!direct) dw_temp = Tensor(storage_, kWorkspace, l.diff_weights_md, engine_);
      extra[DNNL_ARG_SRC] = src;
      extra[DNNL_ARG_DIFF_DST] = diff;
      extra[DNNL_ARG_DIFF_WEIGHTS] = direct ? w.grad.mem() : dw_temp.mem();
      Execute(l.op_bwd_weights, l.bwd_weights, std::move(extra));
      if (!direct) Reorder(dw_temp.mem(), w.grad.mem(), l.spec.name, "ReorderWeights");
    }
    if (!l.bwd_data) return;  // the network's input, when nobody asked for its gradient
    Tensor w_temp;
    const memory& weights = InLayout(w.low ? w.low.mem() : w.value.mem(), l.bwd_data_weights_md,
                                     w_temp, l.spec.name, "ReorderWeights");
    Tensor diff_src(storage_, kActivations, l.bwd_diff_src_md, engine_);
    Execute(l.op_bwd_data, l.bwd_data,
            {{DNNL_ARG_DIFF_DST, diff},
             {DNNL_ARG_WEIGHTS, weights},
             {DNNL_ARG_DIFF_SRC, diff_src.mem()}});
    l.diff.Reset();
    AddGradient(l.spec.inputs[0], std::move(diff_src), l.spec.name);
  }

  void RunBackward(int index) {
    Layer& l = layers_[index];
    const LayerSpec& s = l.spec;
    const int producer = s.inputs[0];
    if (s.kind == LayerKind::kSoftmaxCrossEntropy) {
      Tensor diff(storage_, kActivations, l.out_md, engine_);
      {
        OPSCOPE_SCOPE_DYN(l.op_bwd.name(), ArgsOf(l.op_bwd));
        const int64_t n = l.out_dims[0], k = l.out_dims[1];
        const float scale = 1.f / static_cast<float>(n);
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < k; ++j) {
            diff.f32()[i * k + j] =
                (l.out.f32()[i * k + j] - (j == labels_[i] ? 1.f : 0.f)) * scale;
          }
        }
      }
      AddGradient(producer, std::move(diff), s.name);
      return;
    }
    if (!l.diff) return;  // nothing downstream depends on this layer
    // Read only by the kinds whose backward needs their input (the plan kept it).
    const auto in = [&]() -> const memory& { return InputMem(index, 0); };
    switch (s.kind) {
      case LayerKind::kConv: {
        Tensor diff_temp;
        const memory& diff = InLayout(l.diff.mem(), l.bwd_diff_dst_md, diff_temp, s.name);
        Tensor src_temp;
        const memory& src =
            InLayout(l.src_copy ? l.src_copy.mem() : in(), l.bwd_src_md, src_temp, s.name);
        WeightedBackward(l, src, diff, {});
        break;
      }
      case LayerKind::kBatchNorm: {
        Tensor diff_temp;
        const memory& diff = InLayout(l.diff.mem(), l.bwd_diff_dst_md, diff_temp, s.name);
        Tensor diff_src(storage_, kActivations, l.bwd_diff_src_md, engine_);
        Args args{{DNNL_ARG_SRC, in()},
                  {DNNL_ARG_MEAN, l.mean.mem()},
                  {DNNL_ARG_VARIANCE, l.var.mem()},
                  {DNNL_ARG_DIFF_DST, diff},
                  {DNNL_ARG_SCALE, l.params[0].value.mem()},
                  {DNNL_ARG_SHIFT, l.params[1].value.mem()},
                  {DNNL_ARG_DIFF_SRC, diff_src.mem()},
                  {DNNL_ARG_DIFF_SCALE, l.params[0].grad.mem()},
                  {DNNL_ARG_DIFF_SHIFT, l.params[1].grad.mem()}};
        if (s.relu) args[DNNL_ARG_WORKSPACE] = l.workspace.mem();
        Execute(l.op_bwd, l.bwd_data, std::move(args));
        l.diff.Reset();
        if (l.needs_input_gradient) AddGradient(producer, std::move(diff_src), s.name);
        break;
      }
      case LayerKind::kRelu: {
        Tensor diff_src(storage_, kActivations, l.bwd_diff_src_md, engine_);
        Execute(l.op_bwd, l.bwd_data,
                {{DNNL_ARG_DST, l.out.mem()},
                 {DNNL_ARG_DIFF_DST, l.diff.mem()},
                 {DNNL_ARG_DIFF_SRC, diff_src.mem()}});
        l.diff.Reset();
        if (l.needs_input_gradient) AddGradient(producer, std::move(diff_src), s.name);
        break;
      }
      case LayerKind::kMaxPool:
      case LayerKind::kGlobalAvgPool: {
        if (!l.needs_input_gradient) break;
        Tensor diff_temp;
        const memory& diff = InLayout(l.diff.mem(), l.bwd_diff_dst_md, diff_temp, s.name);
        Tensor diff_src(storage_, kActivations, l.bwd_diff_src_md, engine_);
        Args args{{DNNL_ARG_DIFF_DST, diff}, {DNNL_ARG_DIFF_SRC, diff_src.mem()}};
        if (l.workspace) args[DNNL_ARG_WORKSPACE] = l.workspace.mem();
        Execute(l.op_bwd, l.bwd_data, std::move(args));
        l.diff.Reset();
        AddGradient(producer, std::move(diff_src), s.name);
        break;
      }
      case LayerKind::kLinear: {
        Tensor diff_temp;
        const memory& diff = InLayout(l.diff.mem(), l.bwd_diff_dst_md, diff_temp, s.name);
        WeightedBackward(l, in(), diff, {{DNNL_ARG_DIFF_BIAS, l.params[1].grad.mem()}});
        break;
      }
      case LayerKind::kAdd: {
        Tensor grad;
        if (s.relu) {
          grad = Tensor(storage_, kActivations, l.out_md, engine_);
          Execute(l.op_bwd, l.relu_bwd,
                  {{DNNL_ARG_DST, l.out.mem()},
                   {DNNL_ARG_DIFF_DST, l.diff.mem()},
                   {DNNL_ARG_DIFF_SRC, grad.mem()}});
          l.diff.Reset();
        } else {
          grad = std::move(l.diff);
        }
        // Both inputs receive the same gradient: a copy for the second.
        const int second = s.inputs[1];
        if (second >= 0 || options_.input_gradient) {
          Tensor copy(storage_, kActivations, l.out_md, engine_);
          Reorder(grad.mem(), copy.mem(), s.name, "Copy");
          AddGradient(second, std::move(copy), s.name);
        }
        AddGradient(producer, std::move(grad), s.name);
        break;
      }
      case LayerKind::kSoftmaxCrossEntropy: break;
    }
  }

  void ReleaseIteration() {
    for (auto& l : layers_) {
      l.out.Reset(), l.src_copy.Reset(), l.mean.Reset(), l.var.Reset();
      l.workspace.Reset(), l.diff.Reset();
    }
    scratchpad_.Reset();
    input_gradient_.Reset();
    backward_done_ = false;
  }

  Storage storage_;
  dnnl::engine& engine_;
  dnnl::stream& stream_;
  NetworkSpec spec_;
  NetworkOptions options_;
  NetworkPlan plan_;
  Dt dt_;
  dnnl::primitive_attr attr_;
  memory::desc input_md_;
  std::vector<Layer> layers_;
  size_t scratchpad_bytes_ = 0;
  Tensor scratchpad_, input_gradient_;
  memory input_;
  Op sgd_op_;
  const float* images_ = nullptr;
  const int32_t* labels_ = nullptr;
  float loss_ = 0;
  bool backward_done_ = false;
  mutable std::vector<std::tuple<memory::desc, memory::desc, dnnl::reorder>> reorder_cache_;
  mutable int64_t conversions_ = 0;
};

}  // namespace

std::unique_ptr<Network> CreateOnednnNetwork(Device& device, dnnl::engine& engine,
                                             dnnl::stream& stream, const NetworkSpec& spec,
                                             const NetworkOptions& options) {
  try {
    return std::make_unique<OnednnNetwork>(device, engine, stream, spec, options);
  } catch (const dnnl::error& e) {
    throw Error(ErrorCode::kUnsupported,
                std::string("oneDNN cannot build the network: ") + e.what());
  }
}

}  // namespace cpu
}  // namespace opscope::devices
