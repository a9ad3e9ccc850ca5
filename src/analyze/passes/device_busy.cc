// The compute device's busy time and idle gaps: the pass, its tables and its rules.
#include "analyze/passes/device_busy.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "analyze/mapped.h"
#include "analyze/names.h"
#include "analyze/passes/attribution.h"

namespace opscope::analyze {
namespace {

// Exact products of times (a window can span 8e18 ns, times a slice index).
__extension__ typedef __int128 Int128;

bool IsHostWork(EventClass cls) {
  return cls == EventClass::kHostOp || cls == EventClass::kRuntime ||
         cls == EventClass::kAnnotation || cls == EventClass::kPython || cls == EventClass::kSync ||
         cls == EventClass::kDataLoading;
}

// Categories that are known and deliberately not analysed as work.
bool IsKnownOther(std::string_view category) {
  return category == "Trace" || category == "overhead" || category == "cpu_instant_event" ||
         category == "external_correlation";
}

}  // namespace

DeviceBusy ComputeDeviceBusy(const TraceModel& model, int64_t min_gap_ns, size_t max_gaps,
                             int slices) {
  return ComputeDeviceBusyOn(model, ComputeDeviceOf(model), min_gap_ns, max_gaps, slices);
}

DeviceBusy ComputeDeviceBusyOn(const TraceModel& model, ComputeOn on, int64_t min_gap_ns,
                               size_t max_gaps, int slices) {
  DeviceBusy out;
  out.compute_on = Name(on);
  out.scopes_are_work = on == ComputeOn::kCpu && ScopesAreTheWork(model);
  // Each distinct name's meaning, once.
  std::vector<int8_t> meaning(model.string_count(), -1);  // 0 none, 1 data, 2 sync, 3 compile
  std::vector<std::string_view> compile_kind(model.string_count());
  const auto meaning_of = [&](uint32_t name) {
    if (meaning[name] < 0) {
      const std::string_view n = model.String(name);
      compile_kind[name] = CompileKind(n);
      meaning[name] = IsDataLoading(n)              ? 1
                      : !compile_kind[name].empty() ? 3
                      : IsSyncCall(n)               ? 2
                                                    : 0;
    }
    return meaning[name];
  };
  const std::vector<Work> work = ComputeWork(model, on);
  // Sized by a count: one allocation each of what is needed (millions of events).
  Intervals busy;
  busy.reserve(static_cast<size_t>(
      std::count_if(work.begin(), work.end(), [](Work w) { return w != Work::kNone; })));
  MappedVector<uint32_t> host_events;
  host_events.reserve(
      static_cast<size_t>(std::count_if(model.cls.begin(), model.cls.end(), [](EventClass c) {
        return c != EventClass::kOther && IsHostWork(c);
      })));
  std::map<std::string, int64_t> unclassified, compile;
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    const Interval i{model.start_ns[e], model.start_ns[e] + model.duration_ns[e]};
    if (cls == EventClass::kOther) {
      const std::string_view category = model.String(model.category[e]);
      if (!IsKnownOther(category))
        ++unclassified[category.empty() ? "(none)" : std::string(category)];
      continue;
    }
    if (work[e] != Work::kNone) busy.push_back(i);
    if (IsHostWork(cls)) {
      host_events.push_back(static_cast<uint32_t>(e));
      meaning_of(model.name[e]);
    }
  }
  // Compilation time by kind, counted once where calls nest.
  {
    std::map<std::string_view, Intervals> by_kind;
    for (const uint32_t e : host_events) {
      if (meaning[model.name[e]] == 3) {
        by_kind[compile_kind[model.name[e]]].push_back(
            {model.start_ns[e], model.start_ns[e] + model.duration_ns[e]});
      }
    }
    for (auto& [kind, spans] : by_kind) {
      int64_t ns = 0;
      for (const Interval& i : Union(std::move(spans))) ns += i.end - i.begin;
      out.compile_ns.emplace_back(std::string(kind), ns);
    }
    std::sort(out.compile_ns.begin(), out.compile_ns.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
  }
  out.unclassified.assign(unclassified.begin(), unclassified.end());
  std::sort(out.unclassified.begin(), out.unclassified.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  const auto merged = Union(std::move(busy));  // in place, not a copy
  if (merged.empty()) return out;              // no compute events, or none that lasts
  out.has_device = true;
  out.window_begin_ns = merged.front().begin;
  out.window_end_ns = merged.back().end;
  for (const Interval& i : merged) out.busy_ns += i.end - i.begin;
  const int64_t window = out.window_end_ns - out.window_begin_ns;
  out.busy_pct =
      window > 0 ? 100.0 * static_cast<double>(out.busy_ns) / static_cast<double>(window) : 100;
  // Gaps between compute activity, with what the host did meanwhile. The
  // longest gaps first; only those listed are explained (each explanation scans
  // the host events, so explaining every gap would be quadratic).
  Intervals idle;
  for (size_t k = 1; k < merged.size(); ++k) {
    if (merged[k].begin - merged[k - 1].end >= min_gap_ns) {
      idle.push_back({merged[k - 1].end, merged[k].begin});
      out.gap_ns += merged[k].begin - merged[k - 1].end;
    }
  }
  std::stable_sort(idle.begin(), idle.end(), [](const Interval& a, const Interval& b) {
    return a.end - a.begin > b.end - b.begin;
  });
  if (idle.size() > max_gaps) idle.resize(max_gaps);
  const bool cpu = on == ComputeOn::kCpu;
  for (const Interval& span : idle) {
    const int64_t begin = span.begin, end = span.end, length = end - begin;
    IdleGap gap{begin, length, "", "", 0};
    Intervals host_in_gap, data, sync, comp, python;
    std::map<std::string_view, int64_t> longest;  // name -> its longest overlap, per meaning
    std::string busiest;
    int64_t busiest_ns = 0;
    bool busiest_inside = false;
    std::string_view data_name, sync_name, compile_name;
    int64_t data_max = 0, sync_max = 0, compile_max = 0;
    for (const uint32_t e : host_events) {
      const int64_t b = std::max(begin, model.start_ns[e]);
      const int64_t f = std::min(end, model.start_ns[e] + model.duration_ns[e]);
      if (f <= b) continue;
      const std::string_view name = model.String(model.name[e]);
      switch (meaning[model.name[e]]) {
        case 1:
          data.push_back({b, f});
          if (f - b > data_max) data_max = f - b, data_name = name;
          break;
        case 2:
          sync.push_back({b, f});
          if (f - b > sync_max) sync_max = f - b, sync_name = name;
          break;
        case 3:
          comp.push_back({b, f});
          if (f - b > compile_max) compile_max = f - b, compile_name = name;
          break;
        default: break;
      }
      if (model.cls[e] == EventClass::kPython) python.push_back({b, f});
      // Annotations enclose whole phases: they tell what runs, not that the host works.
      if (model.cls[e] == EventClass::kAnnotation) continue;
      host_in_gap.push_back({b, f});
      // Name the longest host event that starts inside the gap, else the longest overlapping one.
      const bool inside = model.start_ns[e] >= begin;
      if ((inside && !busiest_inside) || (inside == busiest_inside && f - b > busiest_ns)) {
        busiest_ns = f - b, busiest = std::string(name), busiest_inside = inside;
      }
    }
    const auto covered = [&](Intervals spans) {
      int64_t ns = 0;
      for (const Interval& i : Union(std::move(spans))) ns += i.end - i.begin;
      return ns;
    };
    const int64_t data_ns = covered(data), sync_ns = covered(sync), compile_ns = covered(comp),
                  host_busy = covered(host_in_gap), python_ns = covered(python);
    const double share = static_cast<double>(host_busy) / static_cast<double>(length);
    const auto pct = [&](int64_t ns) { return 100.0 * static_cast<double>(ns) / length; };
    gap.host_busy_pct = 100 * share;
    if (data_ns * 2 >= length) {
      gap.cause = "data loading";
      gap.evidence = fmt::format("data loading covers {:.0f}% of the gap; longest: '{}'",
                                 pct(data_ns), data_name);
    } else if (compile_ns * 2 >= length) {
      gap.cause = "compilation/warm-up";
      gap.evidence = fmt::format("{} covers {:.0f}% of the gap; longest: '{}'",
                                 CompileKind(compile_name), pct(compile_ns), compile_name);
    } else if (sync_ns * 2 >= length) {
      gap.cause = "synchronization wait";
      gap.evidence = fmt::format("waiting calls cover {:.0f}% of the gap; longest: '{}'",
                                 pct(sync_ns), sync_name);
    } else if (cpu) {
      gap.cause = "outside operators";
      gap.evidence =
          python_ns > 0
              ? fmt::format("no operator ran; Python functions cover {:.0f}% of the gap",
                            pct(python_ns))
              : fmt::format("no operator ran; other traced host events cover {:.0f}% of the gap",
                            100 * share);
    } else if (host_events.empty()) {
      gap.cause = "unknown";
      gap.evidence = "this trace records no host events (a device-only file)";
    } else if (share >= 0.5) {
      gap.cause = "host-bound";
      gap.evidence =
          fmt::format("the host was busy {:.0f}% of the gap; longest: '{}'", 100 * share, busiest);
    } else if (share >= 0.1) {
      gap.cause = "host partly busy";
      gap.evidence = fmt::format(
          "the traced host threads were busy {:.0f}% of the gap (longest: '{}'); the rest is "
          "untraced",
          100 * share, busiest);
    } else {
      gap.cause = "no host activity";
      gap.evidence =
          fmt::format("the traced host threads were busy {:.0f}% of the gap", 100 * share);
    }
    out.gaps.push_back(std::move(gap));
  }
  for (int s = 0; s < slices && window > 0; ++s) {
    const int64_t b =
        out.window_begin_ns + static_cast<int64_t>(static_cast<Int128>(window) * s / slices);
    const int64_t f =
        out.window_begin_ns + static_cast<int64_t>(static_cast<Int128>(window) * (s + 1) / slices);
    out.timeline_pct.push_back(f > b ? 100.0 * static_cast<double>(Covered(merged, b, f)) /
                                           static_cast<double>(f - b)
                                     : 0);
  }
  return out;
}

std::string CompileAction(std::string_view kind) {
  if (kind == "ACL operator compilation") {
    return "Operators are compiled online by CANN: call torch_npu.npu.set_compile_mode("
           "jit_compile=False) to use the prebuilt binary kernels, keep input shapes static "
           "(pad to buckets) so compiled operators are reused, and keep the operator cache "
           "(ACL_OP_COMPILER_CACHE_MODE / _DIR) between runs.";
  }
  if (kind == "torch.compile") {
    return "torch.compile compiles on the first calls and on every recompilation: exclude "
           "warm-up steps from measurements, avoid recompiles (torch._dynamo.config / "
           "TORCH_LOGS=recompiles; mark dynamic shapes), and cache compiled artefacts between "
           "runs (the inductor FX graph cache).";
  }
  if (kind == "module load") {
    return "Kernel modules are loaded on first use: warm up before measuring; CUDA_MODULE_LOADING="
           "LAZY (the default since CUDA 12) loads only the kernels used.";
  }
  return "Device memory is allocated and freed in the measured window: keep PyTorch's caching "
         "allocator warm (do not call torch.cuda.empty_cache() in the loop), preallocate, and "
         "exclude the first steps from measurements.";
}

namespace {

using core::ResultTable;
using core::Unit;
using core::Value;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const DeviceBusy& busy = a.busy;
  const std::string path(c.path);
  const int64_t window_ns = busy.window_end_ns - busy.window_begin_ns;
  const bool nothing = !busy.has_device && busy.compute_on != "cpu" && window_ns <= 0;
  {
    ResultTable compute;
    compute.section = "compute";
    compute.title = "Where the operators ran";
    compute.columns = {
        {"trace", "Trace", 0, false},
        {"compute_on", "Compute on"},
        {"device", "Device"},
        {.key = "busy_pct", .header = "Busy %", .precision = 1, .unit = Unit::kPercent},
        {.key = "busy_ns", .header = "Busy", .precision = 3, .unit = Unit::kTime},
        {.key = "window_ns", .header = "Window", .precision = 3, .unit = Unit::kTime},
        {.key = "gap_ns", .header = "In gaps (>= 50 us)", .precision = 3, .unit = Unit::kTime}};
    // A trace of no timed work at all (a memory snapshot, a rank's summaries
    // alone) keeps the table's columns in the files and no row to show.
    compute.hidden_when_empty = nothing;
    if (!nothing) {
      compute.AddRow({path, busy.compute_on, a.device.empty() ? Value{} : Value{a.device},
                      busy.has_device ? Value{busy.busy_pct} : Value{}, busy.busy_ns, window_ns,
                      busy.gap_ns});
    }
    compute.notes.push_back(
        "The compute device is the trace's device when it records device work, otherwise the "
        "CPU threads that run operators; busy % is the share of the window (first to last "
        "compute event) in which some compute event runs.");
    tables.push_back(std::move(compute));
  }
  ResultTable gaps;
  gaps.section = "idle_gaps";
  const bool cpu = busy.compute_on == "cpu";
  gaps.title =
      !busy.has_device
          ? std::string("No device work and no operators: busy share and idle gaps do not apply")
      : cpu && busy.scopes_are_work
          ? fmt::format(
                "CPU (no operators or device work in this trace: its annotation scopes are the "
                "work): scopes run {:.1f}% of {:.3f} ms (first to last scope); longest gaps "
                "between scopes:",
                busy.busy_pct, window_ns / 1e6)
      : cpu ? fmt::format(
                  "CPU (no device work in this trace): operators run {:.1f}% of {:.3f} ms "
                  "(first to last operator); longest gaps between operators:",
                  busy.busy_pct, window_ns / 1e6)
            : fmt::format(
                  "Device busy {:.1f}% of {:.3f} ms (first to last device event); longest "
                  "idle gaps:",
                  busy.busy_pct, window_ns / 1e6);
  gaps.hidden_when_empty = nothing;
  gaps.columns = {
      {"trace", "Trace", 0, false},
      {"compute_on", "Compute on", 0, false},
      {.key = "busy_pct",
       .header = "Busy %",
       .precision = 1,
       .terminal = false,
       .unit = Unit::kPercent},
      {.key = "start_ns", .header = "Start", .precision = 3, .unit = Unit::kTime},
      {.key = "duration_ns", .header = "Idle", .precision = 3, .unit = Unit::kTime},
      {"cause", "Likely cause"},
      {.key = "host_busy_pct", .header = "Host busy %", .precision = 1, .unit = Unit::kPercent},
      {"evidence", "Evidence"}};
  for (const auto& g : busy.gaps) {
    gaps.AddRow({path, busy.compute_on, busy.busy_pct, g.begin_ns - busy.window_begin_ns,
                 g.duration_ns, g.cause, g.host_busy_pct, g.evidence});
  }
  if (!busy.gaps.empty()) {
    // What the listed gaps say of all the idle time: a few long gaps can be a
    // small part of it (issue 36, class 12); the attribution table accounts
    // for every instant.
    int64_t listed = 0;
    for (const auto& g : busy.gaps) listed += g.duration_ns;
    const int64_t idle = std::max<int64_t>(window_ns - busy.busy_ns, 0);
    gaps.notes.push_back(fmt::format(
        "{} {:.3f} ms, {:.1f}% of the {:.3f} ms in which {} within the window; the attribution "
        "table says what every instant of the steps was spent on.",
        busy.gaps.size() == 1 ? std::string("This gap is")
                              : fmt::format("These {} gaps are", busy.gaps.size()),
        listed / 1e6, Pct(listed, idle), idle / 1e6,
        cpu ? "no operator runs" : "the device idles"));
  }
  for (const auto& [category, n] : busy.unclassified) {
    gaps.notes.push_back(
        fmt::format("warning: {} events of category '{}' are not understood and are in no figure",
                    n, category));
  }
  if (busy.has_device && !busy.timeline_pct.empty()) {
    static const char* kLevels[] = {" ", ".", ":", "-", "=", "+", "*", "#"};
    std::string bars;
    for (const double pct : busy.timeline_pct)
      bars += kLevels[std::min(7, static_cast<int>(pct / 12.5))];
    gaps.notes.push_back("Busy % over the window in 50 slices, ' ' 0% to '#' 100%: |" + bars + "|");
  }
  tables.push_back(std::move(gaps));
}

// What to do about idle time, by its dominant cause.
std::string IdleAction(const std::string& cause) {
  if (cause == "data loading") {
    return "Feed the device faster: more DataLoader workers, pin_memory=True, prefetching, and "
           "preprocessing off the training loop.";
  }
  if (cause == "compilation/warm-up") {
    return "Compilation and first-use set-up, not steady-state work: see the 'compilation' "
           "finding; profile steps after warm-up (a schedule with warmup steps) to see the "
           "steady state.";
  }
  if (cause == "unknown") {
    return "This file has no host events: analyze the matching host trace (trace_view.json or the "
           "Kineto trace) to see what the host did while the device waited.";
  }
  if (cause == "no host activity") {
    return "The traced host threads were idle while the device waited: the work is elsewhere "
           "(DataLoader worker processes, other ranks in a collective, threads not traced). "
           "Profile those too, and compare ranks for a slow one.";
  }
  if (cause == "host partly busy") {
    return "The traced threads explain only part of the wait: trace the rest (Python with "
           "with_stack, DataLoader workers, other threads) before cutting host work; then "
           "reduce what the traced threads do between launches.";
  }
  if (cause == "synchronization wait") {
    return "Remove host-device synchronizations from the loop: .item(), .cpu(), printing tensors, "
           "explicit synchronize calls; log metrics every N steps instead.";
  }
  if (cause == "outside operators") {
    return "The CPU spends this time between operators (Python and framework code): batch more "
           "work per operator (a larger batch), remove Python work from the loop, or compile the "
           "model (torch.compile, TorchScript) so fewer, larger operators run.";
  }
  return "Cut host overhead per step: a larger batch, fewer and larger operators (fusion, graph "
         "compilation with torch.compile or CUDA or HIP graphs, graph mode on Ascend), and less "
         "Python "
         "work between launches.";
}

// Where the attribution accounted for the window, its diagnosis (step_<state>,
// attribution.cc) says why the device idled, from every idle instant rather
// than the longest gaps, and tells set-up and warm-up apart: these two rules
// would say it again, less exactly, and could contradict it: both stay
// silent where it names a verdict (Diagnosis).
//
// Is the compute device busy? If not, why: the causes of its idle gaps.
void LowUtilizationRule(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  if (!Diagnosis(a).empty()) return;  // the step-time diagnosis says it
  const Thresholds& t = c.thresholds;
  const bool cpu = a.compute_on == ComputeOn::kCpu;
  if (!a.busy.has_device || a.busy.busy_pct >= t.busy_warning_pct) return;
  std::map<std::string, int64_t> by_cause;
  for (const auto& g : a.busy.gaps) by_cause[g.cause] += g.duration_ns;
  std::string dominant = cpu ? "outside operators" : "host-bound";
  int64_t dominant_ns = -1;
  for (const auto& [cause, ns] : by_cause) {
    if (ns > dominant_ns) dominant = cause, dominant_ns = ns;
  }
  std::string causes;
  for (const auto& [cause, ns] : by_cause) {
    causes += fmt::format("{}{} {:.3f} ms", causes.empty() ? "" : ", ", cause, ns / 1e6);
  }
  Finding f{"low_device_utilization",
            a.busy.busy_pct < t.busy_critical_pct ? Severity::kCritical : Severity::kWarning,
            cpu ? fmt::format("The CPU runs operators only {:.1f}% of the time", a.busy.busy_pct)
                : fmt::format("The device is busy only {:.1f}% of the time", a.busy.busy_pct),
            fmt::format("{} busy {:.3f} ms of a {:.3f} ms window; the {} longest gaps: {}",
                        cpu ? "CPU" : "device", a.busy.busy_ns / 1e6,
                        (a.busy.window_end_ns - a.busy.window_begin_ns) / 1e6, a.busy.gaps.size(),
                        causes.empty() ? std::string("none listed") : causes),
            IdleAction(dominant)};
  if (!a.busy.gaps.empty()) {
    f.evidence +=
        fmt::format("; the longest gap, {:.3f} ms ({}): {}", a.busy.gaps[0].duration_ns / 1e6,
                    a.busy.gaps[0].cause, a.busy.gaps[0].evidence);
  }
  out.push_back(std::move(f));
}

// Compilation and first-use set-up in the measured window.
void CompilationRule(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  if (!Diagnosis(a).empty()) return;  // the step-time diagnosis says it
  const Thresholds& t = c.thresholds;
  if (a.busy.compile_ns.empty()) return;
  int64_t total = 0;
  std::string kinds;
  for (const auto& [kind, ns] : a.busy.compile_ns) {
    total += ns;
    kinds += fmt::format("{}{} {:.3f} ms", kinds.empty() ? "" : ", ", kind, ns / 1e6);
  }
  const int64_t window = a.busy.window_end_ns - a.busy.window_begin_ns;
  if (total < t.compile_min_ns || (window > 0 && Pct(total, window) < t.compile_pct)) return;
  out.push_back(
      {"compilation", Pct(total, window) >= 20 ? Severity::kWarning : Severity::kInfo,
       fmt::format("Compilation and first-use set-up take {:.3f} ms{}", total / 1e6,
                   window > 0 ? fmt::format(" ({:.1f}% of the {} window)", Pct(total, window),
                                            a.compute_on == ComputeOn::kCpu ? "CPU" : "device")
                              : std::string()),
       "host time in: " + kinds, CompileAction(a.busy.compile_ns[0].first)});
}

// Events not understood.
void UnclassifiedRule(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  if (a.busy.unclassified.empty()) return;
  int64_t events = 0;
  std::string cats;
  for (const auto& [category, n] : a.busy.unclassified) {
    events += n;
    cats += fmt::format("{}'{}' {}", cats.empty() ? "" : ", ", category, n);
  }
  out.push_back({"unclassified_events", Severity::kInfo,
                 fmt::format("{} events in categories opscope does not understand", events),
                 "by category: " + cats,
                 "These events are in no figure above (not device work, not host work). If "
                 "they are device work, the busy and idle figures miss them: report the "
                 "category so opscope learns it."});
}

}  // namespace

Pass DeviceBusyPass() {
  return {"device_busy",
          "Is the compute device busy, and what fills its idle gaps?",
          {},
          [](const TraceModel& model, Analysis& a) {
            a.busy = ComputeDeviceBusyOn(model, a.compute_on);
          },
          Tables,
          {{"low_device_utilization",
            {"device_busy"},
            [](const Thresholds& t) {
              return fmt::format(
                  "the compute device (the CPU threads that run operators, when the trace has no "
                  "device work) is busy under {:g}% of its window (critical under {:g}%); the "
                  "action follows the cause that holds most of the longest idle gaps",
                  t.busy_warning_pct, t.busy_critical_pct);
            },
            LowUtilizationRule},
           {"compilation",
            {"device_busy"},
            [](const Thresholds& t) {
              return fmt::format(
                  "host calls of compilation or first-use set-up (torch.compile, ACL operator "
                  "compilation, module loads, allocations) take at least {:g} ms and {:g}% of the "
                  "compute window (a warning from 20%)",
                  t.compile_min_ns / 1e6, t.compile_pct);
            },
            CompilationRule},
           {"unclassified_events",
            {"device_busy"},
            [](const Thresholds&) {
              return std::string("events of categories opscope does not understand are present");
            },
            UnclassifiedRule}}};
}

}  // namespace opscope::analyze
