// Fusion candidates: the pass, its table and its rule.
#include "analyze/passes/fusion.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "analyze/analysis.h"
#include "analyze/links.h"
#include "analyze/names.h"

namespace opscope::analyze {
namespace {

enum class Producer { kNone, kMatmul, kLinear, kConv };

Producer ProducerOf(std::string_view name) {
  const std::string_view fn = FunctionOf(name);
  const std::string_view ns = NamespaceOf(name);
  if (ns != "aten") return Producer::kNone;
  if (fn == "mm" || fn == "addmm" || fn == "bmm" || fn == "matmul" || fn == "baddbmm")
    return Producer::kMatmul;
  if (fn == "linear") return Producer::kLinear;
  if (fn == "conv1d" || fn == "conv2d" || fn == "conv3d" || fn == "convolution" ||
      fn == "_convolution" || fn == "cudnn_convolution" || fn == "mkldnn_convolution" ||
      fn == "miopen_convolution")
    return Producer::kConv;
  return Producer::kNone;
}

bool IsElementwise(std::string_view name) {
  if (NamespaceOf(name) != "aten") return false;
  std::string_view fn = FunctionOf(name);
  if (fn.ends_with("_") && fn.size() > 1) fn.remove_suffix(1);  // in-place variants
  for (const std::string_view op :
       {"relu", "gelu", "silu", "sigmoid", "tanh", "add", "mul", "sub", "div", "hardtanh",
        "leaky_relu", "batch_norm", "layer_norm", "dropout", "elu", "hardswish", "clamp"}) {
    if (fn == op) return true;
  }
  return false;
}

// The output shape of a producer from its input shapes, when it can be told.
std::optional<std::vector<int64_t>> OutputShape(Producer p, std::string_view fn,
                                                const std::vector<std::vector<int64_t>>& in) {
  const auto matmul = [](const std::vector<int64_t>& a,
                         const std::vector<int64_t>& b) -> std::optional<std::vector<int64_t>> {
    if (a.size() < 2 || b.size() < 2 || a.back() != b[b.size() - 2]) return std::nullopt;
    std::vector<int64_t> out(a.begin(), a.end() - 1);
    out.push_back(b.back());
    return out;
  };
  switch (p) {
    case Producer::kMatmul:
      if ((fn == "addmm" || fn == "baddbmm") && in.size() >= 3) return matmul(in[1], in[2]);
      if (in.size() >= 2) return matmul(in[0], in[1]);
      return std::nullopt;
    case Producer::kLinear:
      if (in.size() >= 2 && !in[0].empty() && in[1].size() == 2 && in[0].back() == in[1][1]) {
        std::vector<int64_t> out(in[0].begin(), in[0].end() - 1);
        out.push_back(in[1][0]);
        return out;
      }
      return std::nullopt;
    case Producer::kConv:
      // Batch and output channels; the spatial size depends on arguments not
      // always recorded, so it is matched loosely (same rank).
      if (in.size() >= 2 && in[0].size() >= 3 && in[1].size() == in[0].size()) {
        std::vector<int64_t> out = in[0];
        out[1] = in[1][0];
        for (size_t k = 2; k < out.size(); ++k) out[k] = -1;  // any
        return out;
      }
      return std::nullopt;
    case Producer::kNone: break;
  }
  return std::nullopt;
}

bool ShapeMatches(const std::vector<int64_t>& want, const std::vector<int64_t>& got) {
  if (want.size() != got.size() || want.empty()) return false;
  for (size_t k = 0; k < want.size(); ++k) {
    if (want[k] >= 0 && want[k] != got[k]) return false;
  }
  return true;
}

std::string ShapeText(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out + "]";
}

}  // namespace

std::vector<std::vector<int64_t>> ParseShapes(std::string_view json) {
  std::vector<std::vector<int64_t>> out;
  int depth = 0;
  bool in_number = false, negative = false;
  int64_t value = 0;
  const auto flush = [&] {
    if (in_number && !out.empty()) out.back().push_back(negative ? -value : value);
    in_number = negative = false;
    value = 0;
  };
  for (const char c : json) {
    if (c == '[') {
      ++depth;
      if (depth == 2) out.emplace_back();
      if (depth > 2) return {};  // nested lists (TensorList arguments): not a shape list
    } else if (c == ']') {
      flush();
      --depth;
    } else if (c >= '0' && c <= '9') {
      if (depth != 2) return {};
      in_number = true;
      if (value > (INT64_MAX - 9) / 10) return {};
      value = value * 10 + (c - '0');
    } else if (c == '-') {
      negative = true;
    } else if (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      flush();  // Kineto writes them compact or indented
    } else {
      return {};
    }
  }
  return depth == 0 ? out : std::vector<std::vector<int64_t>>{};
}

std::vector<std::string> ParseTypes(std::string_view json) {
  std::vector<std::string> out;
  size_t i = 0;
  while ((i = json.find('"', i)) != std::string_view::npos) {
    const size_t end = json.find('"', i + 1);
    if (end == std::string_view::npos) break;
    out.emplace_back(json.substr(i + 1, end - i - 1));
    i = end + 1;
  }
  return out;
}

std::vector<FusionCandidate> ComputeFusionCandidates(const TraceModel& model) {
  return ComputeFusionCandidates(model, LinkEvents(model));
}

std::vector<FusionCandidate> ComputeFusionCandidates(const TraceModel& model,
                                                     const EventLinks& links) {
  // Without recorded shapes no pair can be shown to pass data: nothing to scan.
  bool shapes = false;
  for (size_t e = 0; e < model.size() && !shapes; ++e) {
    shapes =
        model.cls[e] == EventClass::kHostOp && (model.input_dims[e] != 0 || model.shapes[e] != 0);
  }
  if (!shapes) return {};
  // Host operators by (track, parent), in start order; a producer's consumer is
  // the next one.
  // One array sorted by (track, parent, start): each run of equal (track,
  // parent) is a list of siblings (no list per parent: millions of operators).
  MappedVector<uint32_t> ops_by_parent;
  ops_by_parent.reserve(
      static_cast<size_t>(std::count(model.cls.begin(), model.cls.end(), EventClass::kHostOp)));
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] == EventClass::kHostOp) ops_by_parent.push_back(static_cast<uint32_t>(e));
  }
  const auto sibling_key = [&](uint32_t e) { return std::pair(model.track[e], links.parent[e]); };
  std::sort(ops_by_parent.begin(), ops_by_parent.end(), [&](uint32_t a, uint32_t b) {
    const auto ka = sibling_key(a), kb = sibling_key(b);
    if (ka != kb) return ka < kb;
    if (model.start_ns[a] != model.start_ns[b]) return model.start_ns[a] < model.start_ns[b];
    return a < b;
  });
  const auto shapes_of = [&](size_t e) {
    const uint32_t id = model.input_dims[e] ? model.input_dims[e] : model.shapes[e];
    return id ? ParseShapes(model.String(id)) : std::vector<std::vector<int64_t>>{};
  };
  const auto types_of = [&](size_t e) {
    if (model.input_type[e]) return ParseTypes(model.String(model.input_type[e]));
    return std::vector<std::string>();
  };
  // Names are classified once each, not once per event.
  std::vector<int8_t> producer_of(model.string_count(), -1), elementwise(model.string_count(), -1);
  const auto producer_kind = [&](uint32_t id) {
    if (producer_of[id] < 0) producer_of[id] = static_cast<int8_t>(ProducerOf(model.String(id)));
    return static_cast<Producer>(producer_of[id]);
  };
  const auto is_elementwise = [&](uint32_t id) {
    if (elementwise[id] < 0) elementwise[id] = IsElementwise(model.String(id)) ? 1 : 0;
    return elementwise[id] == 1;
  };
  std::map<std::tuple<std::string, std::string, std::string>, FusionCandidate> found;
  std::vector<std::pair<FusionCandidate*, uint32_t>> matched;  // (candidate, consumer event)
  for (size_t k = 0; k + 1 < ops_by_parent.size(); ++k) {
    const uint32_t a = ops_by_parent[k], b = ops_by_parent[k + 1];
    if (sibling_key(a) != sibling_key(b)) continue;  // the last of its siblings
    const Producer kind = producer_kind(model.name[a]);
    if (kind == Producer::kNone) continue;
    if (!is_elementwise(model.name[b])) continue;
    const std::string_view producer = model.String(model.name[a]);
    const std::string_view consumer = model.String(model.name[b]);
    const auto out = OutputShape(kind, FunctionOf(producer), shapes_of(a));
    if (!out) continue;
    const auto in = shapes_of(b);
    const auto producer_types = types_of(a), consumer_types = types_of(b);
    bool matches = false;
    for (size_t i = 0; i < std::min<size_t>(in.size(), 2) && !matches; ++i) {
      if (!ShapeMatches(*out, in[i])) continue;
      // The element types must agree where both are recorded.
      const std::string& want = producer_types.empty() ? "" : producer_types[0];
      const std::string& got = i < consumer_types.size() ? consumer_types[i] : "";
      matches = want.empty() || got.empty() || want == got;
    }
    if (!matches) continue;
    auto& c = found[{std::string(producer), std::string(consumer), ShapeText(in[0])}];
    c.producer = std::string(producer);
    c.consumer = std::string(consumer);
    c.shape = ShapeText(*out);
    ++c.count;
    matched.push_back({&c, b});
  }
  // A consumer's time: the device time it launched, nested operators'
  // included (its own duration in a trace without device work). Summed for
  // the matched consumers only (a bit per event marks them), not kept per event.
  const bool has_device = std::any_of(model.cls.begin(), model.cls.end(), IsDevice);
  if (has_device) {
    std::vector<bool> is_consumer(model.size(), false);
    for (const auto& [c, b] : matched) is_consumer[b] = true;
    std::unordered_map<uint32_t, int64_t> launched;
    for (size_t e = 0; e < model.size(); ++e) {
      if (!IsDevice(model.cls[e])) continue;
      ForEachAncestor(links, links.launcher[e], [&](int32_t p) {
        if (is_consumer[static_cast<size_t>(p)]) {
          launched[static_cast<uint32_t>(p)] += model.duration_ns[e];
        }
        return true;
      });
    }
    for (const auto& [c, b] : matched) {
      const auto at = launched.find(b);
      c->consumer_ns += at == launched.end() ? 0 : at->second;
    }
  } else {
    for (const auto& [c, b] : matched) c->consumer_ns += model.duration_ns[b];
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

namespace {

using core::ResultTable;
using core::Unit;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const auto* fusion = a.results.Get<std::vector<FusionCandidate>>(kFusionPass);
  if (fusion == nullptr) return;
  const std::string path(c.path);
  ResultTable table;  // always: empty when nothing was found, its columns kept
  table.hidden_when_empty = fusion->empty();
  table.section = "fusion";
  table.title =
      "Fusion candidates: an elementwise operator that reads a matmul/conv output (by shape)";
  table.columns = {
      {"trace", "Trace", 0, false},
      {"producer", "Producer"},
      {"consumer", "Consumer"},
      {"shape", "Tensor"},
      {.key = "count", .header = "Count", .unit = Unit::kCount},
      {.key = "consumer_ns", .header = "Consumer", .precision = 3, .unit = Unit::kTime}};
  for (const auto& f : *fusion) {
    table.AddRow({path, f.producer, f.consumer, f.shape, f.count, f.consumer_ns});
  }
  tables.push_back(std::move(table));
}

void FusionRule(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  const auto* fusion = a.results.Get<std::vector<FusionCandidate>>(kFusionPass);
  if (fusion == nullptr || fusion->empty()) return;
  const bool cpu = a.compute_on == ComputeOn::kCpu;
  int64_t fusible = 0;
  for (const auto& f : *fusion) fusible += f.consumer_ns;
  const double pct = Pct(fusible, cpu ? a.busy.busy_ns : a.device_ns);
  if (pct < c.thresholds.fusion_consumer_pct) return;
  const FusionCandidate& most = fusion->front();
  out.push_back(
      {"fusion", Severity::kInfo,
       fmt::format("Elementwise operators that consume a matmul/conv output take {:.1f}% of "
                   "{} time",
                   pct, cpu ? "CPU" : "device"),
       fmt::format("most: {} -> {} ({} times; the consumer reads the producer's output, "
                   "shape {})",
                   most.producer, most.consumer, most.count, most.shape),
       "Fuse the epilogue into the matmul/conv (torch.compile, fused kernels), saving a round "
       "trip through memory."});
}

}  // namespace

Pass FusionPass() {
  return {
      kFusionPass,
      "Which producer-consumer pairs could be fused (the consumer reads the producer's output)?",
      {"links"},
      [](const TraceModel& model, Analysis& a) {
        a.results.Set(kFusionPass, ComputeFusionCandidates(model, a.links));
      },
      Tables,
      {{"fusion",
        {kFusionPass, "device_busy", "device_time"},
        [](const Thresholds& t) {
          return fmt::format(
              "elementwise operators that read a matmul/convolution output (matched by shape) "
              "take {:g}% or more of the compute device's time",
              t.fusion_consumer_pct);
        },
        FusionRule}}};
}

}  // namespace opscope::analyze
