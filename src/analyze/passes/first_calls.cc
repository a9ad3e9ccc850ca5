// First calls that cost far more than the later ones: one-off first-use work
// (lazy loading of a library's kernels, handle creation, autotuning, the
// caching allocator's first growth) inside the window the diagnosis judges,
// which is not what the operator costs per step (issue 36, class 5). One
// analysis in one file: its pass, its table and its rule, registered with one
// line in registry.cc (docs/seams.md).
//
// For each framework operator and its recorded input shapes (a shape's first
// call is its own), the calls in time order: the first is a first-use call
// where it lasts 1 ms or more and 10 times the median of the later calls or
// more (two later calls at least). Only first calls inside the window count:
// the complete steps where the trace has them (a warm-up step left out of
// them holds its first calls), else the trace's span; a first call spent
// mostly in a call that waits for the device (a synchronisation, a blocking
// copy) waited for work already queued, and is not one. Their time is the
// union of those calls, so a first call nested in another (aten::addmm in
// aten::linear) counts once; the table lists the innermost.
#include "analyze/passes/first_calls.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "analyze/median.h"
#include "analyze/names.h"
#include "analyze/passes/pass.h"
#include "analyze/passes/steps.h"
#include "analyze/runtime_calls.h"

namespace opscope::analyze {
namespace {

constexpr std::string_view kPassName = kFirstCallsPass;
// A first call's least duration, and how many times the later calls' median.
constexpr int64_t kFirstMinNs = 1'000'000;
constexpr double kFirstRatio = 10;
// The rule: the first calls' share of the window, and their least time.
constexpr double kFirstPct = 5;
constexpr int64_t kFirstTotalMinNs = 2'000'000;

// The host's calls that wait for the device: synchronisations, and copies
// that block (runtime_calls.h), as one union.
Intervals DeviceWaits(const TraceModel& model) {
  const CorrelationIndex task_of(model, [&](size_t e) { return IsDevice(model.cls[e]); });
  std::vector<RuntimeKind> kind_of(model.string_count(), RuntimeKind::kUnknown);
  UnionBuilder waits;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kRuntime && model.cls[e] != EventClass::kSync) continue;
    RuntimeKind& kind = kind_of[model.name[e]];
    if (kind == RuntimeKind::kUnknown) kind = RuntimeKindOf(model.String(model.name[e]));
    const bool waits_for_device =
        model.cls[e] == EventClass::kSync || kind == RuntimeKind::kBlocked ||
        (kind == RuntimeKind::kAsyncCopy && CopyBlocks(model, task_of.Find(model.correlation[e])));
    if (waits_for_device) waits.Add({model.start_ns[e], model.start_ns[e] + model.duration_ns[e]});
  }
  return waits.Take();
}

FirstCalls Compute(const TraceModel& model, const Analysis& a) {
  FirstCalls out;
  const Intervals window = StepsElseSpan(a.steps, a.span);
  out.complete_steps = a.step_summary.complete;
  out.window_ns = Total(window);
  if (out.window_ns <= 0) return out;
  // Each operator with its shapes: its calls' events (model order is by start).
  std::map<std::pair<uint32_t, uint32_t>, std::vector<size_t>> calls;
  std::vector<int8_t> judged(model.string_count(), -1);  // by name: an operator, not a wait
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kHostOp) continue;
    int8_t& j = judged[model.name[e]];
    if (j < 0) {
      const std::string_view name = model.String(model.name[e]);
      j = IsFrameworkOperator(name) && !IsSyncCall(name);
    }
    if (j == 1) calls[{model.name[e], model.input_dims[e]}].push_back(e);
  }
  std::vector<size_t> firsts;
  std::vector<FirstCall> rows;
  for (auto& [key, events] : calls) {
    if (events.size() < 3) continue;
    std::stable_sort(events.begin(), events.end(),
                     [&](size_t x, size_t y) { return model.start_ns[x] < model.start_ns[y]; });
    const size_t first = events[0];
    const int64_t first_ns = model.duration_ns[first];
    if (first_ns < kFirstMinNs) continue;
    std::vector<int64_t> later;
    for (size_t i = 1; i < events.size(); ++i) later.push_back(model.duration_ns[events[i]]);
    const int64_t median = IntegerMedian(std::move(later));
    if (static_cast<double>(first_ns) < kFirstRatio * static_cast<double>(median)) continue;
    const int64_t begin = model.start_ns[first];
    if (Covered(window, begin, begin + first_ns) == 0) continue;
    firsts.push_back(first);
    // The shapes as recorded, without the layout's white space ("[[2880], [888, 512]]").
    std::string shapes;
    for (const char ch : model.String(key.second)) {
      if (ch == ',') {
        shapes += ", ";
      } else if (ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t') {
        shapes += ch;
      }
    }
    rows.push_back({std::string(model.String(key.first)), std::move(shapes),
                    static_cast<int64_t>(events.size()), first_ns, median, begin});
  }
  // A first call spent mostly in a call that waits for the device (a
  // synchronisation, a copy that blocks) waited for work already queued: its
  // time is the device's, not first-use work.
  if (!firsts.empty()) {
    const Intervals waiting = DeviceWaits(model);
    size_t kept = 0;
    for (size_t i = 0; i < firsts.size(); ++i) {
      const int64_t b = model.start_ns[firsts[i]], d = model.duration_ns[firsts[i]];
      if (2 * Covered(waiting, b, b + d) >= d) continue;
      if (kept != i) firsts[kept] = firsts[i], rows[kept] = std::move(rows[i]);
      ++kept;
    }
    firsts.resize(kept), rows.resize(kept);
  }
  Intervals spans;
  for (const size_t e : firsts) {
    const int64_t b = model.start_ns[e];
    spans.push_back({b, b + model.duration_ns[e]});
  }
  out.ns = Total(Intersect(Union(std::move(spans)), window));
  // The innermost: a first call that holds another on its thread is left out
  // of the list (its time is the other's).
  for (size_t i = 0; i < firsts.size(); ++i) {
    const size_t e = firsts[i];
    const int64_t b = model.start_ns[e], f = b + model.duration_ns[e];
    const bool holds = std::any_of(firsts.begin(), firsts.end(), [&](size_t o) {
      return o != e && model.track[o] == model.track[e] && model.start_ns[o] >= b &&
             model.start_ns[o] + model.duration_ns[o] <= f;
    });
    if (!holds) out.calls.push_back(std::move(rows[i]));
  }
  std::sort(out.calls.begin(), out.calls.end(), [](const FirstCall& x, const FirstCall& y) {
    return x.first_ns - x.later_median_ns > y.first_ns - y.later_median_ns;
  });
  return out;
}

std::string WindowText(const FirstCalls& f) {
  return f.complete_steps > 0 ? fmt::format("the {} complete step{} ({:.3f} ms)", f.complete_steps,
                                            f.complete_steps == 1 ? "" : "s", f.window_ns / 1e6)
                              : fmt::format("the trace's span ({:.3f} ms)", f.window_ns / 1e6);
}

using core::ResultTable;
using core::Unit;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const auto* f = a.results.Get<FirstCalls>(kPassName);
  if (f == nullptr) return;
  ResultTable table;
  table.hidden_when_empty = f->calls.empty();
  table.section = std::string(kPassName);
  table.title = fmt::format(
      "First calls far slower than the later ones: one-off first-use work, {:.3f} ms of {}",
      f->ns / 1e6, WindowText(*f));
  table.columns = {{"trace", "Trace", 0, false},
                   {"operator", "Operator"},
                   {"shapes", "Input shapes"},
                   {"calls", "Calls"},
                   {.key = "first_ns", .header = "First call", .precision = 3, .unit = Unit::kTime},
                   {.key = "later_median_ns",
                    .header = "Later calls, median",
                    .precision = 3,
                    .unit = Unit::kTime}};
  const std::string path(c.path);
  for (const FirstCall& x : f->calls) {
    table.AddRow({path, x.name, x.shapes, x.calls, x.first_ns, x.later_median_ns});
  }
  table.notes.push_back(fmt::format(
      "A first call counts where it lasts {:g} ms or more and {:g}x the median of the same "
      "operator's later calls with the same input shapes (two or more); a first call that holds "
      "another is not listed (its time is the other's).",
      kFirstMinNs / 1e6, kFirstRatio));
  tables.push_back(std::move(table));
}

void FirstCallsRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* f = c.analysis.results.Get<FirstCalls>(kPassName);
  if (f == nullptr || f->calls.empty() || f->ns < kFirstTotalMinNs ||
      Pct(f->ns, f->window_ns) < kFirstPct) {
    return;
  }
  std::string evidence;
  for (size_t i = 0; i < f->calls.size() && i < 3; ++i) {
    const FirstCall& x = f->calls[i];
    evidence += fmt::format("{}'{}'{} {:.3f} ms, its {} later calls {:.3f} ms (median)",
                            i == 0 ? "" : "; ", x.name, x.shapes.empty() ? "" : " " + x.shapes,
                            x.first_ns / 1e6, x.calls - 1, x.later_median_ns / 1e6);
  }
  if (f->calls.size() > 3) evidence += fmt::format("; {} more", f->calls.size() - 3);
  out.push_back(
      {"first_calls", Severity::kInfo,
       fmt::format("First calls take {:.3f} ms ({:.1f}% of {}), far longer than the later calls: "
                   "one-off first-use work, not the operators' per-step cost",
                   f->ns / 1e6, Pct(f->ns, f->window_ns), WindowText(*f)),
       evidence + " (the first_calls table has them all)",
       "Judge steady-state calls: profile after a warm-up iteration (torch.profiler's schedule "
       "with warmup steps) or run each shape once before timing. The first call pays for lazy "
       "kernel loading, library handles, autotuning (cudnn.benchmark) and the allocator's "
       "growth; if new shapes keep arriving (dynamic batch or sequence lengths), pad or bucket "
       "them so each is paid once."});
}

}  // namespace

Pass FirstCallsPass() {
  return {kPassName,
          "Which operators' first calls cost far more than their later ones (one-off first use)?",
          {"steps"},
          [](const TraceModel& model, Analysis& a) { a.results.Set(kPassName, Compute(model, a)); },
          Tables,
          {{"first_calls",
            {std::string_view(kPassName)},
            [](const Thresholds&) {
              return fmt::format(
                  "first calls of framework operators (per input shapes, with two or more later "
                  "calls) that last {:g} ms or more and {:g}x the later calls' median take, "
                  "nested calls counted once, {:g}% or more of the window (the complete steps, "
                  "else the trace's span) and {:g} ms; info: one-off work, no per-step saving",
                  kFirstMinNs / 1e6, kFirstRatio, kFirstPct, kFirstTotalMinNs / 1e6);
            },
            FirstCallsRule}}};
}

}  // namespace opscope::analyze
