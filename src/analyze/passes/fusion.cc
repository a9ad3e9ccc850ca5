#include "analyze/passes/fusion.h"

#include <algorithm>
#include <map>

#include "analyze/analysis.h"
#include "analyze/names.h"

namespace opscope::analyze {

std::vector<FusionCandidate> ComputeFusionCandidates(const TraceModel& model) {
  const auto heavy_name = [](std::string_view name) {
    const std::string n = Lower(name);
    return Contains(n, "gemm") || Contains(n, "matmul") || Contains(n, "conv") ||
           Contains(n, "aten::mm") || Contains(n, "aten::addmm") || Contains(n, "aten::linear") ||
           Contains(n, "aten::bmm");
  };
  const auto elementwise_name = [](std::string_view name) {
    const std::string n = Lower(name);
    return Contains(n, "relu") || Contains(n, "gelu") || Contains(n, "silu") ||
           Contains(n, "sigmoid") || Contains(n, "tanh") || Contains(n, "add") ||
           Contains(n, "mul") || Contains(n, "bias") || Contains(n, "batch_norm") ||
           Contains(n, "batchnorm") || Contains(n, "elementwise");
  };
  // Each distinct name is classified once.
  const std::vector<bool> heavy = ClassifyNames(model, +heavy_name);
  const std::vector<bool> elementwise = ClassifyNames(model, +elementwise_name);
  // Kernels per device track, and host operators per thread, in time order.
  std::map<std::pair<uint32_t, bool>, std::vector<size_t>> lanes;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] == EventClass::kKernel || model.cls[e] == EventClass::kHostOp) {
      lanes[{model.track[e], model.cls[e] == EventClass::kKernel}].push_back(e);
    }
  }
  std::map<std::pair<std::string, std::string>, FusionCandidate> found;
  for (auto& [lane, events] : lanes) {
    std::sort(events.begin(), events.end(),
              [&](size_t a, size_t b) { return model.start_ns[a] < model.start_ns[b]; });
    for (size_t k = 1; k < events.size(); ++k) {
      const size_t a = events[k - 1], b = events[k];
      const int64_t gap = model.start_ns[b] - (model.start_ns[a] + model.duration_ns[a]);
      if (gap < 0 || gap > 5000) continue;  // nested or not back to back
      if (!heavy[model.name[a]] || heavy[model.name[b]] || !elementwise[model.name[b]]) continue;
      auto& c = found[{std::string(model.String(model.name[a])),
                       std::string(model.String(model.name[b]))}];
      c.producer = std::string(model.String(model.name[a]));
      c.consumer = std::string(model.String(model.name[b]));
      ++c.count;
      c.consumer_ns += model.duration_ns[b];
    }
  }
  std::vector<FusionCandidate> out;
  for (auto& [key, c] : found) {
    if (c.count >= 3) out.push_back(c);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.consumer_ns > b.consumer_ns; });
  if (out.size() > 10) out.resize(10);
  return out;
}

Pass FusionPass() {
  return {"fusion",
          "Which producer-consumer pairs could be fused?",
          {},
          [](const TraceModel& model, Analysis& a) { a.fusion = ComputeFusionCandidates(model); }};
}

}  // namespace opscope::analyze
