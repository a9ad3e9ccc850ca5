// An independent, naive double-precision implementation of the layers a
// NetworkSpec describes, written from their definitions (as torch documents
// them) with plain loops and NCHW arrays. The tests compare the device's
// network against it: forward outputs, and backward gradients against its
// finite differences.
#ifndef OPSCOPE_TESTS_BENCH_REFERENCE_NET_H_
#define OPSCOPE_TESTS_BENCH_REFERENCE_NET_H_

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "devices/network.h"

namespace opscope::testing {

struct RefTensor {
  std::vector<int64_t> dims;
  std::vector<double> v;
};

// Parameters by (layer, kind), plain layouts as Network::ReadParameter gives them.
using RefParams = std::map<std::pair<int, devices::ParamKind>, std::vector<double>>;

struct RefResult {
  std::vector<RefTensor> outputs;  // per layer
  double loss = 0;                 // when the network ends in a loss
};

// Training-mode batch norm uses the batch statistics (biased variance), as
// torch.nn.BatchNorm2d in train(); eval mode uses the running statistics.
RefResult ReferenceForward(const devices::NetworkSpec& spec, const RefParams& params,
                           const std::vector<double>& input, const std::vector<int32_t>& labels,
                           bool training, double bn_epsilon = 1e-5);

}  // namespace opscope::testing

#endif  // OPSCOPE_TESTS_BENCH_REFERENCE_NET_H_
