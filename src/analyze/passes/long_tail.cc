// Operators with a long tail: the pass, its table and its rule.
#include "analyze/passes/long_tail.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "analyze/names.h"
#include "analyze/passes/attribution.h"
#include "analyze/passes/host_waits.h"

namespace opscope::analyze {

std::vector<LongTail> ComputeLongTail(const std::vector<OpStats>& operators) {
  std::vector<LongTail> out;
  for (const OpStats& g : operators) {
    if (g.cls == EventClass::kStep) continue;  // the steps' spread is the workload's
    if (g.count < 10 || g.p50_ns <= 0 || g.p99_ns < 3 * g.p50_ns) continue;
    out.push_back({g.name, g.cls, g.count, g.p50_ns, g.p99_ns, g.max_ns,
                   static_cast<double>(g.p99_ns) / static_cast<double>(g.p50_ns)});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.ratio != b.ratio) return a.ratio > b.ratio;
    return a.name != b.name ? a.name < b.name : a.cls < b.cls;
  });
  if (out.size() > 10) out.resize(10);
  return out;
}

void MeasureWaits(const TraceModel& model, std::vector<LongTail>& tail) {
  std::vector<uint32_t> waiting;  // the names of the long-tail calls that wait
  for (const LongTail& t : tail) {
    if (!IsDevice(t.cls) && IsSyncCall(t.name)) {
      for (size_t id = 0; id < model.string_count(); ++id) {
        if (model.String(static_cast<uint32_t>(id)) == t.name) {
          waiting.push_back(static_cast<uint32_t>(id));
        }
      }
    }
  }
  if (waiting.empty()) return;
  UnionBuilder device, communication;
  std::vector<UnionBuilder> calls(waiting.size());
  for (size_t e = 0; e < model.size(); ++e) {
    const int64_t begin = model.start_ns[e], end = begin + model.duration_ns[e];
    if (IsDevice(model.cls[e])) {
      device.Add({begin, end});
      if (model.cls[e] == EventClass::kCommunication) communication.Add({begin, end});
    } else if (const auto at = std::find(waiting.begin(), waiting.end(), model.name[e]);
               at != waiting.end()) {
      calls[static_cast<size_t>(at - waiting.begin())].Add({begin, end});
    }
  }
  const Intervals busy = device.Take(), collectives = communication.Take();
  if (busy.empty()) return;  // a CPU trace: the attribution judges it
  for (size_t i = 0; i < waiting.size(); ++i) {
    const Intervals mine = calls[i].Take();
    for (LongTail& t : tail) {
      if (t.name != model.String(waiting[i]) || IsDevice(t.cls)) continue;
      t.wait_ns = std::max<int64_t>(t.wait_ns, 0) + Total(mine);
      t.device_busy_ns = std::max<int64_t>(t.device_busy_ns, 0) + Total(Intersect(mine, busy));
      t.device_comm_ns =
          std::max<int64_t>(t.device_comm_ns, 0) + Total(Intersect(mine, collectives));
    }
  }
}

namespace {

using core::ResultTable;
using core::Unit;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const auto* tail = a.results.Get<std::vector<LongTail>>(kLongTailPass);
  if (tail == nullptr) return;
  const std::string path(c.path);
  ResultTable table;  // always: empty when nothing was found, its columns kept
  table.hidden_when_empty = tail->empty();
  table.section = "long_tail";
  table.title = "Long-tail operators: p99 at least 3x the median (10+ calls)";
  table.columns = {{"trace", "Trace", 0, false},
                   {"operator", "Operator"},
                   {"category", "Category"},
                   {.key = "count", .header = "Count", .unit = Unit::kCount},
                   {.key = "p50_ns", .header = "p50", .precision = 3, .unit = Unit::kTime},
                   {.key = "p99_ns", .header = "p99", .precision = 3, .unit = Unit::kTime},
                   {.key = "max_ns", .header = "Max", .precision = 3, .unit = Unit::kTime},
                   {"p99_over_p50", "p99/p50", 1}};
  for (const auto& t : *tail) {
    table.AddRow(
        {path, t.name, std::string(Name(t.cls)), t.count, t.p50_ns, t.p99_ns, t.max_ns, t.ratio});
  }
  tables.push_back(std::move(table));
}

// Synchronizing host calls with a long tail.
constexpr double kSyncBlockedPct = 5;

void SynchronizationsRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* tail = c.analysis.results.Get<std::vector<LongTail>>(kLongTailPass);
  if (tail == nullptr) return;
  for (const auto& lt : *tail) {
    // Host calls that block on the device (device-side waits are not .item()).
    const bool sync = !IsDevice(lt.cls) && IsSyncCall(lt.name);
    if (!sync || lt.ratio < c.thresholds.sync_tail_ratio) continue;
    Finding f{"synchronizations", Severity::kWarning,
              fmt::format("'{}' waits for the device: p99 {:.3f} ms vs median {:.3f} ms", lt.name,
                          lt.p99_ns / 1e6, lt.p50_ns / 1e6),
              fmt::format("{} calls", lt.count),
              // The program's own levers: PyTorch's, else the runtime's.
              c.analysis.pytorch
                  ? "Fewer .item()/.cpu() synchronizations: keep values on the device and read "
                    "them every N steps."
                  : "Fewer host synchronisations: wait on an event for the work a result needs "
                    "(cudaEventSynchronize, cudaStreamWaitEvent; hipEventSynchronize, "
                    "hipStreamWaitEvent) rather than on the whole stream "
                    "or device, and read results every N iterations."};
    // What the device did while the host waited, measured over these calls
    // themselves (the attribution's blocked state can be less: a wait inside
    // compilation or data loading is that region's time there). Where
    // host_waits reports the synchronisations, it says what they cost:
    // silent here. Where the device idled little of them, the long waits are
    // the device's own work (a collective, compute), which removing the
    // synchronisation would not shorten.
    if (SynchronizationsReported(c.analysis)) break;
    const auto* at = c.analysis.results.Get<Attribution>(kAttributionPass);
    const int64_t idle_ns = lt.wait_ns >= 0 ? lt.wait_ns - lt.device_busy_ns
                            : at != nullptr ? at->Of(StepState::kBlocked)
                                            : -1;
    if (at != nullptr && at->window_ns > 0 && idle_ns >= 0 &&
        Pct(idle_ns, at->window_ns) >= kSyncBlockedPct) {
      f.evidence += fmt::format(
          "; the host is blocked {} with the device idle {:.3f} ms ({:.1f}% "
          "of {})",
          lt.wait_ns >= 0 ? "in these calls" : "in synchronisation", idle_ns / 1e6,
          Pct(idle_ns, at->window_ns), DiagnosedWindow(*at));
    } else if (at != nullptr && at->window_ns > 0 && idle_ns >= 0) {
      f.severity = Severity::kInfo;
      // Device work that is mostly collectives waits for the other ranks:
      // the step is decided there, not by this device's compute.
      const bool collectives = lt.device_busy_ns > 0 && 2 * lt.device_comm_ns > lt.device_busy_ns;
      f.evidence += fmt::format(
          "; the host is blocked {} with the device idle {:.3f} ms ({:.1f}% of {}): during the "
          "long waits the device is working",
          lt.wait_ns >= 0 ? "in these calls" : "in synchronisation", idle_ns / 1e6,
          Pct(idle_ns, at->window_ns), DiagnosedWindow(*at));
      if (collectives) {
        f.evidence += fmt::format(", {:.3f} of its {:.3f} ms in collectives",
                                  lt.device_comm_ns / 1e6, lt.device_busy_ns / 1e6);
      }
      f.action =
          collectives
              ? "The long waits are for collectives (their time includes waiting for the other "
                "ranks), not caused by the synchronisation: removing it would not shorten the "
                "step (see the diagnosis for what the collectives wait on). Where the values are "
                "only logged, read them every N steps."
              : "The long waits are for the device's own work, not caused by the "
                "synchronisation: removing it would not shorten the step until that work "
                "shrinks (see the diagnosis). Where the values are only logged, read them every "
                "N steps.";
    }
    out.push_back(std::move(f));
    break;
  }
}

}  // namespace

Pass LongTailPass() {
  return {kLongTailPass,
          "Which operators have a long tail (p99 far above the median)?",
          {"op_stats"},
          [](const TraceModel& model, Analysis& a) {
            std::vector<LongTail> tail = ComputeLongTail(a.operators);
            MeasureWaits(model, tail);
            a.results.Set(kLongTailPass, std::move(tail));
          },
          Tables,
          {{"synchronizations",
            {kLongTailPass},
            [](const Thresholds& t) {
              return fmt::format(
                  "a host call that waits for the device (.item(), synchronize, blocking copies) "
                  "has a p99 {:g}x its median or more (10+ calls); silent where "
                  "host_blocked_synchronization reports the synchronisations; info, not a "
                  "warning, where the device idles during these calls (measured over them) "
                  "under {:g}% of the diagnosed window (the waits are the device's own work)",
                  t.sync_tail_ratio, kSyncBlockedPct);
            },
            SynchronizationsRule}}};
}

}  // namespace opscope::analyze
