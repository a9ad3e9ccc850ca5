#include "devices/network.h"

#include <fmt/format.h>

#include "opscope/opscope.h"

namespace opscope::devices {

const char* Name(LayerKind kind) {
  switch (kind) {
    case LayerKind::kConv: return "Conv2D";
    case LayerKind::kBatchNorm: return "BatchNorm";
    case LayerKind::kRelu: return "ReLU";
    case LayerKind::kMaxPool: return "MaxPool";
    case LayerKind::kGlobalAvgPool: return "GlobalAvgPool";
    case LayerKind::kLinear: return "Linear";
    case LayerKind::kAdd: return "Add";
    case LayerKind::kSoftmaxCrossEntropy: return "SoftmaxCrossEntropy";
  }
  return "?";
}

const char* Name(Layout layout) {
  switch (layout) {
    case Layout::kBlocked: return "blocked";
    case Layout::kNchw: return "nchw";
    case Layout::kNhwc: return "nhwc";
  }
  return "?";
}

void ValidateNetworkSpec(const NetworkSpec& spec) {
  if (spec.batch < 1 || spec.channels < 1 || spec.height < 1 || spec.width < 1) {
    throw Error(ErrorCode::kInvalidArgument, "the network input must have positive dimensions");
  }
  if (spec.layers.empty()) throw Error(ErrorCode::kInvalidArgument, "a network needs layers");
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec& l = spec.layers[i];
    const size_t arity = l.kind == LayerKind::kAdd ? 2 : 1;
    if (l.inputs.size() != arity) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("layer {} ({}) takes {} input(s), not {}", i, l.name, arity,
                              l.inputs.size()));
    }
    for (const int in : l.inputs) {
      if (in < -1 || in >= static_cast<int>(i)) {
        throw Error(ErrorCode::kInvalidArgument,
                    fmt::format("layer {} ({}) reads layer {}, which does not run before it", i,
                                l.name, in));
      }
    }
    if (l.kind == LayerKind::kSoftmaxCrossEntropy && i + 1 != spec.layers.size()) {
      throw Error(ErrorCode::kInvalidArgument, "the loss must be the last layer");
    }
  }
}

}  // namespace opscope::devices
