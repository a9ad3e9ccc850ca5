#include "devices/network_plan.h"

#include <fmt/format.h>

#include <cmath>

namespace opscope::devices {
namespace {

std::string DimsText(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

int64_t ElementBytes(DType dtype) { return dtype == DType::kBF16 ? 2 : 4; }

Error Bad(const LayerSpec& s, const std::string& what) {
  return Error(ErrorCode::kInvalidArgument, s.name + ": " + what);
}

// The weights' dims of a convolution or linear layer.
Dims WeightDims(const LayerPlan& l) { return l.params.empty() ? Dims{} : l.params.front().dims; }

// The operator names of a layer in each phase.
std::string OpName(const LayerPlan& l, OpPhase phase) {
  const LayerSpec& s = l.spec;
  std::string base = Name(s.kind);
  if ((s.kind == LayerKind::kBatchNorm || s.kind == LayerKind::kAdd) && s.relu) base += "+ReLU";
  const bool weighted = s.kind == LayerKind::kConv || s.kind == LayerKind::kLinear;
  switch (phase) {
    case OpPhase::kForward: return base;
    case OpPhase::kBackward: return base + (weighted ? "BackwardWeights" : "Backward");
    case OpPhase::kBackwardData: return base + "BackwardData";
  }
  return base;
}

std::vector<Dims> OpInputs(const LayerPlan& l, OpPhase phase) {
  const Dims& in = l.inputs[0];
  switch (l.spec.kind) {
    case LayerKind::kConv:
    case LayerKind::kLinear:
      if (phase == OpPhase::kForward) return {in, WeightDims(l)};
      if (phase == OpPhase::kBackward) return {in, l.out_dims};
      return {l.out_dims, WeightDims(l)};
    case LayerKind::kBatchNorm:
    case LayerKind::kRelu:
      return phase == OpPhase::kForward ? std::vector<Dims>{in} : std::vector<Dims>{in, in};
    case LayerKind::kMaxPool:
    case LayerKind::kGlobalAvgPool:
      return phase == OpPhase::kForward ? std::vector<Dims>{in} : std::vector<Dims>{l.out_dims};
    case LayerKind::kAdd: return phase == OpPhase::kForward ? l.inputs : std::vector<Dims>{in};
    case LayerKind::kSoftmaxCrossEntropy: return {in};
  }
  return {in};
}

TracedOp MakeOp(const LayerPlan& l, OpPhase phase, const NetworkOptions& options) {
  const LayerCost cost = CostOf(l, phase, options.dtype, options.training);
  return TracedOp{OpName(l, phase),    ShapesText(OpInputs(l, phase)),
                  Name(options.dtype), l.spec.name,
                  cost.flops,          cost.bytes};
}

// Shapes and parameters of one layer, from its inputs' dims.
void PlanLayer(LayerPlan& l) {
  const LayerSpec& s = l.spec;
  const Dims& in = l.inputs[0];
  if (s.kind != LayerKind::kLinear && s.kind != LayerKind::kSoftmaxCrossEntropy && in.size() != 4) {
    throw Bad(s, "expects an N x C x H x W input, not " + DimsText(in));
  }
  switch (s.kind) {
    case LayerKind::kConv: {
      const int64_t n = in[0], c = in[1], h = in[2], w = in[3], o = s.channels, k = s.kernel;
      if (o < 1 || k < 1 || s.stride < 1 || s.pad < 0) throw Bad(s, "invalid convolution shape");
      const int64_t oh = (h + 2 * s.pad - k) / s.stride + 1,
                    ow = (w + 2 * s.pad - k) / s.stride + 1;
      if (h + 2 * s.pad < k || w + 2 * s.pad < k || oh < 1 || ow < 1) {
        throw Bad(s, "the kernel is larger than the padded input: invalid convolution shape");
      }
      l.out_dims = {n, o, oh, ow};
      // He initialisation as torchvision: normal(0, sqrt(2 / fan_out)), fan_out = O*k*k.
      l.params.push_back({ParamKind::kWeight,
                          {o, c, k, k},
                          true,
                          InitKind::kNormal,
                          std::sqrt(2.f / static_cast<float>(o * k * k))});
      break;
    }
    case LayerKind::kBatchNorm: {
      l.out_dims = in;
      const Dims cd{in[1]};
      l.params.push_back({ParamKind::kScale, cd, true, InitKind::kConstant, 1.f});
      l.params.push_back({ParamKind::kShift, cd, true, InitKind::kConstant, 0.f});
      l.params.push_back({ParamKind::kRunningMean, cd, false, InitKind::kConstant, 0.f});
      l.params.push_back({ParamKind::kRunningVar, cd, false, InitKind::kConstant, 1.f});
      break;
    }
    case LayerKind::kRelu: l.out_dims = in; break;
    case LayerKind::kMaxPool:
    case LayerKind::kGlobalAvgPool: {
      const bool max = s.kind == LayerKind::kMaxPool;
      const int64_t h = in[2], w = in[3];
      const int64_t kh = max ? s.kernel : h, kw = max ? s.kernel : w;
      const int64_t stride = max ? s.stride : 1, pad = max ? s.pad : 0;
      if (kh < 1 || stride < 1 || pad < 0 || h + 2 * pad < kh || w + 2 * pad < kw) {
        throw Bad(s, "invalid pooling shape");
      }
      l.out_dims = {in[0], in[1], (h + 2 * pad - kh) / stride + 1, (w + 2 * pad - kw) / stride + 1};
      break;
    }
    case LayerKind::kLinear: {
      const int64_t n = in[0], features = Elements(in) / n, o = s.channels;
      if (o < 1) throw Bad(s, "no output features");
      if (in.size() == 4 && (in[2] != 1 || in[3] != 1)) {
        throw Bad(s, "a linear layer reads N x C or N x C x 1 x 1, not " + DimsText(in));
      }
      if (in.size() != 2 && in.size() != 4) throw Bad(s, "a linear layer reads N x C");
      l.out_dims = {n, o};
      // torch.nn.Linear's default: uniform(-1/sqrt(in), 1/sqrt(in)) for both.
      const float bound = 1.f / std::sqrt(static_cast<float>(features));
      l.params.push_back({ParamKind::kWeight, {o, features}, true, InitKind::kUniform, bound});
      l.params.push_back({ParamKind::kBias, {o}, true, InitKind::kUniform, bound});
      break;
    }
    case LayerKind::kAdd:
      if (l.inputs[1] != in) {
        throw Bad(s, "adds " + DimsText(in) + " and " + DimsText(l.inputs[1]));
      }
      l.out_dims = in;
      break;
    case LayerKind::kSoftmaxCrossEntropy:
      if (in.size() != 2) throw Bad(s, "the loss reads N x classes logits, not " + DimsText(in));
      l.out_dims = in;
      break;
  }
}

}  // namespace

int64_t Elements(const Dims& dims) {
  int64_t n = 1;
  for (const int64_t d : dims) n *= d;
  return n;
}

std::string ShapesText(const std::vector<Dims>& inputs) {
  std::string s = "[";
  for (size_t i = 0; i < inputs.size(); ++i) s += (i ? "," : "") + DimsText(inputs[i]);
  return s + "]";
}

ScopeArgs TracedOp::Args(std::string_view layout) const {
  return ScopeArgs{.shapes = shapes,
                   .dtype = dtype,
                   .flops = flops,
                   .bytes = bytes,
                   .category = "cpu_op",
                   .layout = layout,
                   .module = module};
}

const Dims& NetworkPlan::InputDims(int layer, int which) const {
  const int in = layers[layer].spec.inputs[which];
  return in < 0 ? input_dims : layers[in].out_dims;
}

LayerCost CostOf(const LayerPlan& l, OpPhase phase, DType dtype, bool training) {
  const int64_t es = ElementBytes(dtype);
  const Dims& in = l.inputs[0];
  const int64_t in_e = Elements(in), out_e = Elements(l.out_dims);
  const bool fwd = phase == OpPhase::kForward;
  switch (l.spec.kind) {
    case LayerKind::kConv: {
      const Dims w = WeightDims(l);  // O, C, k, k
      const int64_t w_e = Elements(w);
      const int64_t flops = 2 * out_e * w[1] * w[2] * w[3];  // 2 N Cout Hout Wout Cin kh kw
      // Backward weights reads input and d(output) and writes fp32 weight gradients.
      if (phase == OpPhase::kBackward) return {flops, es * (in_e + out_e) + 4 * w_e};
      return {flops, es * (in_e + w_e + out_e)};
    }
    case LayerKind::kLinear: {
      const int64_t n = in[0], features = in_e / n, o = l.spec.channels;
      return {2 * n * features * o, es * (n * features + o * features + n * o)};
    }
    case LayerKind::kBatchNorm: {
      const int64_t relu = l.spec.relu ? in_e : 0;
      // Forward: statistics (training: mean and variance, 2 per element) and
      // normalisation (2 per element); reads the input, writes the output.
      if (fwd) return {(training ? 4 : 2) * in_e + relu, 2 * es * in_e};
      return {5 * in_e + relu, 3 * es * in_e};
    }
    case LayerKind::kRelu: return {in_e, (fwd ? 2 : 3) * es * in_e};
    case LayerKind::kMaxPool: {
      const int64_t window = l.spec.kernel * l.spec.kernel;
      return {fwd ? out_e * window : out_e, es * (in_e + out_e)};
    }
    case LayerKind::kGlobalAvgPool: return {in_e, es * (in_e + out_e)};
    case LayerKind::kAdd:
      if (fwd) return {l.spec.relu ? 2 * in_e : in_e, 3 * es * in_e};
      return {l.spec.relu ? in_e : 0, 3 * es * in_e};
    case LayerKind::kSoftmaxCrossEntropy:
      // Logits in, fp32 probabilities out; backward: probabilities - one-hot.
      if (fwd) return {4 * in_e, es * in_e + 4 * in_e};
      return {2 * in_e, 8 * in_e};
  }
  return {};
}

std::vector<float> InitialValues(const ParamPlan& p, std::mt19937_64& rng) {
  std::vector<float> v(static_cast<size_t>(Elements(p.dims)), p.init_value);
  if (p.init == InitKind::kNormal) {
    std::normal_distribution<float> d(0.f, p.init_value);
    for (auto& x : v) x = d(rng);
  } else if (p.init == InitKind::kUniform) {
    std::uniform_real_distribution<float> d(-p.init_value, p.init_value);
    for (auto& x : v) x = d(rng);
  }
  return v;
}

NetworkPlan PlanNetwork(const NetworkSpec& spec, const NetworkOptions& options) {
  ValidateNetworkSpec(spec);
  NetworkPlan plan;
  plan.spec = spec;
  plan.options = options;
  plan.input_dims = {spec.batch, spec.channels, spec.height, spec.width};
  plan.layers.resize(spec.layers.size());
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    LayerPlan& l = plan.layers[i];
    l.spec = spec.layers[i];
    for (size_t k = 0; k < l.spec.inputs.size(); ++k) {
      const int in = l.spec.inputs[k];
      l.inputs.push_back(plan.InputDims(static_cast<int>(i), static_cast<int>(k)));
      if (in >= 0) plan.layers[in].consumers.push_back(static_cast<int>(i));
    }
    PlanLayer(l);
    // Backward data is needed unless the input is the network's and nobody asked for it.
    l.needs_input_gradient = options.training && (l.spec.inputs[0] >= 0 || options.input_gradient);
    l.forward = MakeOp(l, OpPhase::kForward, options);
    if (options.training) {
      const bool weighted = l.spec.kind == LayerKind::kConv || l.spec.kind == LayerKind::kLinear;
      l.backward = MakeOp(l, OpPhase::kBackward, options);
      if (weighted && l.needs_input_gradient) {
        l.backward_data = MakeOp(l, OpPhase::kBackwardData, options);
      }
    }
    for (const ParamPlan& p : l.params) {
      if (p.trainable) plan.parameter_count += Elements(p.dims);
    }
  }
  // Which outputs the backward pass reads: its own (ReLU, add with ReLU, the
  // loss's probabilities) or its consumers' (convolution, batch norm and linear
  // read their input; pooling reads its workspace; an add reads nothing). The
  // network's output is always held.
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    LayerPlan& l = plan.layers[i];
    if (i + 1 == plan.layers.size()) {
      l.keep_output = true;
      continue;
    }
    if (!options.training) continue;
    const LayerKind k = l.spec.kind;
    l.keep_output = k == LayerKind::kRelu || (k == LayerKind::kAdd && l.spec.relu) ||
                    k == LayerKind::kSoftmaxCrossEntropy;
    for (const int c : l.consumers) {
      const LayerKind ck = plan.layers[c].spec.kind;
      l.keep_output |=
          ck == LayerKind::kConv || ck == LayerKind::kBatchNorm || ck == LayerKind::kLinear;
    }
  }
  // SGD with momentum on the fp32 master weights reads weight, gradient and
  // momentum and writes weight and momentum: 4 FLOPs and 5 fp32 values per
  // trainable element.
  plan.optimizer = TracedOp{"SGD",
                            "",
                            Name(DType::kF32),
                            "optimizer",
                            4 * plan.parameter_count,
                            5 * 4 * plan.parameter_count};
  return plan;
}

}  // namespace opscope::devices
