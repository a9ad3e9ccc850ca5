#include "analyze/importers/ascend/ai_core_families.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace opscope::analyze {
namespace {

// msprof-analyze's rules/en/aicore_performance.yaml.
constexpr double kCubeMac = 0.8, kCubeMte2 = 0.95;
constexpr double kFaMte2 = 0.8, kFaVec = 0.75, kFaFixpipe = 0.75;
constexpr double kVectorTotal = 0.9, kVectorPipe = 0.7;
// AICorePerformanceChecker's filters and axes.
constexpr double kCubeMinMb = 100;
constexpr double kVectorTypePct = 1;
constexpr int64_t kVectorTypeMinNs = 1'000'000'000;
constexpr int64_t kCubeAxis = 256, kFaAxis = 128;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ParseList(std::string_view text, std::vector<std::vector<int64_t>>& out) {
  while (true) {
    const size_t semi = text.find(';');
    std::string_view tensor = text.substr(0, semi);
    std::vector<int64_t> dims;
    while (!tensor.empty()) {
      const size_t comma = tensor.find(',');
      const std::string_view d = tensor.substr(0, comma);
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
      if (ec != std::errc() || end != d.data() + d.size() || v < 0) return false;
      dims.push_back(v);
      if (comma == std::string_view::npos) break;
      tensor.remove_prefix(comma + 1);
    }
    out.push_back(std::move(dims));
    if (semi == std::string_view::npos) return true;
    text.remove_prefix(semi + 1);
  }
}

// Elements of a tensor, saturated well below overflow (a shape is a claim).
double Elements(const std::vector<int64_t>& dims) {
  double n = 1;
  for (const int64_t d : dims) n = std::min(n * static_cast<double>(d), 1e18);
  return n;
}

}  // namespace

bool ParseShapes(std::string_view in_out, ShapeLists& out) {
  out = {};
  const size_t arrow = in_out.find("->");
  if (arrow == std::string_view::npos) return false;
  return ParseList(in_out.substr(0, arrow), out.inputs) &&
         ParseList(in_out.substr(arrow + 2), out.outputs);
}

void AiCoreFamilies::Add(std::string_view name, std::string_view type, std::string_view core,
                         std::string_view shapes, std::string_view dtype, int64_t dur_ns,
                         const std::array<double, kFamilyRatios>& ratios) {
  if (shapes.empty()) return;
  const std::string lower_type = Lower(type);
  std::string family;
  if (core == "AI_CORE" && lower_type.find("matmul") != std::string::npos) {
    family = "cube";
  } else if (type == "FlashAttentionScore") {
    family = "FlashAttention";
  } else if (type == "FlashAttentionScoreGrad") {
    family = "FlashAttention grad";
  } else if (core == "AI_VECTOR_CORE" || core == "MIX_AIV") {
    family = "vector";
    vector_type_ns_[std::string(type)] += dur_ns;
  } else {
    return;
  }
  std::string key = std::string(name) + '\n' + std::string(shapes);
  auto it = groups_.find(key);
  if (it == groups_.end()) {
    it = groups_.emplace(std::move(key), Group{}).first;
    Group& g = it->second;
    g.family = family, g.name = std::string(name), g.type = std::string(type);
    g.shapes = std::string(shapes), g.dtype = std::string(dtype);
  }
  Group& g = it->second;
  ++g.count;
  g.total_ns += dur_ns;
  for (int k = 0; k < kFamilyRatios; ++k) {
    if (!std::isnan(ratios[k])) g.sum[k] += ratios[k], ++g.n[k];
  }
  if (family == "cube") {
    ShapeLists s;
    if (ParseShapes(shapes, s)) {
      // msprof-analyze's size: the inputs' elements (a 1-D one, the bias,
      // counted twice) and the output's, 2 bytes each.
      double elements = 0;
      for (const auto& in : s.inputs) {
        if (in.size() == 1) {
          elements += 2 * static_cast<double>(in[0]);
        } else if (!in.empty()) {
          elements += Elements(in);
        }
      }
      if (!s.outputs.empty()) elements += Elements(s.outputs[0]);
      g.memory_mb += elements * 2 / 1024 / 1024;
    }
  }
}

std::vector<FamilyVerdict> AiCoreFamilies::Finish(int64_t all_task_ns) const {
  std::vector<FamilyVerdict> out;
  for (const auto& entry : groups_) {
    const Group& g = entry.second;
    const auto mean = [&](FamilyRatio r) {
      const int k = static_cast<int>(r);
      return g.n[k] > 0 ? g.sum[k] / static_cast<double>(g.n[k]) : -1.0;
    };
    const auto has = [&](std::initializer_list<FamilyRatio> rs) {
      return std::all_of(rs.begin(), rs.end(), [&](FamilyRatio r) { return mean(r) >= 0; });
    };
    FamilyVerdict v;
    v.family = g.family, v.name = g.name, v.type = g.type, v.shapes = g.shapes, v.dtype = g.dtype;
    v.count = g.count, v.total_ns = g.total_ns;
    ShapeLists s;
    const bool shaped = ParseShapes(g.shapes, s);
    // Two tests of one family: both, the first, the second, else the gap.
    const auto judge = [&](const char* a_name, double a, double a_min, const char* b_name, double b,
                           double b_min) {
      v.evidence = fmt::format("mean {} {:.3f} (>= {:g}), {} {:.3f} (>= {:g})", a_name, a, a_min,
                               b_name, b, b_min);
      if (a >= a_min || b >= b_min) {
        v.verdict = "bound";
        v.detail = a >= a_min && b >= b_min ? fmt::format("{} and {}", a_name, b_name)
                   : a >= a_min             ? a_name
                                            : b_name;
      } else {
        v.verdict = "room to optimise";
        v.gap_pct = 100 * std::max(a_min - a, b_min - b);
        v.detail = fmt::format("{:.1f} points below a threshold", v.gap_pct);
      }
    };
    if (g.family == "cube") {
      if (g.memory_mb < kCubeMinMb) continue;
      bool affine = false;
      std::string axes = "the shapes are not two matrices";
      if (shaped && s.inputs.size() >= 2 && s.inputs[0].size() >= 2 && s.inputs[1].size() >= 2) {
        const auto& a = s.inputs[0];
        const auto& b = s.inputs[1];
        // NZ: the product of the middle two, modulo the axis (no overflow
        // for dimensions a file claims).
        const bool nz = a.size() == 4 && b.size() == 4;
        const auto residue = [&](const std::vector<int64_t>& t) {
          return nz ? (t[1] % kCubeAxis) * (t[2] % kCubeAxis) % kCubeAxis : t.back() % kCubeAxis;
        };
        affine = residue(a) == 0 && residue(b) == 0;
        axes = nz ? fmt::format("inner axes {}x{} and {}x{}", a[1], a[2], b[1], b[2])
                  : fmt::format("inner axes {} and {}", a.back(), b.back());
      }
      if (!affine) {
        v.verdict = "not affine";
        v.detail = fmt::format("{}: not both multiples of {}", axes, kCubeAxis);
        v.evidence = fmt::format("{:.0f} MB moved by its calls", g.memory_mb);
      } else if (has({FamilyRatio::kAicMac, FamilyRatio::kAicMte2})) {
        judge("mac", mean(FamilyRatio::kAicMac), kCubeMac, "MTE2", mean(FamilyRatio::kAicMte2),
              kCubeMte2);
      } else {
        continue;
      }
    } else if (g.family == "FlashAttention") {
      // S from the softmax output [B, N, S, 8]; D the last dimension of a
      // 4-D query, H / N of a 3-D one (a varlen query [T, N, D]: its last).
      int64_t d = -1, seq = -1;
      if (shaped && !s.inputs.empty()) {
        const auto& q = s.inputs[0];
        const bool varlen = Lower(g.name).find("varlen") != std::string::npos;
        if (varlen && q.size() >= 3) {
          d = q[2];
        } else if (q.size() == 4) {
          d = q[3];
        } else if (q.size() == 3 && !s.outputs.empty() && s.outputs[0].size() >= 2 &&
                   s.outputs[0][1] > 0) {
          d = q[2] / s.outputs[0][1];
        }
        if (!varlen && !s.outputs.empty() && s.outputs[0].size() >= 3) seq = s.outputs[0][2];
      }
      const bool bad_d = d >= 0 && d % kFaAxis != 0, bad_s = seq >= 0 && seq % kFaAxis != 0;
      if (bad_d || bad_s) {
        v.verdict = "not affine";
        v.detail = bad_d && bad_s ? fmt::format("head dim {} and sequence {}: not multiples of {}",
                                                d, seq, kFaAxis)
                   : bad_d        ? fmt::format("head dim {}: not a multiple of {}", d, kFaAxis)
                                  : fmt::format("sequence {}: not a multiple of {}", seq, kFaAxis);
      } else if (has({FamilyRatio::kAicMte2, FamilyRatio::kAivVec})) {
        judge("MTE2", mean(FamilyRatio::kAicMte2), kFaMte2, "vec", mean(FamilyRatio::kAivVec),
              kFaVec);
      } else {
        continue;
      }
    } else if (g.family == "FlashAttention grad") {
      if (!has({FamilyRatio::kAicMte2, FamilyRatio::kAicFixpipe})) continue;
      judge("MTE2", mean(FamilyRatio::kAicMte2), kFaMte2, "fixpipe", mean(FamilyRatio::kAicFixpipe),
            kFaFixpipe);
    } else {  // vector
      const auto type_ns = vector_type_ns_.find(g.type);
      const int64_t ns = type_ns == vector_type_ns_.end() ? 0 : type_ns->second;
      if (100.0 * static_cast<double>(ns) < kVectorTypePct * static_cast<double>(all_task_ns) &&
          ns < kVectorTypeMinNs) {
        continue;
      }
      if (!has({FamilyRatio::kAivVec, FamilyRatio::kAivMte2, FamilyRatio::kAivMte3})) continue;
      const double vec = mean(FamilyRatio::kAivVec), mte2 = mean(FamilyRatio::kAivMte2),
                   mte3 = mean(FamilyRatio::kAivMte3);
      v.evidence = fmt::format("mean vec {:.3f}, MTE2 {:.3f}, MTE3 {:.3f}", vec, mte2, mte3);
      if (vec + mte2 + mte3 >= kVectorTotal) {
        v.verdict = "bound", v.detail = "vec, MTE2 and MTE3 together";
      } else if (mte2 >= kVectorPipe) {
        v.verdict = "bound", v.detail = "MTE2";
      } else if (mte3 >= kVectorPipe) {
        v.verdict = "bound", v.detail = "MTE3";
      } else if (vec >= kVectorPipe) {
        v.verdict = "bound", v.detail = "vec";
      } else {
        v.verdict = "room to optimise";
        v.gap_pct = 100 * std::max({kVectorPipe - vec, kVectorPipe - mte2, kVectorPipe - mte3});
        v.detail = fmt::format("{:.1f} points below a threshold", v.gap_pct);
      }
    }
    out.push_back(std::move(v));
  }
  const auto rank = [](const std::string& family) {
    return family == "cube" ? 0 : family == "FlashAttention" ? 1 : family == "vector" ? 3 : 2;
  };
  std::stable_sort(out.begin(), out.end(), [&](const FamilyVerdict& a, const FamilyVerdict& b) {
    if (rank(a.family) != rank(b.family)) return rank(a.family) < rank(b.family);
    return a.total_ns > b.total_ns;
  });
  return out;
}

}  // namespace opscope::analyze
