#include "analyze/importers/ascend/ascend_cost.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <vector>

#include "analyze/flat_map.h"

namespace opscope::analyze {
namespace {

using Shape = std::vector<int64_t>;

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    out.push_back(
        s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return out;
}

// "in;in->out;out" as (inputs, outputs); false without "->".
bool SplitInOut(std::string_view s, std::vector<std::string_view>& in,
                std::vector<std::string_view>& out) {
  const size_t arrow = s.find("->");
  if (arrow == std::string_view::npos) return false;
  in = Split(s.substr(0, arrow), ';');
  out = Split(s.substr(arrow + 2), ';');
  return true;
}

// "32,9216" -> {32, 9216}; "" is a scalar (no dimensions); nullopt when not
// dimensions (a negative or unknown one: dynamic shapes print -1).
std::optional<Shape> ParseShape(std::string_view s) {
  Shape shape;
  if (s.empty()) return shape;
  for (const std::string_view d : Split(s, ',')) {
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
    if (ec != std::errc() || ptr != d.data() + d.size() || v < 0 || v > (int64_t{1} << 40)) {
      return std::nullopt;
    }
    shape.push_back(v);
  }
  return shape;
}

// Elements, or -1 past int64's range.
int64_t Elements(const Shape& s) {
  int64_t n = 1;
  for (const int64_t d : s) {
    if (d != 0 && n > (int64_t{1} << 62) / d) return -1;
    n *= d;
  }
  return n;
}

// Bytes per element and the canonical name of an Ascend data type.
int ElementBytes(std::string_view t, std::string* name = nullptr) {
  if (t.rfind("DT_", 0) == 0) t.remove_prefix(3);
  struct Type {
    std::string_view ascend, canonical;
    int bytes;
  };
  static constexpr Type kTypes[] = {
      {"FLOAT", "fp32", 4},    {"FLOAT32", "fp32", 4},  {"FLOAT16", "fp16", 2},
      {"BF16", "bf16", 2},     {"BFLOAT16", "bf16", 2}, {"DOUBLE", "fp64", 8},
      {"INT8", "int8", 1},     {"UINT8", "uint8", 1},   {"INT16", "int16", 2},
      {"UINT16", "uint16", 2}, {"INT32", "int32", 4},   {"UINT32", "uint32", 4},
      {"INT64", "int64", 8},   {"UINT64", "uint64", 8}, {"BOOL", "bool", 1},
  };
  for (const Type& type : kTypes) {
    if (t == type.ascend) {
      if (name != nullptr) *name = std::string(type.canonical);
      return type.bytes;
    }
  }
  return 0;
}

bool Plain(std::string_view format) {
  return format == "ND" || format == "FORMAT_ND" || format == "NCHW" || format == "NHWC" ||
         format == "NCL" || format == "FORMAT_NCHW";
}

bool AnyOf(std::string_view s, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

// FlashAttentionScore's matmul FLOPs, 4 * B * N1 * S1 * S2 * D (QK^T and PV,
// 2 * S1 * S2 * D each per batch and head), or -1. The input layout (BSH, SBH,
// BNSD, BSND; CANN's aclnnFlashAttentionScore) is an attribute no file
// records; softmax_max, shaped [B, N1, S1, 8] in every layout but TND (as
// MindSpore's ring_attention_update documents FlashAttention's outputs),
// names B, N1 and S1, and the query's shape must match exactly one layout's
// order of them (two that both match must give the same count). S2 is the
// key's dimension at the same place as S1 in the query; D is the query's last
// dimension (H1 / N1 in BSH and SBH). TND (varlen: [T, N, 8]) needs the
// sequence lengths, which are not recorded: not counted. A causal mask may let
// the kernel skip blocks; the count is the dense one.
int64_t FlashAttentionFlops(const Shape& q, const Shape& k, const Shape& softmax_max) {
  if (softmax_max.size() != 4 || softmax_max[3] != 8 || q.size() != k.size()) return -1;
  const int64_t b = softmax_max[0], n1 = softmax_max[1], s1 = softmax_max[2];
  if (b <= 0 || n1 <= 0 || s1 <= 0) return -1;
  int64_t flops = -1;
  bool conflict = false;
  const auto layout = [&](bool matches, int64_t s2, int64_t d, int64_t k_batch) {
    if (!matches || k_batch != b || s2 <= 0 || d <= 0) return;
    int64_t f = 4;
    for (const int64_t v : {b, n1, s1, s2, d}) {
      if (f > (int64_t{1} << 62) / v) return;
      f *= v;
    }
    if (flops >= 0 && f != flops) conflict = true;
    flops = f;
  };
  if (q.size() == 3) {  // H1 = N1 * D
    const int64_t d = q[2] % n1 == 0 ? q[2] / n1 : -1;
    layout(q[0] == b && q[1] == s1, k[1], d, k[0]);  // BSH
    layout(q[0] == s1 && q[1] == b, k[0], d, k[1]);  // SBH
  } else if (q.size() == 4) {
    layout(q[0] == b && q[1] == n1 && q[2] == s1, k[2], q[3], k[0]);  // BNSD
    layout(q[0] == b && q[1] == s1 && q[2] == n1, k[1], q[3], k[0]);  // BSND
  }
  return conflict ? -1 : flops;
}

// The first shape of `shapes` from `from` on that is softmax_max's: [B, N, S, 8]
// of FLOAT (the grad's inputs omit absent optional tensors, so its place varies).
const Shape* SoftmaxMax(const std::vector<Shape>& shapes,
                        const std::vector<std::string_view>& types, size_t from) {
  for (size_t i = from; i < shapes.size() && i < types.size(); ++i) {
    if (shapes[i].size() == 4 && shapes[i][3] == 8 && ElementBytes(types[i]) == 4) {
      return &shapes[i];
    }
  }
  return nullptr;
}

}  // namespace

AscendCost AscendTaskCost(std::string_view op_type, std::string_view shapes,
                          std::string_view dtypes, std::string_view formats) {
  AscendCost cost;
  std::vector<std::string_view> in_text, out_text, in_types, out_types, in_formats, out_formats;
  if (!SplitInOut(shapes, in_text, out_text) || !SplitInOut(dtypes, in_types, out_types)) {
    return cost;
  }
  const bool have_formats = SplitInOut(formats, in_formats, out_formats);
  std::vector<Shape> in, out;
  for (const auto t : in_text) {
    auto s = ParseShape(t);
    if (!s) return cost;
    in.push_back(std::move(*s));
  }
  for (const auto t : out_text) {
    auto s = ParseShape(t);
    if (!s) return cost;
    out.push_back(std::move(*s));
  }
  if (out.empty()) return cost;
  // The minimum traffic: every tensor with a known type once.
  int64_t bytes = 0;
  const auto add = [&](const std::vector<Shape>& shapes_, const std::vector<std::string_view>& t) {
    for (size_t i = 0; i < shapes_.size() && i < t.size(); ++i) {
      const int64_t n = Elements(shapes_[i]);
      const int size = ElementBytes(t[i]);
      if (n < 0) return false;
      bytes += n * size;
    }
    return true;
  };
  if (!add(in, in_types) || !add(out, out_types)) return cost;
  if (!in_types.empty()) ElementBytes(in_types[0], &cost.dtype);
  const auto plain = [&](size_t inputs) {
    if (!have_formats || in_formats.size() < inputs || out_formats.empty()) return false;
    for (size_t i = 0; i < inputs; ++i) {
      if (!Plain(in_formats[i])) return false;
    }
    return Plain(out_formats[0]);
  };
  int64_t flops = -1;
  if (AnyOf(op_type,
            {"MatMul", "MatMulV2", "MatMulV3", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"})) {
    if (in.size() < 2 || !plain(2)) return cost;
    const Shape &a = in[0], &b = in[1], &y = out[0];
    if (a.size() < 2 || b.size() < 2 || y.size() < 2) return cost;
    const int64_t m = y[y.size() - 2], n = y[y.size() - 1];
    const int64_t a0 = a[a.size() - 2], a1 = a[a.size() - 1];
    const int64_t b0 = b[b.size() - 2], b1 = b[b.size() - 1];
    int64_t k = -1;
    for (const auto& [am, ak] : {std::pair{a0, a1}, {a1, a0}}) {
      for (const auto& [bk, bn] : {std::pair{b0, b1}, {b1, b0}}) {
        if (k < 0 && am == m && bn == n && ak == bk) k = ak;
      }
    }
    if (k < 0) return cost;  // the shapes do not describe a product: not guessed
    const int64_t outputs = Elements(y);
    if (outputs < 0 || (k > 0 && outputs > (int64_t{1} << 61) / k)) return cost;
    flops = 2 * outputs * k;
  } else if (op_type == "FlashAttentionScore" || op_type == "FlashAttentionScoreGrad") {
    // Forward: query, key, value, ... -> softmax_max, softmax_sum, softmax_out,
    // attention_out. Backward: query, key, value, dy, ..., softmax_max, ... ->
    // dq, dk, dv: five products of the forward's size (S = QK^T recomputed, dV,
    // dP, dQ, dK), 2.5 times the forward's FLOPs.
    const bool grad = op_type == "FlashAttentionScoreGrad";
    if (in.size() < 3 || !plain(3)) return cost;
    const Shape* softmax_max = grad ? SoftmaxMax(in, in_types, 4) : SoftmaxMax(out, out_types, 0);
    if (softmax_max == nullptr) return cost;
    const int64_t forward = FlashAttentionFlops(in[0], in[1], *softmax_max);
    if (forward < 0 || (grad && forward > (int64_t{1} << 62) / 5)) return cost;
    flops = grad ? forward / 2 * 5 : forward;
  } else if (op_type == "Conv2D") {
    if (in.size() < 2 || !plain(2) || in_formats[1] != "NCHW" || out_formats[0] != "NCHW" ||
        in[1].size() != 4 || out[0].size() != 4) {
      return cost;
    }
    const int64_t per_output = in[1][1] * in[1][2] * in[1][3];
    const int64_t outputs = Elements(out[0]);
    if (outputs < 0 || (per_output > 0 && outputs > (int64_t{1} << 61) / per_output)) return cost;
    flops = 2 * outputs * per_output;
  } else if (AnyOf(op_type,
                   {"Add",      "AddV2",        "Adds",    "Sub",         "Mul",       "Muls",
                    "Div",      "RealDiv",      "Relu",    "ReluGrad",    "Gelu",      "GeluGrad",
                    "FastGelu", "FastGeluGrad", "Sigmoid", "SigmoidGrad", "Tanh",      "TanhGrad",
                    "Exp",      "Log",          "Sqrt",    "Rsqrt",       "Neg",       "Abs",
                    "Maximum",  "Minimum",      "Square",  "Pow",         "LeakyRelu", "Axpy",
                    "AxpyV2",   "Swish",        "SiLU"})) {
    flops = Elements(out[0]);
  }
  if (flops < 0) return cost;
  cost.flops = flops;
  cost.bytes = bytes;
  return cost;
}

void CompleteAscendCosts(TraceModel& model) {
  const auto pair = [](uint32_t a, uint32_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) << 32 | b);
  };
  // (name, category) -> a, (a, shapes) -> b, (b, types) -> c, (c, formats)
  // -> the index in `costs`, each + 1; the cost's dtype interned once.
  Int64Map<uint32_t> by_type, by_shapes, by_dtype, by_layout;
  std::vector<std::pair<AscendCost, uint32_t>> costs;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.flops[e] >= 0 || model.shapes[e] == 0 || model.kind[e] == 0 ||
        !IsDevice(model.cls[e])) {
      continue;
    }
    uint32_t& a = by_type[pair(model.name[e], model.category[e])];
    if (a == 0) a = static_cast<uint32_t>(by_type.size());
    uint32_t& b = by_shapes[pair(a, model.shapes[e])];
    if (b == 0) b = static_cast<uint32_t>(by_shapes.size());
    uint32_t& c = by_dtype[pair(b, model.dtype[e])];
    if (c == 0) c = static_cast<uint32_t>(by_dtype.size());
    uint32_t& index = by_layout[pair(c, model.layout[e])];
    if (index == 0) {
      AscendCost cost =
          AscendTaskCost(model.String(model.op_type[e]), model.String(model.shapes[e]),
                         model.String(model.dtype[e]), model.String(model.layout[e]));
      const uint32_t dtype = cost.dtype.empty() ? 0 : model.Intern(cost.dtype);
      costs.emplace_back(std::move(cost), dtype);
      index = static_cast<uint32_t>(costs.size());
    }
    const auto& [cost, dtype] = costs[index - 1];
    if (cost.flops < 0) continue;
    model.flops.Set(e, cost.flops);
    model.bytes.Set(e, cost.bytes);
    model.compute_dtype.Set(e, dtype);
  }
}

}  // namespace opscope::analyze
