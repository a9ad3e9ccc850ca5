#include "analyze/passes/roofline.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <unordered_map>

#include "analyze/analysis.h"
#include "analyze/flat_map.h"
#include "analyze/mapped.h"
#include "analyze/names.h"
#include "analyze/passes/fusion.h"
#include "core/datasheet.h"

namespace opscope::analyze {
namespace {

// The first entry of "Input type": "float", "c10::BFloat16", ...
std::string FirstType(std::string_view types) {
  const auto open = types.find('"');
  const auto close = open == std::string_view::npos ? open : types.find('"', open + 1);
  return close == std::string_view::npos ? std::string()
                                         : std::string(types.substr(open + 1, close - open - 1));
}

}  // namespace

std::string_view CanonicalDtype(std::string_view t) {
  if (t == "fp32" || t == "f32" || t == "float32" || t == "float") return "fp32";
  if (t == "tf32") return "tf32";
  if (t == "bf16" || t == "bfloat16" || t == "c10::BFloat16") return "bf16";
  if (t == "fp16" || t == "f16" || t == "float16" || t == "half" || t == "c10::Half") return "fp16";
  if (t == "fp64" || t == "f64" || t == "float64" || t == "double") return "fp64";
  if (t == "int8" || t == "s8" || t == "i8") return "int8";
  return {};
}

namespace {

// Bytes per element of the first input's type, and its dtype name; 0 if unknown.
int64_t ElementOf(std::string_view types_json, std::string& dtype) {
  const std::string type = FirstType(types_json);
  if (type == "float") return dtype = "fp32", 4;
  if (type == "double") return dtype = "fp64", 8;
  if (type == "c10::BFloat16") return dtype = "bf16", 2;
  if (type == "c10::Half") return dtype = "fp16", 2;
  return 0;
}

int64_t Product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

}  // namespace

std::optional<RooflineCeilings> KnownDeviceCeilings(std::string_view name) {
  const core::Datasheet* sheet = core::FindDatasheet(name);
  if (sheet == nullptr) return std::nullopt;
  RooflineCeilings c;
  c.device = std::string(name);
  c.source = std::string(sheet->source);
  for (const auto& [dtype, tflops] : sheet->tflops) {
    c.flops_per_second[std::string(dtype)] = tflops * 1e12;
  }
  c.bytes_per_second = sheet->memory_tbps * 1e12;
  return c;
}

RooflineCeilings ChipCeilings(const ReportedChip& chip, const RooflineCeilings& table) {
  RooflineCeilings c = table;
  std::string replaced;
  for (const auto& [dtype, peak] : chip.flops_per_second) {
    c.flops_per_second[dtype] = peak;
    replaced += (replaced.empty() ? "" : "/") + dtype;
  }
  c.source = fmt::format(
      "{}'s {} from the run's {}: {}; other peaks and memory bandwidth from "
      "the table: {}",
      table.device.empty() ? std::string("the device") : table.device,
      chip.core_kind.empty() ? std::string("cores") : chip.core_kind, chip.source, chip.derivation,
      table.source);
  return c;
}

bool IsTf32Kernel(std::string_view kernel, int compute_major) {
  std::string n(kernel);
  for (char& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (n.find("tf32") != std::string::npos) return true;
  // cuBLAS/CUTLASS fp32-in/fp32-out tensor-core kernels: TF32 from Ampere (8.0) on.
  return compute_major >= 8 &&
         (n.find("s1688") != std::string::npos || n.find("s16816") != std::string::npos ||
          n.find("tensorop_s") != std::string::npos);
}

int ComputeCapabilityMajor(const TraceModel& model) {
  const auto props = model.metadata.find("deviceProperties");
  if (props == model.metadata.end()) return -1;
  const size_t at = props->second.find("\"computeMajor\"");
  if (at == std::string::npos) return -1;
  const size_t colon = props->second.find(':', at);
  return colon == std::string::npos ? -1 : std::atoi(props->second.c_str() + colon + 1);
}

bool MatmulCost(std::string_view op, std::string_view dims_json, std::string_view types_json,
                int64_t& flops, int64_t& bytes, std::string& dtype) {
  const auto d = ParseShapes(dims_json);
  const int64_t element = ElementOf(types_json, dtype);
  if (element == 0) return false;
  // Each signature is checked whole (input count, ranks, matching inner
  // dimensions): operators recorded under these names with other inputs are skipped.
  int64_t batch = 1, m = 0, k = 0, n = 0;
  if ((op == "aten::mm" || op == "aten::matmul") && d.size() == 2 && d[0].size() == 2 &&
      d[1].size() == 2 && d[0][1] == d[1][0]) {
    m = d[0][0], k = d[0][1], n = d[1][1];
  } else if (op == "aten::addmm" && d.size() == 5 && d[1].size() == 2 && d[2].size() == 2 &&
             d[1][1] == d[2][0]) {
    m = d[1][0], k = d[1][1], n = d[2][1];
  } else if ((op == "aten::bmm" || op == "aten::matmul") && d.size() == 2 && d[0].size() == 3 &&
             d[1].size() == 3 && d[0][0] == d[1][0] && d[0][2] == d[1][1]) {
    batch = d[0][0], m = d[0][1], k = d[0][2], n = d[1][2];
  } else if (op == "aten::linear" && (d.size() == 2 || d.size() == 3) && d[0].size() >= 2 &&
             d[1].size() == 2 && d[0].back() == d[1][1]) {
    m = Product(d[0], 0, d[0].size() - 1), k = d[0].back(), n = d[1][0];
  } else {
    return false;
  }
  if (m <= 0 || k <= 0 || n <= 0) return false;
  flops = 2 * batch * m * k * n;
  bytes = element * batch * (m * k + k * n + m * n);
  return true;
}

namespace {

// "[\"\", \"\", \"\", \"[2, 2]\", \"[1, 1]\", \"[1, 1]\", \"1\"]" -> the strings.
std::vector<std::string> ParseStrings(std::string_view text) {
  std::vector<std::string> out;
  bool in = false;
  std::string cur;
  for (const char c : text) {
    if (c == '"') {
      if (in) out.push_back(cur), cur.clear();
      in = !in;
    } else if (in) {
      cur += c;
    }
  }
  return out;
}

std::vector<int64_t> Ints(const std::string& text) {
  std::vector<int64_t> out;
  int64_t v = 0;
  bool digits = false;
  for (const char c : text + ",") {
    if (c >= '0' && c <= '9') {
      v = v * 10 + (c - '0'), digits = true;
    } else {
      if (digits) out.push_back(v);
      v = 0, digits = false;
    }
  }
  return out;
}

bool IsElementwise(std::string_view op) {
  static constexpr std::string_view kOps[] = {
      "aten::add",  "aten::add_", "aten::sub",     "aten::sub_", "aten::mul",
      "aten::mul_", "aten::div",  "aten::div_",    "aten::relu", "aten::relu_",
      "aten::gelu", "aten::silu", "aten::sigmoid", "aten::tanh", "aten::threshold_backward",
      "aten::neg",  "aten::exp"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

}  // namespace

bool HasShapeCost(std::string_view op) {
  return op == "aten::mm" || op == "aten::matmul" || op == "aten::addmm" || op == "aten::bmm" ||
         op == "aten::linear" || op == "aten::conv2d" || op == "aten::convolution" ||
         op == "aten::_convolution" || IsElementwise(op);
}

bool ShapeCost(std::string_view op, std::string_view dims_json, std::string_view types_json,
               std::string_view concrete_json, int64_t& flops, int64_t& bytes, std::string& dtype) {
  if (!HasShapeCost(op)) return false;
  if (MatmulCost(op, dims_json, types_json, flops, bytes, dtype)) return true;
  const auto d = ParseShapes(dims_json);
  const int64_t element = ElementOf(types_json, dtype);
  if (element == 0 || d.empty()) return false;
  if (op == "aten::conv2d" || op == "aten::convolution" || op == "aten::_convolution") {
    const auto concrete = ParseStrings(concrete_json);
    if (d.size() < 2 || d[0].size() != 4 || d[1].size() != 4 || concrete.size() < 7) return false;
    const auto stride = Ints(concrete[3]), padding = Ints(concrete[4]),
               dilation = Ints(concrete[5]);
    const auto groups = Ints(concrete[op == "aten::conv2d" ? 6 : 8 < concrete.size() ? 8 : 6]);
    if (stride.size() != 2 || padding.size() != 2 || dilation.size() != 2 || groups.size() != 1 ||
        groups[0] < 1) {
      return false;
    }
    const int64_t n = d[0][0], c = d[0][1], h = d[0][2], w = d[0][3];
    const int64_t o = d[1][0], cg = d[1][1], kh = d[1][2], kw = d[1][3];
    if (cg * groups[0] != c || stride[0] < 1 || stride[1] < 1) return false;
    const int64_t oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) / stride[0] + 1;
    const int64_t ow = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) / stride[1] + 1;
    if (oh <= 0 || ow <= 0) return false;
    flops = 2 * n * o * oh * ow * cg * kh * kw;
    bytes = element * (n * c * h * w + o * cg * kh * kw + n * o * oh * ow);
    return true;
  }
  if (IsElementwise(op)) {
    int64_t out_elements = 0, read = 0;
    for (const auto& t : d) {
      if (t.empty()) continue;  // a scalar
      int64_t numel = 1;
      for (const int64_t v : t) numel *= v;
      read += numel;
      out_elements = std::max(out_elements, numel);
    }
    if (out_elements == 0) return false;
    flops = out_elements;
    bytes = element * (read + out_elements);
    return true;
  }
  return false;
}

std::vector<OpRoofline> ComputeRoofline(const TraceModel& model, const RooflineCeilings* ceilings) {
  // Device time of an operator: the kernels of the launch calls made on its
  // thread while it ran (calls and kernels pair by correlation id).
  // Counted first, so the maps and lists are allocated once at their size.
  size_t correlated_device = 0;
  std::vector<size_t> launch_count(model.tracks.size(), 0);
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.correlation[e] < 0) continue;
    correlated_device += IsDevice(model.cls[e]);
    if (model.cls[e] == EventClass::kRuntime) ++launch_count[model.track[e]];
  }
  // Device time per correlation id: (id, time) pairs sorted, then summed per id.
  MappedVector<std::pair<int64_t, int64_t>> kernel_ns;
  kernel_ns.reserve(correlated_device);
  Int64Map<uint8_t> tf32_by_correlation;
  std::vector<MappedVector<uint32_t>> launches_by_track(model.tracks.size());
  for (size_t t = 0; t < launch_count.size(); ++t) launches_by_track[t].reserve(launch_count[t]);
  bool has_device = false;
  const int compute_major = ComputeCapabilityMajor(model);
  std::vector<int8_t> tf32_name(model.string_count(), -1);
  for (size_t e = 0; e < model.size(); ++e) {
    has_device |= IsDevice(model.cls[e]);
    if (model.correlation[e] < 0) continue;
    if (IsDevice(model.cls[e])) {
      kernel_ns.emplace_back(model.correlation[e], model.duration_ns[e]);
      int8_t& tf32 = tf32_name[model.name[e]];
      if (tf32 < 0) tf32 = IsTf32Kernel(model.String(model.name[e]), compute_major);
      if (tf32) tf32_by_correlation[model.correlation[e]] = 1;
    } else if (model.cls[e] == EventClass::kRuntime) {
      launches_by_track[model.track[e]].push_back(static_cast<uint32_t>(e));
    }
  }
  std::sort(kernel_ns.begin(), kernel_ns.end());
  size_t ids = 0;  // summed in place: one entry per id, looked up there (no copy)
  for (size_t i = 0; i < kernel_ns.size(); ++i) {
    if (ids > 0 && kernel_ns[ids - 1].first == kernel_ns[i].first) {
      kernel_ns[ids - 1].second += kernel_ns[i].second;
    } else {
      kernel_ns[ids++] = kernel_ns[i];
    }
  }
  const auto kernel_ns_of = [&](int64_t correlation) -> const int64_t* {
    const auto end = kernel_ns.begin() + static_cast<std::ptrdiff_t>(ids);
    const auto it =
        std::lower_bound(kernel_ns.begin(), end, correlation,
                         [](const auto& entry, int64_t id) { return entry.first < id; });
    return it != end && it->first == correlation ? &it->second : nullptr;
  };
  // Per track, the launch calls in time order with running sums of their
  // kernels' time, of those whose kernels were found, and of launches whose
  // kernels are missing (a sampled trace): any operator's window is two lookups.
  // The counts fit 32 bits (a track's launches are model events).
  struct Launches {
    MappedVector<int64_t> start;
    MappedVector<int64_t> kernel_ns{0};
    MappedVector<uint32_t> found{0};
    MappedVector<uint32_t> missing{0};
    MappedVector<uint32_t> tf32{0};  // launches whose kernels are TF32 tensor-core kernels
  };
  std::vector<Launches> by_track(model.tracks.size());
  std::vector<int8_t> launch_name(model.string_count(), -1);  // per name id; -1: not yet known
  for (size_t t = 0; t < launches_by_track.size(); ++t) {
    auto& launches = launches_by_track[t];
    std::sort(launches.begin(), launches.end(),
              [&](uint32_t a, uint32_t b) { return model.start_ns[a] < model.start_ns[b]; });
    Launches& l = by_track[t];
    l.start.reserve(launches.size());
    l.kernel_ns.reserve(launches.size() + 1);
    for (auto* v : {&l.found, &l.missing, &l.tf32}) v->reserve(launches.size() + 1);
    for (const uint32_t e : launches) {
      const int64_t* k = kernel_ns_of(model.correlation[e]);
      int8_t& launch = launch_name[model.name[e]];
      if (k == nullptr && launch < 0) {
        launch = model.String(model.name[e]).find("Launch") != std::string_view::npos;
      }
      l.start.push_back(model.start_ns[e]);
      l.kernel_ns.push_back(l.kernel_ns.back() + (k != nullptr ? *k : 0));
      l.found.push_back(l.found.back() + (k != nullptr ? 1 : 0));
      l.missing.push_back(l.missing.back() + (k == nullptr && launch == 1 ? 1 : 0));
      l.tf32.push_back(l.tf32.back() + (tf32_by_correlation.Find(model.correlation[e]) ? 1 : 0));
    }
    launches = {};
  }
  kernel_ns = {};
  // An operator's device time: the kernels of the launches made on its thread
  // while it ran; unknown (-1) when none were found or one of them is missing.
  const auto device_ns = [&](size_t op, bool& tf32) -> int64_t {
    const Launches& l = by_track[model.track[op]];
    const int64_t begin = model.start_ns[op], end = begin + model.duration_ns[op];
    const size_t lo = std::lower_bound(l.start.begin(), l.start.end(), begin) - l.start.begin();
    const size_t hi = std::lower_bound(l.start.begin() + lo, l.start.end(), end) - l.start.begin();
    if (l.missing[hi] != l.missing[lo] || l.found[hi] == l.found[lo]) return -1;
    tf32 = l.tf32[hi] != l.tf32[lo];
    return l.kernel_ns[hi] - l.kernel_ns[lo];
  };
  // Per name id, its entry in `rows`; the cost of each distinct (name, shapes,
  // types, inputs) is worked out once.
  struct Cost {
    bool ok = false;
    int64_t flops = -1, bytes = -1;
    std::string dtype;
  };
  std::vector<Cost> costs;
  // (name, shapes) -> a, (a, types) -> b, (b, inputs) -> the index in `costs`, each + 1.
  Int64Map<uint32_t> by_shapes, by_types, by_inputs;
  const auto pair = [](uint32_t a, uint32_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) << 32 | b);
  };
  std::vector<uint32_t> row_of(model.string_count(), UINT32_MAX);
  std::vector<OpRoofline> rows;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kHostOp && !IsDevice(model.cls[e])) continue;
    int64_t flops = model.flops[e], bytes = model.bytes[e];
    std::string_view dtype;
    if (flops < 0 && model.input_dims[e] != 0) {
      uint32_t& a = by_shapes[pair(model.name[e], model.input_dims[e])];
      if (a == 0) a = static_cast<uint32_t>(by_shapes.size());
      uint32_t& b = by_types[pair(a, model.input_type[e])];
      if (b == 0) b = static_cast<uint32_t>(by_types.size());
      uint32_t& index = by_inputs[pair(b, model.concrete_inputs[e])];
      if (index == 0) {
        Cost c;
        c.ok = ShapeCost(model.String(model.name[e]), model.String(model.input_dims[e]),
                         model.String(model.input_type[e]), model.String(model.concrete_inputs[e]),
                         c.flops, c.bytes, c.dtype);
        costs.push_back(std::move(c));
        index = static_cast<uint32_t>(costs.size());
      }
      const Cost& cost = costs[index - 1];
      if (cost.ok) flops = cost.flops, bytes = cost.bytes;
      dtype = cost.dtype;
    }
    // The data type a reader counted the FLOPs in (the Ascend readers, from
    // each task's shapes and types).
    if (dtype.empty() && model.compute_dtype[e] != 0) {
      dtype = CanonicalDtype(model.String(model.compute_dtype[e]));
    }
    // A dtype the trace states (opscope's "dtype" argument) wins over one
    // inferred from input types.
    if (model.dtype[e] != 0 && dtype.empty()) {
      const std::string_view stated = CanonicalDtype(model.String(model.dtype[e]));
      if (!stated.empty()) dtype = stated;
    }
    if (flops < 0) continue;
    int64_t ns = model.duration_ns[e];
    const char* source = IsDevice(model.cls[e]) ? "device" : "host";
    if (has_device && model.cls[e] == EventClass::kHostOp) {
      // On a device, a host operator's own time is its launch time: use its kernels or nothing.
      bool tf32 = false;
      ns = device_ns(e, tf32);
      if (ns < 0) continue;
      source = "device kernels";
      // fp32 operands multiplied on tensor cores in TF32, as the kernel names show.
      if (tf32 && (dtype.empty() || dtype == "fp32")) dtype = "tf32";
    } else if (IsDevice(model.cls[e]) && (dtype.empty() || dtype == "fp32")) {
      int8_t& tf32 = tf32_name[model.name[e]];
      if (tf32 < 0) tf32 = IsTf32Kernel(model.String(model.name[e]), compute_major);
      if (tf32) dtype = "tf32";
    }
    uint32_t& row = row_of[model.name[e]];
    if (row == UINT32_MAX) {
      row = static_cast<uint32_t>(rows.size());
      rows.emplace_back().name = std::string(model.String(model.name[e]));
    }
    OpRoofline& r = rows[row];
    ++r.calls;
    if (!dtype.empty()) r.dtype = std::string(dtype);
    r.flops += static_cast<double>(flops);
    r.bytes += static_cast<double>(std::max<int64_t>(bytes, 0));
    r.time_ns += ns;
    r.time_source = source;
  }
  std::vector<OpRoofline> out;
  // In name order, as before the sort by FLOPs (which keeps ties in that order).
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (auto& r : rows) {
    if (r.time_ns <= 0) continue;
    r.intensity = r.bytes > 0 ? r.flops / r.bytes : 0;
    r.achieved = r.flops / (static_cast<double>(r.time_ns) / 1e9);
    if (ceilings != nullptr && r.bytes > 0 && ceilings->bytes_per_second > 0) {
      const std::string dtype = r.dtype.empty() ? "fp32" : r.dtype;
      const auto peak = ceilings->flops_per_second.find(dtype);
      if (peak == ceilings->flops_per_second.end()) {
        r.note = "no " + dtype + " ceiling for " + ceilings->device + ": not rated";
      } else {
        const double ridge = peak->second / ceilings->bytes_per_second;
        r.bound = r.intensity < ridge ? "memory" : "compute";
        const double attainable = std::min(peak->second, r.intensity * ceilings->bytes_per_second);
        r.pct_of_attainable = 100.0 * r.achieved / attainable;
        if (r.pct_of_attainable > 100) {
          r.inconsistent = true;
          r.note = fmt::format(
              "inconsistent: {:.0f}% of its roofline is impossible; check the ceilings (device {}, "
              "dtype {}), the FLOP count from the shapes, and that the time covers all its "
              "kernels{}",
              r.pct_of_attainable, ceilings->device, dtype,
              r.bound == "memory" ? "; a memory-bound point above its ceiling may read data a "
                                    "cache held (the ceiling is the device memory's)"
                                  : "");
        }
      }
    }
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.flops > b.flops; });
  return out;
}

namespace {

using core::ResultTable;
using core::Unit;
using core::Value;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const auto* roofline = a.results.Get<std::vector<OpRoofline>>(kRooflinePass);
  if (roofline == nullptr) return;
  const std::string path(c.path);
  ResultTable table;  // always: empty when nothing was found, its columns kept
  table.hidden_when_empty = roofline->empty();
  table.section = "roofline";
  table.title = "Roofline: " + (a.ceilings ? a.ceilings->source : a.ceilings_note);
  table.columns = {
      {"trace", "Trace", 0, false},
      {"operator", "Operator"},
      {"calls", "Calls"},
      {"dtype", "Dtype"},
      {.key = "flops", .header = "GFLOP", .precision = 3, .unit = Unit::kFlop, .scale = 1e9},
      {.key = "bytes", .header = "GB", .precision = 3, .unit = Unit::kBytes, .scale = 1e9},
      {"intensity", "FLOP/B", 1},
      {.key = "achieved_flop_per_s",
       .header = "TFLOP/s",
       .precision = 3,
       .unit = Unit::kFlopPerSecond,
       .scale = 1e12},
      {"bound", "Bound"},
      {.key = "pct_of_attainable",
       .header = "% of roofline",
       .precision = 1,
       .unit = Unit::kPercent},
      {"time_source", "Time from"},
      {"note", "Note"}};
  // The terminal shows FLOPs in G, bytes in GB and FLOP/s in T (scale): the
  // files hold them in FLOP, bytes and FLOP/s.
  for (const auto& r : *roofline) {
    table.AddRow({path, r.name, r.calls, r.dtype.empty() ? Value{} : Value{r.dtype}, r.flops / 1e9,
                  r.bytes / 1e9, r.bytes > 0 ? Value{r.intensity} : Value{}, r.achieved / 1e12,
                  r.bound.empty() ? Value{} : Value{r.bound},
                  r.pct_of_attainable >= 0 ? Value{r.pct_of_attainable} : Value{}, r.time_source,
                  r.note});
    if (c.top != 0 && table.rows.size() == 15) break;
  }
  if (table.rows.size() < roofline->size()) {
    table.notes.push_back(
        fmt::format("{} more (--top 0 lists all)", roofline->size() - table.rows.size()));
  }
  table.notes.push_back(
      "FLOPs from the trace's arguments or from recorded shapes of matrix multiplies; "
      "% of roofline = achieved / min(peak, intensity x bandwidth).");
  // Above 100%: the ceilings (or the counts) do not fit this trace, so no
  // operator's percentage here measures its efficiency. Said beside the
  // figures, never as a finding about an operator (issue 36, class 9).
  int64_t over = 0;
  const OpRoofline* worst = nullptr;
  for (const auto& r : *roofline) {
    if (!r.inconsistent) continue;
    ++over;
    if (worst == nullptr || r.pct_of_attainable > worst->pct_of_attainable) worst = &r;
  }
  if (worst != nullptr) {
    table.notes.insert(
        table.notes.begin(),
        fmt::format("Doubtful: {} operator{} would run above 100% of these ceilings ('{}' at "
                    "{:.0f}%), which no operator can: the ceilings ({}) or the FLOP and byte "
                    "counts do not fit this trace, so the % column does not measure efficiency "
                    "here.",
                    over, over == 1 ? "" : "s", worst->name, worst->pct_of_attainable,
                    a.ceilings ? a.ceilings->source : std::string("none")));
  }
  tables.push_back(std::move(table));
}

}  // namespace

Pass RooflinePass() {
  return {kRooflinePass,
          "How close is each operator to its roofline?",
          {},
          [](const TraceModel& model, Analysis& a) {
            a.results.Set(kRooflinePass,
                          ComputeRoofline(model, a.ceilings ? &*a.ceilings : nullptr));
          },
          Tables};
}

}  // namespace opscope::analyze
