// A network planned once, for every backend: the graph (who consumes whom),
// every shape, which outputs the backward pass needs, each parameter and how
// it is initialised, and every traced operator with its name, shapes, dtype,
// module, FLOPs and bytes (CostOf, the one cost model). A backend builds its
// own primitives for each layer of the plan and opens the plan's scopes around
// them, so traces of the same network on any backend carry the same operators
// with the same figures; only the memory layout is the backend's own.
#ifndef OPSCOPE_DEVICES_NETWORK_PLAN_H_
#define OPSCOPE_DEVICES_NETWORK_PLAN_H_

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "devices/network.h"
#include "opscope/opscope.h"

namespace opscope::devices {

using Dims = std::vector<int64_t>;

// One traced operator: the scope a backend opens around the work.
struct TracedOp {
  std::string name;    // "Conv2D", "BatchNorm+ReLUBackward"; empty: no such operator
  std::string shapes;  // its inputs, "[[8,64,56,56],[64,64,3,3]]"
  std::string dtype;   // the network's: "fp32", "bf16", "tf32"
  std::string module;  // "layer1.0.conv1"; "optimizer" for SGD
  int64_t flops = -1, bytes = -1;
  bool empty() const { return name.empty(); }
  // The scope's arguments, with the backend's memory layout of the output
  // ("nChw16c", "nchw"); the strings must outlive the scope.
  ScopeArgs Args(std::string_view layout) const;
};

enum class InitKind : uint8_t { kConstant, kNormal, kUniform };

struct ParamPlan {
  ParamKind kind;
  Dims dims;  // plain: conv OIHW, linear [out][in], batch norm [C]
  bool trainable = true;
  InitKind init = InitKind::kConstant;
  float init_value = 0;  // the constant, the normal's stddev or the uniform's bound
};

enum class OpPhase : uint8_t { kForward, kBackward, kBackwardData };

struct LayerPlan {
  LayerSpec spec;
  std::vector<Dims> inputs;  // the dims of each input
  Dims out_dims;
  std::vector<int> consumers;
  bool needs_input_gradient = false;  // backward computes d(input) for a producer or the caller
  bool keep_output = false;           // held after Forward for the backward pass (or the caller)
  std::vector<ParamPlan> params;      // in the order backends create (and initialise) them
  TracedOp forward;
  // Training: the backward of a layer without weights, or the weights'
  // gradient of a convolution or linear layer (whose d(input) is backward_data).
  TracedOp backward;
  TracedOp backward_data;
};

struct NetworkPlan {
  NetworkSpec spec;
  NetworkOptions options;
  Dims input_dims;  // N x C x H x W
  std::vector<LayerPlan> layers;
  TracedOp optimizer;           // one SGD step over every trainable parameter
  int64_t parameter_count = 0;  // trainable elements

  const Dims& InputDims(int layer, int which) const;
};

// Validates the spec (ValidateNetworkSpec), infers every shape and plans the
// layers; throws Error(kInvalidArgument) naming a layer whose shapes do not work.
NetworkPlan PlanNetwork(const NetworkSpec& spec, const NetworkOptions& options);

struct LayerCost {
  int64_t flops = 0, bytes = 0;
};
// FLOPs and bytes (read plus written, in the network's element size; fp32 for
// parameter gradients and the loss's probabilities) of one operator of a layer.
LayerCost CostOf(const LayerPlan& layer, OpPhase phase, DType dtype, bool training);

// A parameter's initial values as torchvision initialises them, drawn from
// `rng`: call for every parameter in plan order with one rng seeded with
// options.seed, and every backend starts from the same weights.
std::vector<float> InitialValues(const ParamPlan& param, std::mt19937_64& rng);

int64_t Elements(const Dims& dims);
// "[[8,3,224,224],[64,3,7,7]]"
std::string ShapesText(const std::vector<Dims>& inputs);

}  // namespace opscope::devices

#endif  // OPSCOPE_DEVICES_NETWORK_PLAN_H_
