// What fills each step, and which steps are complete: the pass, its table and its rules.
#include "analyze/passes/steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "analyze/analysis.h"
#include "analyze/compute_device.h"
#include "analyze/intervals.h"
#include "analyze/mapped.h"
#include "analyze/median.h"
#include "analyze/names.h"
#include "analyze/passes/attribution.h"

namespace opscope::analyze {
namespace {

struct StepSpan {
  std::string name;
  int64_t begin_ns, duration_ns;
};

// The trace's own steps (kStep events), else the inferred ones.
std::vector<StepSpan> StepSpans(const TraceModel& model, InferredSteps* inferred) {
  std::vector<StepSpan> spans;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kStep) continue;
    spans.push_back(
        {std::string(model.String(model.name[e])), model.start_ns[e], model.duration_ns[e]});
  }
  if (!spans.empty()) return spans;
  *inferred = InferSteps(model);
  for (size_t k = 0; k < inferred->spans.size(); ++k) {
    spans.push_back(
        {fmt::format("inferred step {}", k), inferred->spans[k].first, inferred->spans[k].second});
  }
  return spans;
}

std::vector<StepBreakdown> Breakdown(const TraceModel& model, ComputeOn on,
                                     const std::vector<StepSpan>& spans) {
  // No step spans, no breakdown: the unions below are the pass's whole cost.
  if (spans.empty()) return {};
  const std::vector<Work> work = ComputeWork(model, on);
  // Counted first, so each list is allocated once at its size (millions of
  // events: no vectors doubling, no reserve of the whole trace per list).
  const auto starts_work = [&](size_t e) {
    const EventClass cls = model.cls[e];
    return cls == EventClass::kHostOp || IsDevice(cls) || work[e] != Work::kNone;
  };
  size_t counts[4] = {0, 0, 0, 0}, starts = 0;
  for (size_t e = 0; e < model.size(); ++e) {
    ++counts[static_cast<size_t>(work[e])];
    starts += starts_work(e);
  }
  Intervals compute, communication, memory;
  compute.reserve(counts[static_cast<size_t>(Work::kCompute)]);
  communication.reserve(counts[static_cast<size_t>(Work::kCommunication)]);
  memory.reserve(counts[static_cast<size_t>(Work::kMemory)]);
  MappedVector<int64_t> work_starts;  // starts of operators and device work
  work_starts.reserve(starts);
  for (size_t e = 0; e < model.size(); ++e) {
    const Interval i{model.start_ns[e], model.start_ns[e] + model.duration_ns[e]};
    if (starts_work(e)) work_starts.push_back(i.begin);
    switch (work[e]) {
      case Work::kNone: continue;
      case Work::kCompute: compute.push_back(i); break;
      case Work::kCommunication: communication.push_back(i); break;
      case Work::kMemory: memory.push_back(i); break;
    }
  }
  std::sort(work_starts.begin(), work_starts.end());
  const auto c = Union(std::move(compute)), m = Union(std::move(communication)),
             mem = Union(std::move(memory));
  // Any work: the union of the three unions (each far shorter than its events).
  Intervals all;
  all.reserve(c.size() + m.size() + mem.size());
  for (const auto* part : {&c, &m, &mem}) all.insert(all.end(), part->begin(), part->end());
  const auto any = Union(std::move(all));
  Intervals both;  // compute or communication
  both.reserve(c.size() + m.size());
  for (const auto* part : {&c, &m}) both.insert(both.end(), part->begin(), part->end());
  const auto compute_or_communication = Union(std::move(both));
  std::vector<StepBreakdown> steps;
  for (const StepSpan& span : spans) {
    StepBreakdown s;
    s.name = span.name;
    s.begin_ns = span.begin_ns;
    s.duration_ns = span.duration_ns;
    const int64_t end = s.begin_ns + s.duration_ns;
    s.compute_ns = Covered(c, s.begin_ns, end);
    s.communication_ns = Covered(m, s.begin_ns, end);
    s.memory_ns = Covered(mem, s.begin_ns, end);
    const int64_t busy = Covered(any, s.begin_ns, end);
    const int64_t compute_or_comm = Covered(compute_or_communication, s.begin_ns, end);
    s.idle_ns = s.duration_ns - busy;
    s.communication_exposed_ns = compute_or_comm - s.compute_ns;
    s.memory_exposed_ns = busy - compute_or_comm;
    const auto first = std::lower_bound(work_starts.begin(), work_starts.end(), s.begin_ns);
    const auto last = std::lower_bound(first, work_starts.end(), std::max(end, s.begin_ns + 1));
    s.events = last - first;
    s.has_work = s.idle_ns < s.duration_ns || s.events > 0;
    steps.push_back(std::move(s));
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const auto& a, const auto& b) { return a.begin_ns < b.begin_ns; });
  return steps;
}

// A name's hash for the sums that compare intervals' work (splitmix64's
// finalizer: sums of distinct names rarely collide).
uint64_t NameHash(uint32_t name) {
  uint64_t h = name + 0x9E3779B97F4A7C15ull;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

}  // namespace

namespace {

// The busiest device's tasks (a track's process: the one with the most), by
// start; empty where none has kMinStepTasks * kMinInferredSteps.
std::vector<uint32_t> DeviceTasks(const TraceModel& model) {
  std::vector<int64_t> tasks_of(model.tracks.size(), 0);
  for (size_t e = 0; e < model.size(); ++e) {
    if (IsDevice(model.cls[e])) ++tasks_of[model.track[e]];
  }
  std::map<std::string, int64_t> by_process;
  for (size_t t = 0; t < model.tracks.size(); ++t) by_process[model.tracks[t].pid] += tasks_of[t];
  const auto busiest =
      std::max_element(by_process.begin(), by_process.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  if (busiest == by_process.end() || busiest->second < kMinStepTasks * kMinInferredSteps) {
    return {};
  }
  std::vector<uint32_t> tasks;
  tasks.reserve(static_cast<size_t>(busiest->second));
  for (size_t e = 0; e < model.size(); ++e) {
    if (IsDevice(model.cls[e]) && model.tracks[model.track[e]].pid == busiest->first) {
      tasks.push_back(static_cast<uint32_t>(e));
    }
  }
  std::stable_sort(tasks.begin(), tasks.end(),
                   [&](uint32_t a, uint32_t b) { return model.start_ns[a] < model.start_ns[b]; });
  return tasks;
}

// A trace without device work: the framework operators of the thread that
// runs the most, each outermost one (not inside another operator), by start;
// empty where it has fewer than kMinHostStepOps * kMinInferredSteps.
std::vector<uint32_t> HostOperators(const TraceModel& model) {
  std::vector<std::vector<uint32_t>> by_track(model.tracks.size());
  for (size_t e = 0; e < model.size(); ++e) {
    if (IsDevice(model.cls[e])) return {};
    if (model.cls[e] == EventClass::kHostOp) by_track[model.track[e]].push_back(uint32_t(e));
  }
  std::vector<uint32_t> best;
  for (std::vector<uint32_t>& ops : by_track) {
    std::stable_sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) {
      return model.start_ns[a] != model.start_ns[b] ? model.start_ns[a] < model.start_ns[b]
                                                    : model.duration_ns[a] > model.duration_ns[b];
    });
    std::vector<uint32_t> outermost;
    int64_t open_until = INT64_MIN;
    for (const uint32_t e : ops) {
      if (model.start_ns[e] < open_until) continue;  // inside the last outermost one
      outermost.push_back(e);
      open_until = model.start_ns[e] + model.duration_ns[e];
    }
    if (outermost.size() > best.size()) best = std::move(outermost);
  }
  if (static_cast<int64_t>(best.size()) < kMinHostStepOps * kMinInferredSteps) return {};
  return best;
}

}  // namespace

InferredSteps InferSteps(const TraceModel& model) {
  InferredSteps out;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] == EventClass::kStep) return out;
  }
  std::vector<uint32_t> tasks = DeviceTasks(model);  // by start
  out.on_host = tasks.empty();
  if (out.on_host) tasks = HostOperators(model);
  if (tasks.empty()) return out;
  // The least work between two markers that can be an iteration.
  const int64_t min_step = out.on_host ? kMinHostStepOps : kMinStepTasks;
  const EventClass marks = out.on_host ? EventClass::kHostOp : EventClass::kKernel;
  // Within 1/tolerance of the median. The host's operators of one iteration
  // vary more (a µs clock puts a child starting at its parent's end beside it;
  // the first step's gradients are created, later ones zeroed): within 20%,
  // and their names are not compared.
  const int64_t tolerance = out.on_host ? 5 : 10;
  // Sums of the names' hashes before each position: an interval's work is
  // the difference of two (wrapping: only equality is compared).
  std::vector<uint64_t> before(tasks.size() + 1, 0);
  std::unordered_map<uint32_t, std::vector<uint32_t>> at;  // kernel name -> positions
  for (size_t k = 0; k < tasks.size(); ++k) {
    const uint32_t name = model.name[tasks[k]];
    before[k + 1] = before[k] + NameHash(name);
    if (model.cls[tasks[k]] == marks) at[name].push_back(static_cast<uint32_t>(k));
  }
  const int64_t n_tasks = static_cast<int64_t>(tasks.size());
  std::vector<std::pair<size_t, uint32_t>> candidates;  // (launches, name)
  for (const auto& [name, positions] : at) {
    const auto n = static_cast<int64_t>(positions.size());
    if (n >= kMinInferredSteps + 1 && n * min_step <= n_tasks) {
      candidates.push_back({positions.size(), name});
    }
  }
  std::sort(candidates.begin(), candidates.end(), [&](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first
                              : at.find(x.second)->second[0] < at.find(y.second)->second[0];
  });
  // How often the most common interval work recurs, -1 where the kernel does
  // not mark iterations.
  const auto agreement = [&](const std::vector<uint32_t>& p) -> double {
    std::vector<int64_t> counts;
    for (size_t k = 0; k + 1 < p.size(); ++k) counts.push_back(p[k + 1] - p[k]);
    const int64_t median = IntegerMedian(counts);
    if (median < min_step) return -1;
    size_t near = 0;
    for (size_t k = 0; k < counts.size(); ++k) {
      if (k > 0 && 2 * counts[k] > 3 * median) return -1;
      near += tolerance * std::abs(counts[k] - median) <= median;
    }
    if (10 * near < 9 * counts.size()) return -1;
    // After the last launch, at most one more iteration: a kernel of a
    // forward pass's layers, recorded once, leaves the backward there.
    if (2 * (n_tasks - p.back() - 1) > 3 * median) return -1;
    // The iterations hold most of the device's work: the layers of one
    // backward pass leave its forward outside them.
    if (3 * static_cast<int64_t>(p.back() - p.front()) < 2 * n_tasks) return -1;
    if (out.on_host) return static_cast<double>(near) / static_cast<double>(counts.size());
    std::unordered_map<uint64_t, size_t> works;
    size_t most = 0;
    for (size_t k = 0; k + 1 < p.size(); ++k) {
      most = std::max(most, ++works[before[p[k + 1]] - before[p[k]]]);
    }
    return 2 * most >= counts.size() ? static_cast<double>(most) / counts.size() : -1;
  };
  size_t best = SIZE_MAX;
  double best_agreement = -1;
  for (size_t c = 0; c < candidates.size(); ++c) {
    // On the device the fewest launches win (a kernel launched per layer
    // fails the tests above anyway); on the host the most calls (an operator
    // that the µs clock shows outermost only some of the time marks fewer
    // iterations than one outermost in every one).
    if (!out.on_host && best != SIZE_MAX && candidates[c].first != candidates[best].first) break;
    const double a = agreement(at[candidates[c].second]);
    if (a < 0) continue;
    if (best == SIZE_MAX || (out.on_host && candidates[c].first > candidates[best].first) ||
        (candidates[c].first == candidates[best].first && a > best_agreement)) {
      best = c, best_agreement = a;
    }
  }
  if (best == SIZE_MAX) return out;
  const std::vector<uint32_t>& p = at[candidates[best].second];
  out.kernel = std::string(model.String(candidates[best].second));
  std::vector<int64_t> counts;
  for (size_t k = 0; k + 1 < p.size(); ++k) {
    const int64_t begin = model.start_ns[tasks[p[k]]];
    out.spans.push_back({begin, model.start_ns[tasks[p[k + 1]]] - begin});
    counts.push_back(p[k + 1] - p[k]);
  }
  out.tasks_per_step = IntegerMedian(std::move(counts));
  return out;
}

void ClassifySteps(std::vector<StepBreakdown>& steps, int64_t recording_end_ns) {
  for (auto& s : steps) s.status = "complete", s.status_reason.clear();
  for (auto& s : steps) {
    if (!s.has_work) s.status = "empty", s.status_reason = "no operator or device work inside it";
  }
  for (auto& s : steps) {
    const int64_t end = s.begin_ns + s.duration_ns;
    if (s.status != "complete" || !EndsPastRecording(recording_end_ns, end)) continue;
    s.status = "overrun";
    s.status_reason = fmt::format(
        "ends {:.3f} ms after the profiler stopped recording (its Record Window End), so the trace "
        "holds {}: its span is not the step's time",
        (end - recording_end_ns) / 1e6,
        s.begin_ns < recording_end_ns
            ? fmt::format("only its first {:.3f} ms", (recording_end_ns - s.begin_ns) / 1e6)
            : std::string("none of it"));
  }
  const auto durations_of_complete = [&](size_t from, size_t skip) {
    std::vector<int64_t> d;
    for (size_t k = from; k < steps.size(); ++k) {
      if (k != skip && steps[k].status == "complete") d.push_back(steps[k].duration_ns);
    }
    return d;
  };
  // The last step, cut off by the end of the trace: short, and with fewer operators.
  if (steps.size() >= 2 && steps.back().status == "complete") {
    const int64_t median = IntegerMedian(durations_of_complete(0, steps.size() - 1));
    std::vector<int64_t> events;
    for (size_t k = 0; k + 1 < steps.size(); ++k) {
      if (steps[k].status == "complete") events.push_back(steps[k].events);
    }
    const int64_t median_events = IntegerMedian(events);
    const StepBreakdown& last = steps.back();
    if (median > 0 && static_cast<double>(last.duration_ns) < kPartialRatio * median &&
        static_cast<double>(last.events) < kPartialRatio * median_events) {
      steps.back().status = "partial";
      steps.back().status_reason = fmt::format(
          "the last step, {:.3f} ms with {} operators and device events against medians of "
          "{:.3f} ms and {} for the others: the trace ended inside it",
          last.duration_ns / 1e6, last.events, median / 1e6, median_events);
    }
  }
  // Leading warm-up steps.
  size_t marked = 0;
  for (size_t k = 0; k < steps.size() && 2 * (marked + 1) <= steps.size(); ++k) {
    if (steps[k].status != "complete") continue;
    const std::vector<int64_t> later = durations_of_complete(k + 1, steps.size());
    if (later.size() < 2) break;
    const int64_t median = IntegerMedian(later);
    if (median <= 0 || static_cast<double>(steps[k].duration_ns) <= kWarmupRatio * median) break;
    steps[k].status = "warm-up";
    steps[k].status_reason =
        fmt::format("a leading step {:.2f}x the median of the later complete steps ({:.3f} ms)",
                    static_cast<double>(steps[k].duration_ns) / median, median / 1e6);
    ++marked;
  }
}

namespace {

// When the device work launched by the runtime calls that start before
// `begin`, and by those that start in [begin, end), ended (by correlation
// id), each INT64_MIN where none is linked. One scan of the trace for both:
// called for a few leading steps only.
struct LaunchedEnds {
  int64_t before = INT64_MIN, inside = INT64_MIN;
};
LaunchedEnds LaunchedWorkEnds(const TraceModel& model, int64_t begin, int64_t end) {
  std::vector<int64_t> before, inside;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kRuntime || model.correlation[e] < 0) continue;
    if (model.start_ns[e] < begin) {
      before.push_back(model.correlation[e]);
    } else if (model.start_ns[e] < end) {
      inside.push_back(model.correlation[e]);
    }
  }
  LaunchedEnds out;
  if (inside.empty()) return out;
  std::sort(before.begin(), before.end());
  std::sort(inside.begin(), inside.end());
  for (size_t e = 0; e < model.size(); ++e) {
    if (!IsDevice(model.cls[e]) || model.correlation[e] < 0) continue;
    const int64_t id = model.correlation[e], task_end = model.start_ns[e] + model.duration_ns[e];
    if (std::binary_search(before.begin(), before.end(), id)) {
      out.before = std::max(out.before, task_end);
    }
    if (std::binary_search(inside.begin(), inside.end(), id)) {
      out.inside = std::max(out.inside, task_end);
    }
  }
  return out;
}

}  // namespace

void MarkQueueFillingSteps(const TraceModel& model, std::vector<StepBreakdown>& steps) {
  if (ComputeDeviceOf(model) != ComputeOn::kDevice) return;
  size_t marked = 0;
  for (size_t k = 0;
       k < steps.size() && k < kMaxQueueFillingSteps && 2 * (marked + 1) <= steps.size(); ++k) {
    if (steps[k].status != "complete") continue;
    std::vector<int64_t> later;
    for (size_t j = k + 1; j < steps.size(); ++j) {
      if (steps[j].status == "complete") later.push_back(steps[j].duration_ns);
    }
    if (later.size() < 2) break;
    const int64_t median = IntegerMedian(std::move(later));
    const int64_t d = steps[k].duration_ns, end = steps[k].begin_ns + d;
    if (median <= 0 || static_cast<double>(d) > kQueueFillRatio * static_cast<double>(median)) {
      break;
    }
    // How far the device lags behind the host at the step's start and end:
    // the queued work's end past each. Filling the queue, the host gets
    // further ahead by about what the step is short of the steady ones.
    const LaunchedEnds work = LaunchedWorkEnds(model, steps[k].begin_ns, end);
    if (work.inside == INT64_MIN) break;
    const int64_t lag_begin =
        work.before == INT64_MIN ? 0 : std::max<int64_t>(0, work.before - steps[k].begin_ns);
    const int64_t lag_end = std::max<int64_t>(0, work.inside - end);
    if (2 * (lag_end - lag_begin) < median - d) break;
    steps[k].status = "queue-filling";
    steps[k].status_reason = fmt::format(
        "a leading step of {:.3f} ms ({:.2f}x the median of the later complete steps, {:.3f} ms) "
        "in which the host got ahead of the device: the device's backlog of launched work grew "
        "from {:.3f} ms at its start to {:.3f} ms at its end; the step queued work the device "
        "ran later",
        d / 1e6, static_cast<double>(d) / static_cast<double>(median), median / 1e6,
        lag_begin / 1e6, lag_end / 1e6);
    ++marked;
  }
}

Intervals CompleteStepSpans(const std::vector<StepBreakdown>& steps) {
  Intervals spans;
  for (const StepBreakdown& s : steps) {
    if (s.status == "complete") spans.push_back({s.begin_ns, s.begin_ns + s.duration_ns});
  }
  return Union(std::move(spans));
}

Intervals StepsElseSpan(const std::vector<StepBreakdown>& steps, const TraceSpan& span) {
  Intervals window = CompleteStepSpans(steps);
  if (window.empty() && span.ns() > 0) window.push_back({span.begin, span.end});
  return window;
}

StepSummary SummarizeSteps(const std::vector<StepBreakdown>& steps) {
  StepSummary out;
  out.steps = static_cast<int64_t>(steps.size());
  int64_t total = 0;
  for (const auto& s : steps) {
    if (s.status != "complete") continue;
    out.durations_ns.push_back(s.duration_ns);
    total += s.duration_ns;
  }
  out.complete = static_cast<int64_t>(out.durations_ns.size());
  if (out.complete == 0) return out;
  out.mean_ns = total / out.complete;
  out.median_ns = IntegerMedian(out.durations_ns);
  const auto [lo, hi] = std::minmax_element(out.durations_ns.begin(), out.durations_ns.end());
  out.min_ns = *lo, out.max_ns = *hi;
  return out;
}

std::vector<StepBreakdown> ComputeSteps(const TraceModel& model) {
  InferredSteps inferred;
  std::vector<StepBreakdown> steps =
      Breakdown(model, ComputeDeviceOf(model), StepSpans(model, &inferred));
  ClassifySteps(steps, model.recording_end_ns);
  MarkQueueFillingSteps(model, steps);
  return steps;
}

namespace {

using core::ResultTable;
using core::Unit;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const std::string path(c.path);
  const StepSummary& sum = a.step_summary;
  ResultTable table;  // always: empty when nothing was found, its columns kept
  table.hidden_when_empty = a.steps.empty();
  table.section = "steps";
  table.title = fmt::format("Steps: {} time inside each {}; {} of {} complete{}",
                            a.busy.scopes_are_work            ? "CPU scope"
                            : a.compute_on == ComputeOn::kCpu ? "CPU operator"
                                                              : "device",
                            sum.inferred_from.empty() ? "ProfilerStep span" : "inferred step",
                            sum.complete, sum.steps,
                            sum.complete > 0 ? fmt::format(", mean {:.3f} ms, median {:.3f} ms",
                                                           sum.mean_ns / 1e6, sum.median_ns / 1e6)
                                             : std::string());
  table.columns = {
      {"trace", "Trace", 0, false},
      {"step", "Step"},
      {"status", "Status"},
      {.key = "duration_ns", .header = "Step", .precision = 3, .unit = Unit::kTime},
      {.key = "compute_ns", .header = "Compute", .precision = 3, .unit = Unit::kTime},
      {.key = "communication_ns", .header = "Comm", .precision = 3, .unit = Unit::kTime},
      {.key = "memory_ns", .header = "Memcpy/set", .precision = 3, .unit = Unit::kTime},
      {.key = "communication_exposed_ns",
       .header = "Comm not overlapped",
       .precision = 3,
       .terminal = false,
       .unit = Unit::kTime},
      {.key = "memory_exposed_ns",
       .header = "Memcpy/set not overlapped",
       .precision = 3,
       .terminal = false,
       .unit = Unit::kTime},
      {.key = "idle_ns", .header = "Idle", .precision = 3, .unit = Unit::kTime},
      {.key = "idle_pct", .header = "Idle %", .precision = 1, .unit = Unit::kPercent},
      {"status_reason", "Why not averaged"}};
  for (const auto& s : a.steps) {
    table.AddRow({path, s.name, s.status, s.duration_ns, s.compute_ns, s.communication_ns,
                  s.memory_ns, s.communication_exposed_ns, s.memory_exposed_ns, s.idle_ns,
                  Pct(s.idle_ns, s.duration_ns), s.status_reason});
  }
  if (!sum.inferred_from.empty() && sum.inferred_on_host) {
    table.notes.push_back(fmt::format(
        "The trace records no steps and no device work: each step here runs from one call of "
        "the operator '{}' to the next on the thread that runs the most. It is called once "
        "per iteration: between two calls the thread runs the same operators ({}, the median) "
        "each time. The work before its first call (start-up) and after its last is in no "
        "step.",
        sum.inferred_from, sum.tasks_per_step));
  } else if (!sum.inferred_from.empty()) {
    table.notes.push_back(fmt::format(
        "The trace records no steps: each step here runs from one launch of the kernel '{}' to "
        "the next. It is launched once per iteration: between two launches the device runs "
        "the same work ({} tasks, the median) each time. The work before its first launch "
        "(start-up) and after its last is in no step.",
        sum.inferred_from, sum.tasks_per_step));
  }
  table.notes.push_back(fmt::format(
      "Means use complete steps only: not empty, not the last step cut off by the end of the "
      "trace (under {:.0f}% of the others' median), not a leading warm-up step (over {:.1f}x the "
      "median of the later ones), not a leading step that only queued work the device ran "
      "later (queue-filling), not one that ends after the profiler stopped recording (overrun).",
      100 * kPartialRatio, kWarmupRatio));
  tables.push_back(std::move(table));
}

// Communication inside (complete) steps.
// Communication the compute does not overlap (an overlapped collective costs
// the step nothing): its share of the complete steps, and advice that fits
// what there is to overlap it with.
void CommunicationRule(const RuleContext& c, std::vector<Finding>& out) {
  // The step-time diagnosis names the device waiting, communication among it,
  // with the overlapped part and the advice that fits: one account, not two.
  if (Diagnosis(c.analysis) == "step_device_waiting") return;
  int64_t step_ns = 0, comm_ns = 0, exposed_ns = 0, compute_ns = 0, complete = 0;
  for (const auto& s : c.analysis.steps) {
    if (s.status != "complete") continue;
    step_ns += s.duration_ns, comm_ns += s.communication_ns, ++complete;
    exposed_ns += s.communication_exposed_ns, compute_ns += s.compute_ns;
  }
  if (Pct(exposed_ns, step_ns) < c.thresholds.communication_pct) return;
  // Compute that could hide it: the step's compute not already overlapping it.
  const int64_t free_compute = compute_ns - (comm_ns - exposed_ns);
  const bool overlap_helps = ComputeCanHide(free_compute, exposed_ns);
  out.push_back(
      {"communication", Severity::kWarning,
       fmt::format("Communication that compute does not overlap covers {:.1f}% of step time",
                   Pct(exposed_ns, step_ns)),
       fmt::format("{} complete steps: {:.3f} ms of communication in {:.3f} ms, {:.3f} ms of it "
                   "overlapped by compute, {:.3f} ms exposed; compute {:.3f} ms",
                   complete, comm_ns / 1e6, step_ns / 1e6, (comm_ns - exposed_ns) / 1e6,
                   exposed_ns / 1e6, compute_ns / 1e6),
       overlap_helps
           ? "Overlap communication with computation (gradient bucketing, DDP's overlap, "
             "prefetching the next layer's parameters) or reduce its volume (larger buckets, "
             "compression)."
           : "There is too little compute in the step to hide it: the collectives themselves "
             "(their volume, the link, or a rank that arrives late) are the cost. Compare the "
             "ranks' steps, reduce the volume (compression, fewer or larger buckets), or give "
             "each step more work per collective.",
       exposed_ns});
}

// Steps left out of means.
// Complete steps that differ twice over (issue 36, class 7): a mean of them
// describes none, and the slow ones have a cause of their own to find.
constexpr double kStepSpread = 2;

void StepsVaryRule(const RuleContext& c, std::vector<Finding>& out) {
  std::vector<const StepBreakdown*> complete;
  for (const auto& s : c.analysis.steps) {
    if (s.status == "complete") complete.push_back(&s);
  }
  if (complete.size() < 3) return;
  std::vector<int64_t> durations;
  for (const StepBreakdown* s : complete) durations.push_back(s->duration_ns);
  std::sort(durations.begin(), durations.end());
  const int64_t median = durations[(durations.size() - 1) / 2];
  const auto slowest = *std::max_element(complete.begin(), complete.end(),
                                         [](const StepBreakdown* x, const StepBreakdown* y) {
                                           return x->duration_ns < y->duration_ns;
                                         });
  if (median <= 0 || slowest->duration_ns < kStepSpread * static_cast<double>(median)) return;
  int64_t over = 0;  // what the steps slower than the median take beyond it
  int slow = 0;
  for (const int64_t d : durations) {
    if (d >= kStepSpread * static_cast<double>(median)) over += d - median, ++slow;
  }
  // Where the slowest step's extra time went, against a median step: its
  // parts that add up to a step (compute, exposed communication and copies,
  // idle), each it grew by.
  const StepBreakdown* typical =
      *std::find_if(complete.begin(), complete.end(),
                    [&](const StepBreakdown* s) { return s->duration_ns == median; });
  const std::pair<const char*, int64_t> grew[] = {
      {c.analysis.compute_on == ComputeOn::kCpu ? "operators computing" : "compute",
       slowest->compute_ns - typical->compute_ns},
      {"exposed communication",
       slowest->communication_exposed_ns - typical->communication_exposed_ns},
      {"exposed copies", slowest->memory_exposed_ns - typical->memory_exposed_ns},
      {c.analysis.compute_on == ComputeOn::kCpu ? "no operator computing" : "the device idle",
       slowest->idle_ns - typical->idle_ns}};
  std::string parts;
  for (const auto& [what, ns] : grew) {
    if (ns > 0) parts += fmt::format("{}{} +{:.3f} ms", parts.empty() ? "" : ", ", what, ns / 1e6);
  }
  out.push_back(
      {"steps_vary", Severity::kWarning,
       fmt::format("Complete steps differ {:.1f}x: the slowest, {}, takes {:.3f} ms against a "
                   "median of {:.3f} ms",
                   static_cast<double>(slowest->duration_ns) / static_cast<double>(median),
                   slowest->name, slowest->duration_ns / 1e6, median / 1e6),
       fmt::format("{} complete steps; {} of them take {:g}x the median or more{}", complete.size(),
                   slow, kStepSpread,
                   parts.empty() ? std::string()
                                 : fmt::format("; {} against {} (a median step): {}", slowest->name,
                                               typical->name, parts)),
       "Look at the slow steps on their own (the steps table; the timeline around them): a "
       "periodic cause (checkpointing, evaluation, logging, a garbage collection, a data "
       "loader whose prefetched batches ran out, a slow rank) or noise from other work on the "
       "machine. Averages over these steps describe none of them.",
       over});
}

void StepsExcludedRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto& steps = c.analysis.steps;
  std::string left_out;
  int excluded = 0;
  bool overrun = false;
  for (const auto& s : steps) {
    if (s.status == "complete") continue;
    ++excluded;
    overrun |= s.status == "overrun";
    if (excluded <= 3) {
      left_out += fmt::format("{}{} ({}: {})", left_out.empty() ? "" : "; ", s.name, s.status,
                              s.status_reason);
    }
  }
  if (excluded == 0) return;
  out.push_back({"steps_excluded", Severity::kInfo,
                 fmt::format("{} of {} steps are left out of step means", excluded, steps.size()),
                 left_out + (excluded > 3 ? "; ..." : ""),
                 std::string("Nothing to fix: step means, diffs and rank comparisons use the "
                             "complete steps only. Record more steps after warm-up for steadier "
                             "figures.") +
                     (overrun ? " A step that outlasts the recording was not recorded by this "
                                "profiler session as it ran (PyTorch's profiler closes its last "
                                "step before it stops): check that the trace is one session's "
                                "file, not events of several runs or processes put together."
                              : "")});
}

}  // namespace

Pass StepsPass() {
  return {"steps",
          "What fills each step: compute, communication, copies, idle? Which steps are complete?",
          {},
          [](const TraceModel& model, Analysis& a) {
            InferredSteps inferred;
            a.steps = Breakdown(model, a.compute_on, StepSpans(model, &inferred));
            ClassifySteps(a.steps, model.recording_end_ns);
            MarkQueueFillingSteps(model, a.steps);
            a.step_summary = SummarizeSteps(a.steps);
            a.step_summary.compute_on = Name(a.compute_on);
            a.step_summary.inferred_from = std::move(inferred.kernel);
            a.step_summary.inferred_on_host = inferred.on_host;
            a.step_summary.tasks_per_step = inferred.tasks_per_step;
          },
          Tables,
          {{"communication",
            {"steps"},
            [](const Thresholds& t) {
              return fmt::format(
                  "communication that compute does not overlap covers {:g}% or more of the "
                  "complete steps' time, and the step-time diagnosis is not step_device_waiting "
                  "(which says it); the advice is to overlap it only where the steps have "
                  "compute to hide it behind; the saving is the exposed time",
                  t.communication_pct);
            },
            CommunicationRule},
           {"steps_excluded",
            {"steps"},
            [](const Thresholds&) {
              return std::string(
                  "steps are left out of step means (warm-up, partial, empty, queue-filling or "
                  "overrun)");
            },
            StepsExcludedRule},
           {"steps_vary",
            {"steps"},
            [](const Thresholds&) {
              return fmt::format(
                  "three or more complete steps, and the slowest takes {:g}x their median or "
                  "more; the saving is the time the slow steps take beyond the median",
                  kStepSpread);
            },
            StepsVaryRule}}};
}

}  // namespace opscope::analyze
