// Operators, kernels and host calls by time: the pass, its tables and its rule.
#include "analyze/passes/op_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <span>

#include "analyze/analysis.h"
#include "analyze/flat_map.h"
#include "analyze/mapped.h"
#include "analyze/names.h"
#include "analyze/passes/attribution.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

// Where the nearest-rank percentile P of n sorted values lies: the value of
// rank ceil(P/100 * n) (1-based), computed in integers so that no rounding of
// P/100 * n moves it.
size_t RankIndex(size_t n, int percent) {
  const size_t rank = (static_cast<size_t>(percent) * n + 99) / 100;
  return std::min(std::max<size_t>(rank, 1), n) - 1;
}

// The events grouped by name and class, in order of first appearance: count,
// total, mean, p50, p99, max, flops, bytes (no share yet). Derived rows and
// spans of the whole trace (class kOther) are left out.
std::vector<OpStats> GroupByNameAndClass(const TraceModel& model, std::span<const int64_t> self) {
  // Pass 1: each event's group, and the sums.
  Int64Map<uint32_t> index;  // (name << 8 | class) -> group + 1
  MappedVector<uint32_t> group_of(model.size(), UINT32_MAX);
  std::vector<OpStats> out;
  std::vector<uint8_t> all_flops, all_bytes;
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    if (cls == EventClass::kDerived || cls == EventClass::kOther) continue;
    uint32_t& slot = index[static_cast<int64_t>(model.name[e]) << 8 | static_cast<int64_t>(cls)];
    if (slot == 0) {
      OpStats s;
      s.name = std::string(model.String(model.name[e]));
      s.cls = cls;
      s.flops = s.bytes = 0;
      out.push_back(std::move(s));
      all_flops.push_back(1), all_bytes.push_back(1);
      slot = static_cast<uint32_t>(out.size());
    }
    const uint32_t g = slot - 1;
    group_of[e] = g;
    OpStats& s = out[g];
    ++s.count;
    s.total_ns += model.duration_ns[e];
    s.self_ns += self[e];
    all_flops[g] &= model.flops[e] >= 0;
    all_bytes[g] &= model.bytes[e] >= 0;
    s.flops += std::max<int64_t>(model.flops[e], 0);
    s.bytes += std::max<int64_t>(model.bytes[e], 0);
  }
  // Pass 2: the durations of each group side by side, then its percentiles.
  std::vector<size_t> begin(out.size() + 1, 0);
  for (size_t g = 0; g < out.size(); ++g) begin[g + 1] = begin[g] + out[g].count;
  MappedVector<int64_t> durations(begin.back());
  std::vector<size_t> fill(begin.begin(), begin.end() - 1);
  for (size_t e = 0; e < model.size(); ++e) {
    if (group_of[e] != UINT32_MAX) durations[fill[group_of[e]]++] = model.duration_ns[e];
  }
  for (size_t g = 0; g < out.size(); ++g) {
    OpStats& s = out[g];
    Percentiles(std::span(durations.data() + begin[g], durations.data() + begin[g + 1]), s.p50_ns,
                s.p99_ns, s.max_ns);
    s.mean_ns = static_cast<double>(s.total_ns) / static_cast<double>(s.count);
    if (!all_flops[g]) s.flops = -1;
    if (!all_bytes[g]) s.bytes = -1;
  }
  return out;
}

}  // namespace

MappedVector<int64_t> SelfTimes(const TraceModel& model) {
  MappedVector<int64_t> self(model.size());
  for (size_t e = 0; e < self.size(); ++e) self[e] = model.duration_ns[e];
  // Host events by track, in the order they open: by start, the longer first
  // (a parent and its first child may start together).
  TrackGroups by_track = GroupByTrack(model, [&](size_t e) {
    const EventClass cls = model.cls[e];
    return !(IsDevice(cls) || cls == EventClass::kDerived || cls == EventClass::kOther);
  });
  SortByOpening(model, by_track);
  for (const uint32_t e : by_track.events) self[e] = 0;
  const auto end_of = [&](uint32_t e) { return model.start_ns[e] + model.duration_ns[e]; };
  std::vector<uint32_t> open;  // opened and not yet closed, innermost last
  for (size_t t = 0; t + 1 < by_track.begin.size(); ++t) {
    const std::span<uint32_t> events(by_track.events.data() + by_track.begin[t],
                                     by_track.events.data() + by_track.begin[t + 1]);
    // Every instant goes to the innermost event open then: the one opened last.
    open.clear();
    int64_t now = 0;
    const auto advance = [&](int64_t to) {
      while (!open.empty()) {
        const uint32_t top = open.back();
        const int64_t end = end_of(top);
        if (end > to) {
          self[top] += to - now;
          break;
        }
        self[top] += std::max<int64_t>(0, end - now);  // it may have ended inside a child
        now = std::max(now, end);
        open.pop_back();
      }
      now = to;
    };
    for (const uint32_t e : events) {
      advance(model.start_ns[e]);
      open.push_back(e);
    }
    advance(INT64_MAX);
  }
  return self;
}

void Percentiles(std::span<int64_t> values, int64_t& p50, int64_t& p99, int64_t& max) {
  const size_t n = values.size();
  const auto first = values.begin(), last = values.end();
  if (n == 0) {
    p50 = p99 = max = 0;
    return;
  }
  const size_t i99 = RankIndex(n, 99), i50 = RankIndex(n, 50);
  std::nth_element(first, first + i99, last);
  p99 = first[i99];
  max = *std::max_element(first + i99, last);
  std::nth_element(first, first + i50, first + i99 + 1);
  p50 = first[i50];
}

std::vector<OpStats> ComputeOpStats(const TraceModel& model) {
  return ComputeOpStats(model, SelfTimes(model));
}

std::vector<OpStats> ComputeOpStats(const TraceModel& model, std::span<const int64_t> self) {
  std::vector<OpStats> out = GroupByNameAndClass(model, self);
  int64_t device_total = 0, host_op_self = 0;
  for (const OpStats& s : out) {
    if (IsDevice(s.cls)) device_total += s.total_ns;
    if (s.cls == EventClass::kHostOp) host_op_self += s.self_ns;
  }
  for (OpStats& s : out) {
    const auto pct = [](int64_t part, int64_t whole) {
      return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
    };
    if (IsDevice(s.cls)) {
      s.share_pct = pct(s.total_ns, device_total);
    } else if (s.cls == EventClass::kHostOp) {
      s.share_pct = pct(s.self_ns, host_op_self);
    } else {
      s.share_pct = -1;
    }
  }
  std::sort(out.begin(), out.end(), [](const OpStats& a, const OpStats& b) {
    if (a.self_ns != b.self_ns) return a.self_ns > b.self_ns;
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.name != b.name) return a.name < b.name;
    return a.cls < b.cls;
  });
  return out;
}

std::vector<TypeStats> ComputeKernelTypes(const TraceModel& model) {
  std::map<std::string, TypeStats> by_type;
  Int64Map<uint32_t> type_of;     // op type id -> index in `types` + 1
  Int64Map<uint8_t> named;        // (op type, kernel name) seen
  std::vector<TypeStats*> types;  // map nodes do not move
  int64_t device_total = 0;
  bool typed = false;
  for (size_t e = 0; e < model.size(); ++e) {
    if (!IsDevice(model.cls[e])) continue;
    device_total += model.duration_ns[e];
    if (model.cls[e] != EventClass::kKernel || model.op_type[e] == 0) continue;
    typed = true;
    uint32_t& k = type_of[model.op_type[e]];
    if (k == 0) {
      const std::string type(model.String(model.op_type[e]));
      TypeStats& t = by_type[type];
      t.type = type;
      types.push_back(&t);
      k = static_cast<uint32_t>(types.size());
    }
    TypeStats& t = *types[k - 1];
    uint8_t& seen = named[static_cast<int64_t>(uint64_t{model.op_type[e]} << 32 | model.name[e])];
    if (seen == 0) seen = 1, ++t.names;
    ++t.count;
    t.total_ns += model.duration_ns[e];
  }
  if (!typed) return {};
  std::vector<TypeStats> out;
  for (auto& [type, t] : by_type) {
    t.share_pct = device_total > 0 ? 100.0 * static_cast<double>(t.total_ns) / device_total : 0;
    out.push_back(t);
  }
  std::sort(out.begin(), out.end(),
            [](const TypeStats& a, const TypeStats& b) { return a.total_ns > b.total_ns; });
  return out;
}

namespace {

using core::ResultTable;
using core::Unit;
using core::Value;

// One table per kind of row, each with one denominator for its share.
struct Kind {
  const char* section;
  const char* title;
  const char* share;  // column title of the share, or nullptr
  bool (*keep)(EventClass);
};
constexpr Kind kKinds[] = {
    {"operators", "Framework operators by self time", "% self",
     [](EventClass c) { return c == EventClass::kHostOp; }},
    {"kernels", "Device kernels, collectives, copies, sets, DMA and waits by time", "% device",
     [](EventClass c) { return IsDevice(c); }},
    {"host_calls", "Runtime calls, waits, data loading and Python functions by self time", nullptr,
     [](EventClass c) {
       return c == EventClass::kRuntime || c == EventClass::kSync || c == EventClass::kPython ||
              c == EventClass::kDataLoading;
     }},
    {"annotations", "Steps and annotations (spans, not operators)", nullptr,
     [](EventClass c) {
       return c == EventClass::kStep || c == EventClass::kAnnotation ||
              c == EventClass::kDeviceAnnotation;
     }},
};

// The operators, kernels, host calls and annotations; framework operators
// with the device time they caused where op_device ran.
void AddOperatorTables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const std::string path(c.path);
  const OpDeviceTime& op_device = a.op_device;
  for (const Kind& kind : kKinds) {
    std::vector<const OpStats*> rows;
    for (const auto& s : a.operators) {
      if (kind.keep(s.cls)) rows.push_back(&s);
    }
    const bool device = std::string_view(kind.section) == "kernels";
    const bool operators = std::string_view(kind.section) == "operators";
    if (device) {  // device work does not nest: rank by total time
      std::stable_sort(rows.begin(), rows.end(),
                       [](const auto* x, const auto* y) { return x->total_ns > y->total_ns; });
    }
    // Framework operators carry the device time they caused (op_device), and
    // rank by it where the trace has device work.
    std::map<std::string_view, const OpDeviceRow*> device_of;
    if (operators) {
      for (const auto& r : op_device.ops) device_of.emplace(r.name, &r);
      if (op_device.has_device) {
        const auto device_self = [&](const OpStats* s) {
          const auto it = device_of.find(s->name);
          return it == device_of.end() ? int64_t{0} : it->second->device_self_ns;
        };
        std::stable_sort(rows.begin(), rows.end(), [&](const auto* x, const auto* y) {
          return device_self(x) > device_self(y);
        });
      }
    }
    ResultTable table;
    table.section = kind.section;
    table.hidden_when_empty = rows.empty();
    table.title = kind.title;
    table.columns = {{"trace", "Trace", 0, false},
                     {"format", "Format", 0, false},
                     {"events", "Events", 0, false},
                     {"operator", "Name"},
                     {"category", "Category"},
                     {.key = "count", .header = "Count", .unit = Unit::kCount},
                     {.key = "self_ns", .header = "Self", .precision = 3, .unit = Unit::kTime},
                     {.key = "total_ns", .header = "Total", .precision = 3, .unit = Unit::kTime},
                     {.key = "mean_ns", .header = "Mean", .precision = 3, .unit = Unit::kTime},
                     {.key = "p50_ns", .header = "p50", .precision = 3, .unit = Unit::kTime},
                     {.key = "p99_ns", .header = "p99", .precision = 3, .unit = Unit::kTime},
                     {.key = "max_ns", .header = "Max", .precision = 3, .unit = Unit::kTime}};
    if (kind.share != nullptr) table.columns.push_back({"share_pct", kind.share, 1});
    if (operators) {
      table.columns.push_back(
          {.key = "device_self_ns", .header = "Device self", .precision = 3, .unit = Unit::kTime});
      table.columns.push_back({.key = "device_total_ns",
                               .header = "Device total",
                               .precision = 3,
                               .unit = Unit::kTime});
      table.columns.push_back({"kernels", "Kernels"});
      table.columns.push_back({"kernels_total", "Kernels in total", 0, false});
      table.columns.push_back({"top_kernels", "Kernels behind it", 0, false});
    }
    table.columns.push_back({.key = "flops",
                             .header = "FLOPs",
                             .precision = 0,
                             .terminal = false,
                             .unit = Unit::kFlop});
    table.columns.push_back({.key = "bytes",
                             .header = "Bytes",
                             .precision = 0,
                             .terminal = false,
                             .unit = Unit::kBytes});
    const size_t shown = c.Shown(rows.size(), table);
    for (size_t i = 0; i < shown; ++i) {
      const auto& s = *rows[i];
      std::vector<Value> row = {path,
                                std::string(c.format),
                                c.events,
                                s.name,
                                std::string(Name(s.cls)),
                                s.count,
                                s.self_ns,
                                s.total_ns,
                                s.mean_ns,
                                s.p50_ns,
                                s.p99_ns,
                                s.max_ns};
      if (kind.share != nullptr) row.emplace_back(s.share_pct);
      if (operators) {
        const auto it = device_of.find(s.name);
        const OpDeviceRow* d = it == device_of.end() ? nullptr : it->second;
        if (!op_device.has_device) {
          row.insert(row.end(), 5, Value{});
        } else {
          row.push_back(d ? d->device_self_ns : 0);
          row.push_back(d ? d->device_total_ns : 0);
          row.push_back(d ? d->kernels : 0);
          row.push_back(d ? d->kernels_total : 0);
          row.push_back(d ? d->top_kernels : std::string());
        }
      }
      row.push_back(s.flops >= 0 ? Value{s.flops} : Value{});
      row.push_back(s.bytes >= 0 ? Value{s.bytes} : Value{});
      table.AddRow(std::move(row));
    }
    if (operators) {
      table.notes.push_back(
          "Self: each call's time less the calls nested in it on the same thread; the shares of "
          "self time add up to 100%.");
      if (op_device.has_device) table.notes.push_back(DeviceNote(op_device));
    }
    tables.push_back(std::move(table));
  }
}

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  AddOperatorTables(a, c, tables);
  ResultTable table;  // always: empty when nothing was found, its columns kept
  table.hidden_when_empty = a.kernel_types.empty();
  table.section = "kernel_types";
  table.title = "Device tasks by operator type";
  table.columns = {
      {"trace", "Trace", 0, false},
      {"type", "Type"},
      {.key = "count", .header = "Count", .unit = Unit::kCount},
      {"names", "Kernel names"},
      {.key = "total_ns", .header = "Total", .precision = 3, .unit = Unit::kTime},
      {.key = "share_pct", .header = "% device", .precision = 1, .unit = Unit::kPercent}};
  for (const auto& k : a.kernel_types) {
    table.AddRow({std::string(c.path), k.type, k.count, k.names, k.total_ns, k.share_pct});
    if (table.rows.size() == 20) break;
  }
  tables.push_back(std::move(table));
}

}  // namespace

// A framework operator's family, for a share no single operator reaches; "" none.
std::string OperatorFamily(std::string_view op) {
  const std::string fn = Lower(FunctionOf(op));
  const auto any = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), fn) != names.end();
  };
  if (NamespaceOf(op) != "aten") return "";
  if (any({"mm", "bmm", "addmm", "matmul", "linear", "baddbmm", "addbmm", "addmv", "mv", "dot"}))
    return "Matrix multiplies";
  if (fn.find("conv") != std::string::npos) return "Convolutions";
  if (any({"copy_", "clone", "contiguous", "to", "_to_copy", "cat", "stack", "index_select",
           "gather", "scatter", "index", "embedding"}))
    return std::string(kDataMovementFamily);
  if (fn.find("norm") != std::string::npos) return "Normalisations";
  if (any({"bernoulli_", "dropout", "native_dropout", "rand", "randn", "uniform_", "normal_"}))
    return "Random number generation (dropout)";
  return "";
}

namespace {

// One operator dominating the compute device; on the CPU, else one family.
constexpr double kDominantMinWindowPct = 10;

void DominantOperatorRule(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  const Thresholds& t = c.thresholds;
  const bool cpu = a.compute_on == ComputeOn::kCpu;
  const OpStats* top = nullptr;
  int64_t whole = 0;
  int names = 0;  // one operator alone is trivially "dominant"
  for (const OpStats& s : a.operators) {
    const bool on_device = cpu ? s.cls == EventClass::kHostOp : IsDevice(s.cls);
    if (!on_device) continue;
    ++names;
    whole += cpu ? s.self_ns : s.total_ns;
    // Copies and collectives have their own findings.
    // (On the CPU, collectives are framework operators known by name.)
    if (s.cls != EventClass::kKernel && s.cls != EventClass::kHostOp) continue;
    if (s.cls == EventClass::kHostOp && IsCommunication(s.name)) continue;
    if (top == nullptr || (cpu ? s.self_ns > top->self_ns : s.total_ns > top->total_ns)) top = &s;
  }
  // Where the compute device worked under a tenth of the diagnosed window (a
  // few kernels in seconds of nothing recorded), its largest operator is not
  // where the run's time goes: no share of its time is judged.
  const auto* at = a.results.Get<Attribution>(kAttributionPass);
  if (at != nullptr && at->window_ns > 0 &&
      100.0 * static_cast<double>(whole) <
          kDominantMinWindowPct * static_cast<double>(at->window_ns)) {
    return;
  }
  // On a CPU trace with complete steps, the operator must lead the steps'
  // own compute too (the attribution's window, warm-up steps left out): an
  // operator of a one-off first step (weights initialised, a model built)
  // dominates the trace's totals but not the steady state.
  bool leads_steps = true;
  if (cpu && top != nullptr && at != nullptr && at->complete_steps > 0) {
    const auto& in_steps = at->top[static_cast<size_t>(StepState::kCompute)];
    const auto it = std::find_if(in_steps.begin(), in_steps.end(),
                                 [&](const auto& x) { return x.first == top->name; });
    leads_steps =
        it != in_steps.end() && Pct(it->second, at->Of(StepState::kCompute)) >= t.dominant_op_pct;
  }
  const int64_t top_ns = top == nullptr ? 0 : cpu ? top->self_ns : top->total_ns;
  // Dominant by one outlier call (ten times its median or more, and without
  // it under the threshold): run-to-run noise, not the operator's cost.
  const int64_t longest = top == nullptr ? 0 : std::min(top->max_ns, top_ns);
  const bool outlier = top != nullptr && top->p50_ns <= longest / 10 && whole > longest &&
                       Pct(top_ns - longest, whole - longest) < t.dominant_op_pct;
  if (top != nullptr && names >= 2 && whole > 0 && top_ns >= t.min_judged_ns && !outlier &&
      leads_steps && Pct(top_ns, whole) >= t.dominant_op_pct) {
    const std::string n = Lower(top->name);
    const bool heavy = Contains(n, "conv") || Contains(n, "gemm") || Contains(n, "mm") ||
                       Contains(n, "matmul") || Contains(n, "linear");
    const bool attention = !cpu && !heavy && KernelFamily(top->name) == "attention";
    const bool copies = cpu && OperatorFamily(top->name) == kDataMovementFamily;
    // A templated kernel's name runs to thousands of characters (CK's and
    // CUTLASS's, whose function is a generic entry: ck_tile::kentry<...>):
    // the title keeps its first 100 bytes (whole UTF-8 characters), the
    // evidence the whole name.
    constexpr size_t kTitleName = 100;
    const bool shortened = top->name.size() > kTitleName;
    const std::string title_name = core::CutUtf8(top->name, kTitleName);
    std::string action =
        attention ? std::string(
                        "It is an attention kernel: check that the shapes run a fused (flash) "
                        "implementation and its roofline row; fusing it with its neighbours "
                        "is not the lever, fewer or shorter sequences and a faster kernel are.")
        : heavy ? (cpu ? "It is a matmul/convolution: check its roofline row; on the CPU use "
                         "oneDNN-backed layouts (channels_last), bf16 autocast where the CPU "
                         "supports it (AVX-512 BF16, AMX), and enough intra-op threads "
                         "(torch.set_num_threads)."
                       : "It is a matmul/convolution: check its roofline row for how close it is "
                         "to the device's peak, and its dtype (tensor cores need fp16/bf16/tf32).")
        // Calls of a few microseconds each: their number is the cost.
        : top->mean_ns < kTinyOperatorNs
            ? fmt::format(
                  "Its {} calls average {:.1f} µs (p99 {:.1f} µs): their number, not "
                  "each call's speed, is the cost; call it fewer times on larger "
                  "tensors (vectorise, batch the small ones) or fuse it with its "
                  "neighbours{}.",
                  top->count, top->mean_ns / 1e3, top->p99_ns / 1e3,
                  a.pytorch ? " (torch.compile)" : "")
        : copies ? "It copies data: " + std::string(kCopyLessAdvice)
                 : fmt::format(
                       "Find why it takes this long: {} calls, mean {:.3f} ms, p99 {:.3f} "
                       "ms; avoid repeated calls or fuse it with its neighbours.",
                       top->count, top->mean_ns / 1e6, top->p99_ns / 1e6);
    out.push_back(
        {"dominant_operator", Severity::kInfo,
         fmt::format("'{}' takes {:.1f}% of {} {} time", title_name, Pct(top_ns, whole),
                     cpu ? "operator self" : "device", cpu ? "CPU" : "kernel"),
         fmt::format("{} calls, {:.3f} ms {}, of {:.3f} ms{}", top->count, top_ns / 1e6,
                     cpu ? "self time" : "on the device", whole / 1e6,
                     shortened ? fmt::format(" ({} in full: {})",
                                             cpu ? "the operator" : "the kernel", top->name)
                               : std::string()),
         action});
    return;
  }
  // One that would dominate but for an outlier or its few microseconds: no
  // family either (the family would be dominated by the same).
  if (!cpu || whole <= 0 || (top != nullptr && Pct(top_ns, whole) >= t.dominant_op_pct)) return;
  // No single operator dominates: does one family of framework operators?
  std::map<std::string, std::pair<int64_t, std::string>> families;  // -> self ns, members
  for (const OpStats& s : a.operators) {
    if (s.cls != EventClass::kHostOp) continue;
    const std::string family = OperatorFamily(s.name);
    if (family.empty()) continue;
    auto& [ns, members] = families[family];
    ns += s.self_ns;
    if (s.self_ns * 100 >= whole) {  // name the members of 1% or more
      members +=
          fmt::format("{}{} {:.1f}%", members.empty() ? "" : ", ", s.name, Pct(s.self_ns, whole));
    }
  }
  const auto best = std::max_element(
      families.begin(), families.end(),
      [](const auto& x, const auto& y) { return x.second.first < y.second.first; });
  if (best == families.end() || Pct(best->second.first, whole) < t.dominant_op_pct ||
      best->second.first < t.min_judged_ns) {
    return;
  }
  out.push_back({"dominant_operator", Severity::kInfo,
                 fmt::format("{} take {:.1f}% of operator self CPU time", best->first,
                             Pct(best->second.first, whole)),
                 fmt::format("{:.3f} ms of {:.3f} ms: {}", best->second.first / 1e6, whole / 1e6,
                             best->second.second),
                 best->first == "Matrix multiplies" || best->first == "Convolutions"
                     ? "Check their achieved FLOP/s in the roofline table; on the CPU use oneDNN "
                       "(channels_last for convolutions), bf16 autocast where the CPU supports it "
                       "(AVX-512 BF16, AMX), and enough intra-op threads (torch.set_num_threads)."
                     : "Look for calls that can be avoided or fused (torch.compile fuses "
                       "elementwise and data-movement operators)."});
}

}  // namespace

Pass SelfTimesPass() {
  Pass pass{kSelfTimesPass,
            "How long is each event the innermost one open on its track (its self time)?",
            {},
            [](const TraceModel& model, Analysis& a) {
              a.results.Set(kSelfTimesPass, SelfTimes(model));
            }};
  pass.scratch = true;  // a column the size of the trace, read by op_stats and op_device
  return pass;
}

std::span<const int64_t> SelfTimesOf(const Analysis& a) {
  const auto* self = a.results.Get<MappedVector<int64_t>>(kSelfTimesPass);
  if (self == nullptr) throw Error(ErrorCode::kInternal, "the self_times pass has not run");
  return {self->data(), self->size()};
}

Pass OpStatsPass() {
  return {"op_stats",
          "Which operators take the time: count, total, percentiles, share.",
          {kSelfTimesPass},
          [](const TraceModel& model, Analysis& a) {
            a.operators = ComputeOpStats(model, SelfTimesOf(a));
            a.kernel_types = ComputeKernelTypes(model);
          },
          Tables,
          {{"dominant_operator",
            {"op_stats"},
            [](const Thresholds& t) {
              return fmt::format(
                  "one operator (copies, sets and collectives aside; two or more operators "
                  "present) takes {:g}% or more of the compute device's time and {:g} ms, and "
                  "not by one outlier call (ten times its median or more, without which it "
                  "would be under {:g}%); on the CPU, else one family of framework operators "
                  "(matrix multiplies, convolutions, data movement, ...); not where the compute "
                  "device's time is under {:g}% of the diagnosed window; on a CPU trace with "
                  "complete steps, the operator also takes that share of the steps' own compute "
                  "(an operator of a one-off first step is not the steady state's)",
                  t.dominant_op_pct, t.min_judged_ns / 1e6, t.dominant_op_pct,
                  kDominantMinWindowPct);
            },
            DominantOperatorRule}}};
}

}  // namespace opscope::analyze
