// Whether kernel launches set the pace: the pass, its table and its rule.
#include "analyze/passes/launch.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyze/analysis.h"
#include "analyze/flat_map.h"
#include "analyze/intervals.h"
#include "analyze/mapped.h"
#include "analyze/names.h"
#include "analyze/passes/attribution.h"

namespace opscope::analyze {
namespace {

bool IsLaunchCall(std::string_view name) {
  const std::string n = Lower(BaseName(name));
  return Contains(n, "launch") || Contains(n, "graphlaunch") || Contains(n, "aclopexecute") ||
         Contains(n, "aclnn") || Contains(n, "aclopcompileandexecute");
}

// Time of `spans` (unioned) inside the complement of `busy` within [begin, end).
int64_t CoveredWhileIdle(Intervals spans, const Intervals& busy, int64_t begin, int64_t end) {
  int64_t ns = 0;
  for (const Interval& i : Union(std::move(spans))) {
    const int64_t b = std::max(begin, i.begin), f = std::min(end, i.end);
    if (f > b) ns += (f - b) - Covered(busy, b, f);
  }
  return ns;
}

}  // namespace

LaunchBound ComputeLaunchBound(const TraceModel& model, double busy_pct, const LaunchRules& r) {
  LaunchBound out;
  out.busy_pct = busy_pct;
  // Sizes counted first: each list allocated once (millions of events).
  const auto is_host = [](EventClass cls) {
    return cls == EventClass::kHostOp || cls == EventClass::kRuntime || cls == EventClass::kSync ||
           cls == EventClass::kPython;
  };
  size_t n_calls = 0, n_kernels = 0;
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    n_calls += cls == EventClass::kRuntime && model.correlation[e] >= 0;
    n_kernels += cls == EventClass::kKernel;
  }
  MappedVector<int64_t> durations, delays;
  // correlation -> the launch call's start, and the first start of the work it
  // launched (a graph launch starts hundreds of kernels, one after another:
  // only the first one's wait is the launch's delay).
  struct Launch {
    int64_t call = 0, first_task = INT64_MAX;
  };
  SortedIdMap<Launch> launch_start;
  launch_start.Reserve(n_calls);
  UnionBuilder device, host, launches, compile;  // only their unions are used
  durations.reserve(n_kernels);
  // Names are judged once each, not once per event.
  enum : uint8_t { kUnknown = 0, kLaunch = 1, kCompile = 2, kJudged = 4 };
  std::vector<uint8_t> judged(model.string_count(), kUnknown);
  const auto judge = [&](uint32_t id) {
    if (judged[id] == kUnknown) {
      const std::string_view name = model.String(id);
      judged[id] =
          kJudged | (IsLaunchCall(name) ? kLaunch : 0) | (CompileKind(name).empty() ? 0 : kCompile);
    }
    return judged[id];
  };
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    const Interval i{model.start_ns[e], model.start_ns[e] + model.duration_ns[e]};
    if (IsDevice(cls)) device.Add(i);
    if (cls == EventClass::kRuntime && model.correlation[e] >= 0) {
      launch_start.Add(model.correlation[e], {model.start_ns[e]});
    }
    if (is_host(cls)) {
      host.Add(i);
      const uint8_t kind = judge(model.name[e]);
      if (cls == EventClass::kRuntime && (kind & kLaunch)) launches.Add(i);
      if (kind & kCompile) compile.Add(i);
    }
  }
  launch_start.Sort();
  delays.reserve(n_kernels);
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kKernel) continue;
    durations.push_back(model.duration_ns[e]);
    Launch* launch = model.correlation[e] >= 0 ? launch_start.Find(model.correlation[e]) : nullptr;
    if (launch != nullptr) launch->first_task = std::min(launch->first_task, model.start_ns[e]);
  }
  launch_start.ForEach([&](int64_t, const Launch& launch) {
    if (launch.first_task == INT64_MAX) return;
    ++out.launch_pairs;
    if (launch.first_task >= launch.call) {
      delays.push_back(launch.first_task - launch.call);
    } else {
      ++out.backward_pairs;  // the kernel starts before its launch: the clocks disagree
    }
  });
  if (out.launch_pairs == 0) {
    // No correlated launch calls (Ascend): torch_npu's HostToDevice flows pair
    // the host issuing a task with the task's start on the device.
    for (const auto& f : model.launch_flows) {
      ++out.launch_pairs;
      if (f.device_ns >= f.host_ns) {
        delays.push_back(f.device_ns - f.host_ns);
      } else {
        ++out.backward_pairs;
      }
    }
  }
  // Most pairs ending before they start: the host's and the device's clocks
  // disagree, and the rest say nothing either.
  const bool clocks_disagree = 2 * out.backward_pairs > out.launch_pairs;
  if (clocks_disagree) delays.clear();
  out.kernels = static_cast<int64_t>(durations.size());
  if (durations.empty()) {
    out.reason = "no kernels";
    return out;
  }
  const auto median = durations.begin() + static_cast<ptrdiff_t>(durations.size() / 2);
  std::nth_element(durations.begin(), median, durations.end());
  out.median_kernel_ns = *median;
  if (!delays.empty()) {
    const auto p50 = delays.begin() + static_cast<ptrdiff_t>(delays.size() / 2);
    const auto p90 = delays.begin() +
                     static_cast<ptrdiff_t>(std::min(
                         delays.size() - 1, static_cast<size_t>(0.9 * (delays.size() - 1) + 0.5)));
    std::nth_element(delays.begin(), p90, delays.end());
    out.launch_delay_p90_ns = *p90;
    std::nth_element(delays.begin(), p50, p90 + 1);
    out.launch_delay_p50_ns = *p50;
  }
  const auto busy = device.Take();
  if (!busy.empty()) {
    const int64_t begin = busy.front().begin, end = busy.back().end;
    out.idle_ns = (end - begin) - Covered(busy, begin, end);
    Intervals host_spans = host.Take();
    if (out.idle_ns > 0 && !host_spans.empty()) {
      const auto pct = [&](int64_t ns) { return 100.0 * static_cast<double>(ns) / out.idle_ns; };
      out.host_busy_in_idle_pct = pct(CoveredWhileIdle(std::move(host_spans), busy, begin, end));
      out.launch_in_idle_pct = pct(CoveredWhileIdle(launches.Take(), busy, begin, end));
      out.compile_in_idle_pct = pct(CoveredWhileIdle(compile.Take(), busy, begin, end));
    }
  }
  // The preconditions, in order; the first that fails is the reason.
  if (out.kernels < r.min_kernels) {
    out.reason = fmt::format("only {} kernels (the rule needs {})", out.kernels, r.min_kernels);
  } else if (out.median_kernel_ns >= r.short_kernel_ns) {
    out.reason = fmt::format("kernels are not short: median {:.1f} us", out.median_kernel_ns / 1e3);
  } else if (busy_pct >= r.max_busy_pct) {
    out.reason = fmt::format("the device is busy {:.1f}% of its window", busy_pct);
  } else if (clocks_disagree) {
    out.reason = fmt::format(
        "launch-to-start delays are not known: {} of {} launches start on the device before the "
        "host issued them (the host's and the device's clocks disagree): not concluded",
        out.backward_pairs, out.launch_pairs);
  } else if (out.launch_delay_p50_ns < 0) {
    out.reason =
        "launch-to-start delays are unknown (no correlated launch calls or host-to-device "
        "flows): not concluded";
  } else if (out.launch_delay_p50_ns >= r.max_delay_ns) {
    out.reason = fmt::format(
        "kernels wait {:.1f} us (median) after their launch: the queue is full, so the device, "
        "not the launches, sets the pace",
        out.launch_delay_p50_ns / 1e3);
  } else if (out.host_busy_in_idle_pct < r.min_host_busy_pct) {
    out.reason = out.host_busy_in_idle_pct < 0
                     ? "the trace has no host events to show what the host did"
                     : fmt::format("the host was busy only {:.1f}% of the device's idle time",
                                   out.host_busy_in_idle_pct);
  } else if (out.launch_in_idle_pct < r.min_launch_pct) {
    out.reason = fmt::format("launch calls take only {:.1f}% of the device's idle time",
                             out.launch_in_idle_pct);
  } else if (out.compile_in_idle_pct >= r.max_compile_pct) {
    out.reason = fmt::format("compilation/warm-up covers {:.1f}% of the device's idle time",
                             out.compile_in_idle_pct);
  } else {
    out.launch_bound = true;
    out.reason = fmt::format(
        "{} kernels, median {:.1f} us; device busy {:.1f}%; launch-to-start median {:.1f} us; "
        "during device idle time the host was busy {:.0f}%, {:.0f}% in launch calls",
        out.kernels, out.median_kernel_ns / 1e3, busy_pct, out.launch_delay_p50_ns / 1e3,
        out.host_busy_in_idle_pct, out.launch_in_idle_pct);
  }
  return out;
}

namespace {

using core::ResultTable;
using core::Unit;
using core::Value;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const LaunchBound* launch = a.results.Get<LaunchBound>(kLaunchPass);
  if (launch == nullptr) return;
  ResultTable table;  // always: empty when nothing was found, its columns kept
  table.hidden_when_empty = launch->kernels <= 0;
  table.section = "launch";
  table.title = launch->launch_bound ? "Launch-bound: many short kernels on a mostly idle device"
                                     : "Kernel launches: not launch-bound";
  table.columns = {
      {"trace", "Trace", 0, false},
      {"kernels", "Kernels"},
      {.key = "median_kernel_ns", .header = "Median kernel", .precision = 3, .unit = Unit::kTime},
      {.key = "device_busy_pct", .header = "Device busy %", .precision = 1, .unit = Unit::kPercent},
      {.key = "launch_delay_p50_ns",
       .header = "Launch delay p50",
       .precision = 3,
       .unit = Unit::kTime},
      {.key = "launch_delay_p90_ns",
       .header = "Launch delay p90",
       .precision = 3,
       .unit = Unit::kTime},
      {.key = "host_busy_in_idle_pct",
       .header = "Host busy in idle %",
       .precision = 1,
       .unit = Unit::kPercent},
      {.key = "launch_in_idle_pct",
       .header = "Launch calls in idle %",
       .precision = 1,
       .unit = Unit::kPercent},
      {"launch_bound", "Launch-bound"},
      {"reason", "Why"}};
  const auto pct = [](double v) { return v >= 0 ? Value{v} : Value{}; };
  const auto ns = [](int64_t v) { return v >= 0 ? Value{v} : Value{}; };
  if (launch->kernels > 0) {  // no kernels: no launches to judge, no row
    table.AddRow({std::string(c.path), launch->kernels, launch->median_kernel_ns, launch->busy_pct,
                  ns(launch->launch_delay_p50_ns), ns(launch->launch_delay_p90_ns),
                  pct(launch->host_busy_in_idle_pct), pct(launch->launch_in_idle_pct),
                  std::string(launch->launch_bound ? "yes" : "no"), launch->reason});
  }
  table.notes.push_back(
      "Launch delay: from the launch call's start to its kernel's start (by correlation id; a "
      "graph launch's kernels run one after another: only its first kernel's start counts).");
  if (launch->backward_pairs > 0) {
    table.notes.push_back(fmt::format(
        "{} of {} launches start on the device before the host issued them (the host's and the "
        "device's clocks disagree): left out of the delays{}.",
        launch->backward_pairs, launch->launch_pairs,
        2 * launch->backward_pairs > launch->launch_pairs
            ? ", and with most of them backwards the rest are not used either"
            : ""));
  }
  tables.push_back(std::move(table));
}

// Many tiny kernels, launched as fast as the host can, on an idle device.
void LaunchBoundRule(const RuleContext& c, std::vector<Finding>& out) {
  const LaunchBound* launch = c.analysis.results.Get<LaunchBound>(kLaunchPass);
  if (launch == nullptr || !launch->launch_bound) return;
  // A window the step-time diagnosis finds is mostly one-off work (warm-up,
  // set-up, start-up) shows no steady launch pattern: its launch calls are
  // first uses (a kernel's first launch loads its module). Where the one-off
  // work leads but fills under half of it (a whole program's trace: its
  // allocations, then a loop of small kernels), the rest is still judged.
  const std::string_view diagnosis = Diagnosis(c.analysis);
  if (diagnosis == "step_compilation" || diagnosis == "step_setup" || diagnosis == "step_startup") {
    const Attribution* at = c.analysis.results.Get<Attribution>(kAttributionPass);
    const int64_t one_off =
        at == nullptr ? 0 : at->Of(StepState::kCompilation) + at->Of(StepState::kSetup);
    if (at == nullptr || diagnosis == "step_startup" || 2 * one_off >= at->window_ns) return;
  }
  out.push_back(
      {"launch_bound", Severity::kWarning,
       fmt::format("Launch-bound: {} kernels with a median of {:.1f} us", launch->kernels,
                   launch->median_kernel_ns / 1e3),
       launch->reason,
       c.analysis.pytorch
           ? "Launch fewer, larger kernels: operator fusion, graph compilation (torch.compile, "
             "CUDA or HIP graphs, graph mode on Ascend), or a larger batch."
           : "Launch fewer, larger kernels: fused kernels, CUDA or HIP graphs (graph mode on "
             "Ascend), or more work per launch."});
}

}  // namespace

Pass LaunchPass() {
  return {kLaunchPass,
          "Is the device waiting on kernel launches?",
          {"device_busy"},
          [](const TraceModel& model, Analysis& a) {
            a.results.Set(kLaunchPass, a.compute_on == ComputeOn::kDevice
                                           ? ComputeLaunchBound(model, a.busy.busy_pct)
                                           : LaunchBound{});
          },
          Tables,
          {{"launch_bound",
            {kLaunchPass},
            [](const Thresholds&) {
              return std::string(
                  "the launch pass's preconditions all hold (see passes/launch.h): many short "
                  "kernels, a mostly idle device, launch calls filling the idle time; and the "
                  "step-time diagnosis is not start-up, nor warm-up or set-up filling half the "
                  "window or more (one-off work, whose launches are first uses)");
            },
            LaunchBoundRule}}};
}

}  // namespace opscope::analyze
