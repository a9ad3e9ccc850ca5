// Work that fell back to a CPU: the pass, its table and its rules.
#include "analyze/passes/cpu_fallback.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "analyze/names.h"
#include "analyze/passes/op_device.h"

namespace opscope::analyze {

CpuFallback ComputeCpuFallback(const TraceModel& model) {
  CpuFallback out;
  int64_t device_total = 0;
  std::map<std::string, int64_t> ai_cpu;
  std::map<std::string, std::map<std::string, int64_t>> ai_cpu_types;  // name -> why -> ns
  Intervals launches;  // host calls that put work on the device
  // Device memory traffic (copies, sets, DMA): a copy operator can drive it
  // with no launch call on record (MTIA's dma_request under aten::copy_).
  Intervals traffic;
  // Data loading, per thread: the operators inside it (a DataLoader's
  // collate, aten::stack) are the host's input pipeline, CPU work by design.
  std::map<uint32_t, Intervals> loading;
  // Counted first: grown by doubling, the vector's last copy held 1.5-3x its
  // size (14 MB at the peak of a 1.4M-event trace's analysis).
  launches.reserve(
      static_cast<size_t>(std::count(model.cls.begin(), model.cls.end(), EventClass::kRuntime)));
  bool has_device = false;
  for (size_t e = 0; e < model.size(); ++e) {
    if (IsDevice(model.cls[e])) {
      has_device = true;
      const EventClass cls = model.cls[e];
      if (cls == EventClass::kMemcpy || cls == EventClass::kMemset || cls == EventClass::kDma) {
        traffic.push_back({model.start_ns[e], model.start_ns[e] + model.duration_ns[e]});
      }
      device_total += model.duration_ns[e];
      if (model.String(model.kind[e]) == "AI_CPU") {
        ++out.ai_cpu_count;
        out.ai_cpu_ns += model.duration_ns[e];
        const std::string name(model.String(model.name[e]));
        ai_cpu[name] += model.duration_ns[e];
        std::string why(model.String(model.category[e]));
        if (why == "kernel") why.clear();
        if (model.dtype[e] != 0) {
          why += (why.empty() ? "" : "; ") + std::string(model.String(model.dtype[e]));
        }
        if (!why.empty()) ai_cpu_types[name][why] += model.duration_ns[e];
      }
    } else if (model.cls[e] == EventClass::kRuntime) {
      launches.push_back({model.start_ns[e], model.start_ns[e] + model.duration_ns[e]});
    } else if (model.cls[e] == EventClass::kDataLoading) {
      loading[model.track[e]].push_back(
          {model.start_ns[e], model.start_ns[e] + model.duration_ns[e]});
    }
  }
  out.ai_cpu_share_pct = device_total > 0 ? 100.0 * out.ai_cpu_ns / device_total : 0;
  out.ai_cpu_top.assign(ai_cpu.begin(), ai_cpu.end());
  std::sort(out.ai_cpu_top.begin(), out.ai_cpu_top.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  if (out.ai_cpu_top.size() > 5) out.ai_cpu_top.resize(5);
  for (const auto& [name, ns] : out.ai_cpu_top) {
    std::string why;
    if (const auto it = ai_cpu_types.find(name); it != ai_cpu_types.end()) {
      std::vector<std::pair<std::string, int64_t>> v(it->second.begin(), it->second.end());
      std::stable_sort(v.begin(), v.end(),
                       [](const auto& a, const auto& b) { return a.second > b.second; });
      for (size_t i = 0; i < v.size() && i < 3; ++i) why += (i == 0 ? "" : ", ") + v[i].first;
    }
    out.ai_cpu_why.push_back(std::move(why));
  }
  if (!has_device || launches.empty()) return out;
  const auto merged = Union(std::move(launches));  // in place, not a copy
  const auto moving = Union(std::move(traffic));
  for (auto& [track, spans] : loading) spans = Union(std::move(spans));
  const auto loads = [&](size_t e, int64_t b, int64_t end) {
    const auto it = loading.find(model.track[e]);
    return it != loading.end() && Covered(it->second, b, end) == end - b;
  };
  // Per operator name: its long calls' time with no launch beside them, and
  // how many of its long calls ran under device traffic. A name whose calls
  // mostly move data on the device (a copy operator driving DMA with no
  // launch on record) drives it in the rest too, which may start after the
  // call returns: the name is not host-only.
  struct Alone {
    int64_t ns = 0, calls = 0, moving = 0;
  };
  std::map<std::string, Alone> alone;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kHostOp || model.duration_ns[e] < 1000000) continue;
    // A call that waits for the device (.item()) is a synchronization, not host
    // work; a runtime's own method (XLA's BufferSequencingEvent::Execute) or a
    // Python frame is not an operator that could run on the device.
    const std::string_view name = model.String(model.name[e]);
    if (IsSyncCall(name) || !IsFrameworkOperator(name)) continue;
    const int64_t b = model.start_ns[e], end = b + model.duration_ns[e];
    if (loads(e, b, end)) continue;
    Alone& a = alone[std::string(name)];
    ++a.calls;
    if (Covered(moving, b, end) > 0) {
      ++a.moving;
    } else if (Covered(merged, b, end) == 0) {
      a.ns += model.duration_ns[e];
    }
  }
  std::map<std::string, int64_t> host_only;
  for (const auto& [name, a] : alone) {
    if (a.ns > 0 && 2 * a.moving < a.calls) host_only[name] = a.ns;
  }
  out.host_only_ops.assign(host_only.begin(), host_only.end());
  std::sort(out.host_only_ops.begin(), out.host_only_ops.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  if (out.host_only_ops.size() > 5) out.host_only_ops.resize(5);
  return out;
}

namespace {

using core::ResultTable;
using core::Unit;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const CpuFallback* fallback = a.results.Get<CpuFallback>(kCpuFallbackPass);
  if (fallback == nullptr) return;
  const std::string path(c.path);
  ResultTable table;  // always: empty when nothing was found, its columns kept
  table.hidden_when_empty = fallback->ai_cpu_count <= 0 && fallback->host_only_ops.empty();
  table.section = "cpu_fallback";
  table.title = fmt::format(
      "CPU fallback: {} AI CPU tasks, {:.1f}% of device time; long host operators that "
      "launched no device work",
      fallback->ai_cpu_count, fallback->ai_cpu_share_pct);
  table.columns = {{"trace", "Trace", 0, false},
                   {"kind", "Kind"},
                   {"operator", "Operator"},
                   {.key = "total_ns", .header = "Total", .precision = 3, .unit = Unit::kTime},
                   {"why", "Type; data types (in->out)"}};
  for (size_t i = 0; i < fallback->ai_cpu_top.size(); ++i) {
    const auto& [name, ns] = fallback->ai_cpu_top[i];
    table.AddRow({path, std::string("AI_CPU task"), name, ns,
                  i < fallback->ai_cpu_why.size() ? fallback->ai_cpu_why[i] : std::string()});
  }
  for (const auto& [name, ns] : fallback->host_only_ops) {
    table.AddRow({path, std::string("host only"), name, ns, std::string()});
  }
  tables.push_back(std::move(table));
}

void CpuFallbackRule(const RuleContext& c, std::vector<Finding>& out) {
  const CpuFallback* fallback = c.analysis.results.Get<CpuFallback>(kCpuFallbackPass);
  if (fallback == nullptr || fallback->ai_cpu_share_pct < c.thresholds.ai_cpu_pct) return;
  std::string top;
  for (size_t i = 0; i < fallback->ai_cpu_top.size(); ++i) {
    const auto& [name, ns] = fallback->ai_cpu_top[i];
    const std::string why = i < fallback->ai_cpu_why.size() ? fallback->ai_cpu_why[i] : "";
    top += fmt::format("{}{} {:.3f} ms{}", top.empty() ? "" : "; ", name, ns / 1e6,
                       why.empty() ? std::string() : " (" + why + ")");
  }
  // Judged by what the tasks could cost the run: on a device that mostly
  // idles, a large share of its time is a small part of the trace.
  const double span_pct = Pct(fallback->ai_cpu_ns, c.analysis.span.ns());
  const bool costly = span_pct >= c.thresholds.ai_cpu_pct;
  if (!costly) {
    top += fmt::format(
        ". They take {:.1f}% of the trace's span: the device idles most of it, so moving them "
        "to the AI Core would save little of the run",
        span_pct);
  }
  out.push_back(
      {"cpu_fallback", costly ? Severity::kWarning : Severity::kInfo,
       fmt::format("{} operators run on the AI CPU: {:.1f}% of device time, {:.1f}% of the "
                   "trace's span",
                   fallback->ai_cpu_count, fallback->ai_cpu_share_pct, span_pct),
       top,
       "Check CPU fallback: these operators lack an AI Core kernel for their data type or shape "
       "(often int64 casts); change the dtype or use a supported operator."});
}

// The least share of device time the operators' links must explain before a
// call without a launch beside it is taken to have launched nothing: where
// work is launched from a queue on another thread (torch_npu's task queue)
// and the trace does not link it, no launch runs beside any operator.
constexpr double kLinkedPct = 50;

void HostOnlyRule(const RuleContext& c, std::vector<Finding>& out) {
  const CpuFallback* fallback = c.analysis.results.Get<CpuFallback>(kCpuFallbackPass);
  if (fallback == nullptr || fallback->host_only_ops.empty()) return;
  const OpDeviceTime& ops = c.analysis.op_device;
  if (Pct(ops.linked_ns, ops.device_ns) < kLinkedPct) return;
  out.push_back(
      {"host_only_operators", Severity::kInfo,
       fmt::format("'{}' ran {:.3f} ms on the CPU without launching device work",
                   fallback->host_only_ops[0].first, fallback->host_only_ops[0].second / 1e6),
       fmt::format("{} such operators of 1 ms or more; the operators' links explain {:.1f}% of "
                   "device time",
                   fallback->host_only_ops.size(), Pct(ops.linked_ns, ops.device_ns)),
       "Check whether this work belongs on the device, or runs once outside the step."});
}

}  // namespace

Pass CpuFallbackPass() {
  return {kCpuFallbackPass,
          "What work fell back to a CPU?",
          {},
          [](const TraceModel& model, Analysis& a) {
            a.results.Set(kCpuFallbackPass, ComputeCpuFallback(model));
          },
          Tables,
          {{"cpu_fallback",
            {kCpuFallbackPass},
            [](const Thresholds& t) {
              return fmt::format(
                  "AI CPU tasks take {0:g}% or more of device time (a warning when they also take "
                  "{0:g}% of the trace's span, else info: on a device that mostly idles they cost "
                  "the run little)",
                  t.ai_cpu_pct);
            },
            CpuFallbackRule},
           {"host_only_operators",
            {kCpuFallbackPass, "op_device"},
            [](const Thresholds&) {
              return std::string(
                  "framework operators (names in a lower-case library namespace: aten::, "
                  "c10d::, ...) of 1 ms or more (waits for the device aside) during which no "
                  "launch call ran and no device copy, set or DMA moved data, outside data "
                  "loading (a DataLoader's collate is CPU work by design), in a trace with "
                  "device work and launch calls whose "
                  "operators' links explain half the device time or more (else work may be "
                  "launched from a queue on another thread, as torch_npu's task queue does)");
            },
            HostOnlyRule}}};
}

}  // namespace opscope::analyze
