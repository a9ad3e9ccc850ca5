// Two host practices msprof-analyze's advisor checks on a timeline, restated
// from its rule files (advisor/rules/gc.yaml, sync_batchnorm.yaml) and
// checkers (GcChecker, SyncBNChecker):
// - Python's garbage collector: torch_npu records each collection (category
//   "GC", with experimental_config's gc_detect_threshold); those of 1000 us
//   or more (gc_threshold, 1000 us in rules/en/gc.yaml and rules/cn/gc.yaml
//   since msprof-analyze's ebabc3f99 of 2024-12-04; 10 us before it) are
//   abnormal, each one blocking the whole process;
// - SyncBatchNorm: 20 or more framework events named SyncBatchNorm
//   (max_syncbn_num, the name compared without case) slow the host's dispatch
//   and synchronise the devices at every layer.
// And an optimizer the trace's framework has a fused version of, as its
// reader knows them (TraceModel::fused_optimizers; MindStudio's and
// msprof-analyze's affinity-optimizer advice: on a torch_npu trace an event
// "Optimizer.step#Adam.step" maps to torch_npu.optim.NpuFusedAdam), which
// submits the update of all parameters at once instead of a few small
// operators per parameter.
// And, on a PyTorch trace, an optimizer that updates its parameters in a
// Python loop: its steps run many operators, none of them PyTorch's
// multi-tensor (aten::_foreach_*) or fused (aten::_fused_*) kernels, which
// torch.optim's foreach=True (PyTorch 1.12 on) and fused=True select.
// And the memory operators msprof-analyze's memory rule times
// (advisor/rules/en/memory.yaml and MemCollector: the CANN calls
// AscendCL@aclMallocMemInner, AscendCL@aclrtFreePhysical and
// AscendCL@aclrtFree, a finding for each whose calls take max_total_duration,
// 10000 us, or more in all), with the device's idle time during them
// measured rather than assumed.
// And msprof-analyze's synchronize-stream rule (advisor/rules/en/
// synchronize.yaml and SynchronizeStreamChecker): among the CANN calls named
// Node@launch and AscendCL@aclrtSynchronizeStream*, in time order, the share of
// the launches a synchronisation directly follows; above its
// min_co_occurrence_ratio, 0.5, the run is most likely synchronous
// (ASCEND_LAUNCH_BLOCKING=1), which the environment rule says instead where
// the run recorded that variable set.
// One analysis in one file: its pass, table and rules, registered with one
// line in registry.cc (docs/seams.md).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "analyze/names.h"
#include "analyze/passes/pass.h"
#include "analyze/passes/steps.h"

namespace opscope::analyze {
namespace {

constexpr std::string_view kPassName = "host_practices";
constexpr int64_t kGcNs = 1'000'000;     // gc_threshold
constexpr int64_t kSyncBatchNorms = 20;  // max_syncbn_num
// The share of the trace's span in abnormal collections from which the GC
// rule warns (msprof-analyze gives no severity; 5% of the run is a cost).
constexpr double kGcWarningPct = 5;

// The share of the window in the optimizer's steps from which its advice warns.
constexpr double kOptimizerWarningPct = 10;
// A PyTorch optimizer's loop is judged where its dispatch (HostPractices::
// loop_dispatch_ns) takes this share of the window or more and its steps run
// this many operators a step or more.
constexpr double kLoopOptimizerPct = 5;
constexpr int64_t kLoopOptimizerOps = 20;
// An operator under this is dispatch more than arithmetic (attribution.h's
// tiny operator).
constexpr int64_t kLoopOptimizerOpNs = 20'000;

// msprof-analyze's memory rule: its three CANN calls (compared by the
// function after the layer's '@', so that AscendCL@aclrtFree and the
// database's aclrtFree are one), and its max_total_duration.
constexpr std::array<std::string_view, 3> kMemoryOperators = {"aclMallocMemInner",
                                                              "aclrtFreePhysical", "aclrtFree"};
constexpr int64_t kMemoryOperatorsNs = 10'000'000;
// The share of the window the device idles during them from which it warns.
constexpr double kMemoryOperatorsWarningPct = 5;
// msprof-analyze's synchronize rule: its two names (compared as its
// collector does, by their start) and min_co_occurrence_ratio.
constexpr std::string_view kNodeLaunch = "Node@launch",
                           kSynchronizeStream = "AscendCL@aclrtSynchronizeStream";
constexpr double kMinCoOccurrence = 0.5;

struct HostPractices {
  int64_t gc = 0, gc_ns = 0, gc_longest_ns = 0, gc_longest_at_ns = 0;  // abnormal collections
  int64_t sync_batchnorm = 0, sync_batchnorm_ns = 0;
  int64_t span_ns = 0;
  // An optimizer the trace's framework has fused (TraceModel::fused_optimizers):
  // its class, how many steps and their time in the window (the complete
  // steps, else the span).
  std::string optimizer, fused;  // "Adam", "torch_npu.optim.NpuFusedAdam"
  int64_t optimizer_steps = 0, optimizer_ns = 0, window_ns = 0;
  bool complete_steps = false;  // the window is the complete steps' (else the span)
  // A PyTorch optimizer's steps (no fused version known to the reader): its
  // class, steps and time in the window, the operators inside them, and
  // whether any is a multi-tensor or fused kernel (foreach=True, fused=True).
  // Of the steps' time in the window, the part outside every operator of
  // kLoopOptimizerOpNs or more: the per-parameter dispatch (small operators,
  // the Python between them) that multi-tensor kernels remove; the
  // arithmetic stays. On a device trace, only where the device idles.
  std::string loop_optimizer;
  int64_t loop_steps = 0, loop_ns = 0, loop_ops = 0, loop_dispatch_ns = 0;
  bool loop_multi_tensor = false;
  bool loop_on_device = false;  // a device trace: the dispatch counted where the device idles
  // Each memory operator's calls as the trace names them (kMemoryOperators'
  // order): count, time on the host, and the device's idle time during them
  // inside the window.
  struct MemoryOperator {
    std::string name;
    int64_t calls = 0, ns = 0, device_idle_ns = 0;
  };
  std::vector<MemoryOperator> memory_operators;
  // Over the calls of the operators the rule lists (kMemoryOperatorsNs or
  // more each), their union: time, and the device's idle time in the window.
  int64_t memory_listed_ns = 0, memory_listed_idle_ns = 0;
  // The synchronize rule: launches, synchronisations, those that directly
  // follow a launch and their time.
  int64_t node_launches = 0, stream_syncs = 0, co_occurring = 0, co_occurring_ns = 0;
};

// "Optimizer.step#Adam.step" -> "Adam"; "" for another name.
std::string_view OptimizerClass(std::string_view name) {
  constexpr std::string_view kPrefix = "Optimizer.step#", kSuffix = ".step";
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return {};
  return name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
}

// A PyTorch optimizer's steps in the window and the operators on their
// thread inside them (HostPractices::loop_optimizer).
void LoopOptimizer(const TraceModel& model, const Intervals& window, bool on_device,
                   HostPractices& out) {
  std::map<uint32_t, std::vector<Interval>> steps;  // track -> the optimizer's steps
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    if (cls != EventClass::kHostOp && cls != EventClass::kAnnotation) continue;
    const std::string_view c = OptimizerClass(model.String(model.name[e]));
    const int64_t b = model.start_ns[e], d = std::max<int64_t>(model.duration_ns[e], 0);
    const int64_t in = Covered(window, b, b + d);
    if (c.empty() || in <= 0) continue;
    out.loop_optimizer = std::string(c);
    ++out.loop_steps, out.loop_ns += in;
    steps[model.track[e]].push_back({b, b + d});
  }
  if (steps.empty()) return;
  Intervals all_steps;
  for (auto& [track, v] : steps) {
    std::sort(v.begin(), v.end(), [](auto& x, auto& y) { return x.begin < y.begin; });
    all_steps.insert(all_steps.end(), v.begin(), v.end());
  }
  Intervals work;  // the operators of kLoopOptimizerOpNs or more inside the steps
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kHostOp) continue;
    const auto it = steps.find(model.track[e]);
    if (it == steps.end()) continue;
    const int64_t b = model.start_ns[e], end = b + std::max<int64_t>(model.duration_ns[e], 0);
    // The last step that opens at or before the operator, if it holds it
    // (the step's own event, of the same span, aside).
    const auto after = std::upper_bound(it->second.begin(), it->second.end(), b,
                                        [](int64_t t, const Interval& s) { return t < s.begin; });
    if (after == it->second.begin()) continue;
    const Interval& step = *std::prev(after);
    if (end > step.end || (b == step.begin && end == step.end)) continue;
    ++out.loop_ops;
    if (end - b >= kLoopOptimizerOpNs) work.push_back({b, end});
    const std::string_view name = model.String(model.name[e]);
    if (name.starts_with("aten::_foreach_") || name.starts_with("aten::_fused_")) {
      out.loop_multi_tensor = true;
    }
  }
  const Intervals in_window = Intersect(Union(std::move(all_steps)), window);
  Intervals dispatch = Subtract(in_window, Union(std::move(work)));
  if (on_device) {
    // A host that dispatches while the device works costs the step nothing:
    // only the dispatch during which the device idles counts.
    Intervals busy;
    for (size_t e = 0; e < model.size(); ++e) {
      if (IsDevice(model.cls[e]) && model.duration_ns[e] > 0) {
        busy.push_back({model.start_ns[e], model.start_ns[e] + model.duration_ns[e]});
      }
    }
    dispatch = Subtract(dispatch, Union(std::move(busy)));
  }
  out.loop_dispatch_ns = Total(dispatch);
  out.loop_on_device = on_device;
}

HostPractices Compute(const TraceModel& model, const Analysis& a) {
  HostPractices out;
  out.span_ns = a.span.ns();
  const TraceModel::FusedOptimizers& fusable = model.fused_optimizers;
  const Intervals window = StepsElseSpan(a.steps, a.span);
  out.window_ns = Total(window);
  out.complete_steps = std::any_of(a.steps.begin(), a.steps.end(),
                                   [](const StepBreakdown& s) { return s.status == "complete"; });
  // Each judged once per string: -1 not yet.
  std::vector<int8_t> fused(model.string_count(), -1);        // name: an optimizer it fuses
  std::vector<int8_t> syncbn(model.string_count(), -1);       // name: SyncBatchNorm
  std::vector<int8_t> gc_category(model.string_count(), -1);  // category: a collection's
  std::vector<int8_t> memory_op(model.string_count(), -1);    // name: kMemoryOperators' index
  std::vector<uint32_t> memory_calls;
  std::vector<int8_t> launch_or_sync(model.string_count(), -1);  // name: 1 launch, 2 sync, 0
  std::vector<std::pair<int64_t, uint32_t>> launches_and_syncs;  // (start, event)
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    if (IsHost(cls)) {
      int8_t& k = launch_or_sync[model.name[e]];
      if (k < 0) {
        const std::string_view name = model.String(model.name[e]);
        k = name.starts_with(kNodeLaunch) ? 1 : name.starts_with(kSynchronizeStream) ? 2 : 0;
      }
      if (k > 0) launches_and_syncs.emplace_back(model.start_ns[e], static_cast<uint32_t>(e));
    }
    if (cls == EventClass::kRuntime) {
      int8_t& m = memory_op[model.name[e]];
      if (m < 0) {
        const std::string_view function = WithoutLayer(model.String(model.name[e]));
        const auto it = std::find(kMemoryOperators.begin(), kMemoryOperators.end(), function);
        m = it == kMemoryOperators.end() ? 3 : static_cast<int8_t>(it - kMemoryOperators.begin());
      }
      if (m < 3) memory_calls.push_back(static_cast<uint32_t>(e));
    }
    if (cls == EventClass::kPython) {
      int8_t& g = gc_category[model.category[e]];
      if (g < 0) g = Lower(model.String(model.category[e])) == "gc";
      if (g == 1 && model.duration_ns[e] >= kGcNs) {
        ++out.gc, out.gc_ns += model.duration_ns[e];
        if (model.duration_ns[e] > out.gc_longest_ns) {
          out.gc_longest_ns = model.duration_ns[e], out.gc_longest_at_ns = model.start_ns[e];
        }
      }
    } else if (cls == EventClass::kHostOp) {
      int8_t& k = syncbn[model.name[e]];
      if (k < 0) k = Lower(model.String(model.name[e])) == "syncbatchnorm";
      if (k == 1) ++out.sync_batchnorm, out.sync_batchnorm_ns += model.duration_ns[e];
    }
    if (!fusable.classes.empty() &&
        (cls == EventClass::kHostOp || cls == EventClass::kAnnotation)) {
      int8_t& f = fused[model.name[e]];
      const std::string_view name = model.String(model.name[e]);
      if (f < 0) {
        const std::string_view c = OptimizerClass(name);
        f = std::find(fusable.classes.begin(), fusable.classes.end(), c) != fusable.classes.end();
      }
      if (f != 1) continue;
      const int64_t b = model.start_ns[e], in = Covered(window, b, b + model.duration_ns[e]);
      if (in > 0) {
        out.optimizer = std::string(OptimizerClass(name));
        out.fused = fusable.prefix + out.optimizer;
        ++out.optimizer_steps, out.optimizer_ns += in;
      }
    }
  }
  if (fusable.classes.empty() && a.pytorch) {
    LoopOptimizer(model, window, a.compute_on == ComputeOn::kDevice, out);
  }
  std::sort(launches_and_syncs.begin(), launches_and_syncs.end());
  for (size_t i = 0; i < launches_and_syncs.size(); ++i) {
    const uint32_t e = launches_and_syncs[i].second;
    if (launch_or_sync[model.name[e]] == 1) {
      ++out.node_launches;
      continue;
    }
    ++out.stream_syncs;
    if (i > 0 && launch_or_sync[model.name[launches_and_syncs[i - 1].second]] == 1) {
      ++out.co_occurring, out.co_occurring_ns += std::max<int64_t>(model.duration_ns[e], 0);
    }
  }
  if (!memory_calls.empty()) {
    // The device's busy time, to measure its idle time during the calls.
    Intervals device;
    for (size_t e = 0; e < model.size(); ++e) {
      if (IsDevice(model.cls[e]) && model.duration_ns[e] > 0) {
        device.push_back({model.start_ns[e], model.start_ns[e] + model.duration_ns[e]});
      }
    }
    // The window's time in which the device idles.
    const Intervals idle = Subtract(window, Union(std::move(device)));
    std::vector<HostPractices::MemoryOperator> by(kMemoryOperators.size());
    for (const uint32_t e : memory_calls) {
      HostPractices::MemoryOperator& m = by[static_cast<size_t>(memory_op[model.name[e]])];
      const int64_t b = model.start_ns[e], d = std::max<int64_t>(model.duration_ns[e], 0);
      if (m.calls == 0) m.name = std::string(model.String(model.name[e]));
      ++m.calls, m.ns += d, m.device_idle_ns += Covered(idle, b, b + d);
    }
    Intervals listed;  // the calls of the operators the rule lists, at once on any thread
    for (const uint32_t e : memory_calls) {
      if (by[static_cast<size_t>(memory_op[model.name[e]])].ns >= kMemoryOperatorsNs) {
        listed.push_back(
            {model.start_ns[e], model.start_ns[e] + std::max<int64_t>(model.duration_ns[e], 0)});
      }
    }
    const Intervals calls = Union(std::move(listed));
    out.memory_listed_ns = Total(calls);
    out.memory_listed_idle_ns = Total(Intersect(calls, idle));
    for (HostPractices::MemoryOperator& m : by) {
      if (m.calls > 0) out.memory_operators.push_back(std::move(m));
    }
  }
  return out;
}

using core::ResultTable;
using core::Unit;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const auto* h = a.results.Get<HostPractices>(kPassName);
  if (h == nullptr || (h->gc == 0 && h->sync_batchnorm == 0)) return;
  ResultTable table;
  table.section = std::string(kPassName);
  table.title = "Host practices: Python's garbage collector, SyncBatchNorm";
  table.columns = {{"trace", "Trace", 0, false},
                   {"what", "What"},
                   {"count", "Count"},
                   {.key = "total_ns", .header = "Total", .precision = 3, .unit = Unit::kTime}};
  const std::string path(c.path);
  if (h->gc > 0)
    table.AddRow({path, fmt::format("garbage collections of {:g} us or more", kGcNs / 1e3), h->gc,
                  h->gc_ns});
  if (h->sync_batchnorm > 0) {
    table.AddRow({path, std::string("SyncBatchNorm"), h->sync_batchnorm, h->sync_batchnorm_ns});
  }
  tables.push_back(std::move(table));
}

void GcRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* h = c.analysis.results.Get<HostPractices>(kPassName);
  if (h == nullptr || h->gc == 0) return;
  const double pct = Pct(h->gc_ns, h->span_ns);
  out.push_back(
      {"python_gc", pct >= kGcWarningPct ? Severity::kWarning : Severity::kInfo,
       fmt::format("Python's garbage collector ran {} time{} for {:g} us or more: {:.3f} ms, "
                   "{:.1f}% of the trace's span, each blocking the whole process",
                   h->gc, h->gc == 1 ? "" : "s", kGcNs / 1e3, h->gc_ns / 1e6, pct),
       fmt::format("the longest {:.3f} ms, at +{:.3f} ms (the host_practices table)",
                   h->gc_longest_ns / 1e6, (h->gc_longest_at_ns - c.analysis.span.begin) / 1e6),
       "Create fewer long-lived Python objects in the loop (release them, avoid reference "
       "cycles), raise the collector's thresholds (gc.set_threshold) or freeze what start-up "
       "allocated (gc.freeze()); gc.disable() in the training loop with a gc.collect() every N "
       "steps moves the pauses where they cost least."});
}

// A PyTorch optimizer that updates its parameters one at a time.
void LoopOptimizerRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* h = c.analysis.results.Get<HostPractices>(kPassName);
  if (h == nullptr || h->loop_optimizer.empty() || h->loop_multi_tensor || h->window_ns <= 0 ||
      h->loop_steps <= 0) {
    return;
  }
  const double pct = Pct(h->loop_ns, h->window_ns);
  const double dispatch_pct = Pct(h->loop_dispatch_ns, h->window_ns);
  const int64_t per_step = h->loop_ops / h->loop_steps;
  if (dispatch_pct < kLoopOptimizerPct || per_step < kLoopOptimizerOps) return;
  out.push_back(
      {"fused_optimizer",
       dispatch_pct >= kOptimizerWarningPct ? Severity::kWarning : Severity::kInfo,
       fmt::format("The {} optimizer updates the parameters one at a time: its steps take "
                   "{:.1f}% of the window ({:.3f} ms), {:.1f}% in dispatching {} operators a "
                   "step{}, none of them a multi-tensor kernel",
                   h->loop_optimizer, pct, h->loop_ns / 1e6, dispatch_pct, per_step,
                   h->loop_on_device ? " with the device idle" : ""),
       fmt::format("{} Optimizer.step#{}.step event{}, {:.3f} ms of {:.3f} ms; {} operators "
                   "inside them, no aten::_foreach_* or aten::_fused_* among them; {:.3f} ms of "
                   "the steps lie outside every operator of {:.0f} us or more (small operators "
                   "and the Python between them){}",
                   h->loop_steps, h->loop_optimizer, h->loop_steps == 1 ? "" : "s",
                   h->loop_ns / 1e6, h->window_ns / 1e6, h->loop_ops, h->loop_dispatch_ns / 1e6,
                   kLoopOptimizerOpNs / 1e3, h->loop_on_device ? " while the device idles" : ""),
       fmt::format("Construct it with foreach=True (torch.optim.{}(params, ..., foreach=True), "
                   "PyTorch 1.12 on; the default on CUDA since 2.0): the same update in a few "
                   "multi-tensor operators for all parameters, not a few small ones per "
                   "parameter; or fused=True where this PyTorch supports it for the optimizer "
                   "and device (it can use more memory). It saves at most the dispatch, {:.3f} "
                   "ms ({:.1f}% of the window); the arithmetic stays.",
                   h->loop_optimizer, h->loop_dispatch_ns / 1e6, dispatch_pct),
       h->loop_dispatch_ns});
}

void FusedOptimizerRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* h = c.analysis.results.Get<HostPractices>(kPassName);
  if (h != nullptr && h->optimizer.empty()) LoopOptimizerRule(c, out);
  if (h == nullptr || h->optimizer.empty() || h->window_ns <= 0) return;
  const double pct = Pct(h->optimizer_ns, h->window_ns);
  out.push_back(
      {"fused_optimizer", pct >= kOptimizerWarningPct ? Severity::kWarning : Severity::kInfo,
       fmt::format("The {} optimizer's steps take {:.1f}% of the window ({:.3f} ms): {} "
                   "updates all parameters at once",
                   h->optimizer, pct, h->optimizer_ns / 1e6, h->fused),
       fmt::format("{} Optimizer.step#{}.step event{}, {:.3f} ms of {:.3f} ms", h->optimizer_steps,
                   h->optimizer, h->optimizer_steps == 1 ? "" : "s", h->optimizer_ns / 1e6,
                   h->window_ns / 1e6),
       fmt::format("Replace torch.optim.{0} with {1} (the same arguments): it combines the "
                   "parameters' tensors and submits one update "
                   "instead of a few small operators per parameter, cutting the host's dispatch "
                   "(it can use more device memory). Where the step is called: the \"Call stack\" "
                   "of its Optimizer.step event in trace_view.json, recorded where the run "
                   "profiled with with_stack=True.",
                   h->optimizer, h->fused)});
}

// msprof-analyze's memory rule, one finding for the memory operators whose
// calls take 10 ms or more in all, each named with its count and time.
void MemoryOperatorsRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* h = c.analysis.results.Get<HostPractices>(kPassName);
  if (h == nullptr) return;
  std::string listed, actions;
  bool malloc_inner = false, free_calls = false;
  for (const HostPractices::MemoryOperator& m : h->memory_operators) {
    if (m.ns < kMemoryOperatorsNs) continue;
    listed += fmt::format(
        "{}{} {} call{} {:.3f} ms (the device idles {:.3f} ms of it in the "
        "window)",
        listed.empty() ? "" : "; ", m.name, m.calls, m.calls == 1 ? "" : "s", m.ns / 1e6,
        m.device_idle_ns / 1e6);
    (m.name.ends_with("aclMallocMemInner") ? malloc_inner : free_calls) = true;
  }
  if (listed.empty()) return;
  const int64_t ns = h->memory_listed_ns, idle = h->memory_listed_idle_ns;
  const double idle_pct = Pct(idle, h->window_ns);
  if (malloc_inner) {
    actions +=
        "For the allocations (aclMallocMemInner): let torch_npu's caching allocator grow its "
        "segments instead of allocating new ones, PYTORCH_NPU_ALLOC_CONF=expandable_segments:True "
        "in the job's environment. ";
  }
  if (free_calls) {
    actions +=
        "For the frees (aclrtFree, aclrtFreePhysical): watch HBM usage while the job runs (npu-smi "
        "info); where it reaches the device's memory, a smaller batch or micro-batch stops the "
        "allocator releasing and reallocating; and find torch.npu.empty_cache() (or "
        "torch.cuda.empty_cache()) called in the loop (the events' call stacks, recorded with "
        "with_stack=True) and move it out.";
  }
  out.push_back(
      {"memory_operators",
       idle_pct >= kMemoryOperatorsWarningPct ? Severity::kWarning : Severity::kInfo,
       fmt::format("Device memory is allocated or freed on the host for {:.3f} ms, and the "
                   "device idles {:.3f} ms of it ({:.1f}% of the window, {})",
                   ns / 1e6, idle / 1e6, idle_pct,
                   h->complete_steps ? "the complete steps' time" : "the trace's span"),
       fmt::format("{} (msprof-analyze's memory rule: a memory operator's calls taking {:g} ms or "
                   "more in all)",
                   listed, kMemoryOperatorsNs / 1e6),
       actions});
}

// msprof-analyze's synchronize rule, where the run did not record
// ASCEND_LAUNCH_BLOCKING=1 (the environment rule's finding then).
void LaunchBlockingRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* h = c.analysis.results.Get<HostPractices>(kPassName);
  if (h == nullptr || h->node_launches == 0) return;
  const double ratio = static_cast<double>(h->co_occurring) / static_cast<double>(h->node_launches);
  if (ratio <= kMinCoOccurrence) return;
  std::string recorded;  // the variable's value where the run recorded its environment
  if (c.reported != nullptr) {
    for (const auto& [name, value] : c.reported->environment) {
      if (name == "ASCEND_LAUNCH_BLOCKING") recorded = value.empty() ? "empty" : value;
    }
  }
  if (recorded == "1") return;  // the environment rule says it
  out.push_back(
      {"launch_blocking", Severity::kWarning,
       fmt::format("A stream synchronisation follows {:.0f}% of the operator launches ({} of "
                   "{}): the run is most likely synchronous, each operator waiting for the "
                   "device",
                   100 * ratio, h->co_occurring, h->node_launches),
       fmt::format("{} Node@launch and {} AscendCL@aclrtSynchronizeStream calls in time order, "
                   "{} synchronisations directly after a launch, {:.3f} ms in them "
                   "(msprof-analyze's synchronize rule: a co-occurrence above {:g}){}",
                   h->node_launches, h->stream_syncs, h->co_occurring, h->co_occurring_ns / 1e6,
                   kMinCoOccurrence,
                   recorded.empty()
                       ? std::string()
                       : fmt::format("; the run records ASCEND_LAUNCH_BLOCKING={}", recorded)),
       recorded.empty()
           ? "Check the job's environment for ASCEND_LAUNCH_BLOCKING=1 and unset it (or export "
             "ASCEND_LAUNCH_BLOCKING=0) outside debugging; where it is not set, find what "
             "synchronises after each operator (torch.npu.synchronize(), .item(), .cpu() or "
             "printing tensors in the loop)."
           : "ASCEND_LAUNCH_BLOCKING is not 1 in this run: find what synchronises after each "
             "operator (torch.npu.synchronize(), .item(), .cpu() or printing tensors in the "
             "loop) and keep values on the device."});
}

void SyncBatchNormRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* h = c.analysis.results.Get<HostPractices>(kPassName);
  if (h == nullptr || h->sync_batchnorm < kSyncBatchNorms) return;
  out.push_back(
      {"sync_batchnorm", Severity::kInfo,
       fmt::format("{} SyncBatchNorm calls ({:.3f} ms on the host): each synchronises the "
                   "devices' statistics, and slows the host's dispatch",
                   h->sync_batchnorm, h->sync_batchnorm_ns / 1e6),
       fmt::format("{} framework events named SyncBatchNorm (msprof-analyze's limit: {})",
                   h->sync_batchnorm, kSyncBatchNorms),
       "Use plain BatchNorm where per-device statistics suffice (remove "
       "torch.nn.SyncBatchNorm.convert_sync_batchnorm), or torch_npu's more efficient "
       "SyncBatchNorm forward (one all-gather of the statistics)."});
}

}  // namespace

Pass HostPracticesPass() {
  return {kPassName,
          "Does the host pay for Python's garbage collector, SyncBatchNorm, an unfused "
          "optimizer, memory allocated in the loop or a synchronisation after every launch?",
          {"steps"},
          [](const TraceModel& model, Analysis& a) { a.results.Set(kPassName, Compute(model, a)); },
          Tables,
          {{"python_gc",
            {std::string_view(kPassName)},
            [](const Thresholds&) {
              return fmt::format(
                  "the trace records Python's garbage collections (torch_npu's GC events) and "
                  "one lasts {:g} us or more (msprof-analyze's gc_threshold); a warning where "
                  "they take {:g}% of the trace's span or more",
                  kGcNs / 1e3, kGcWarningPct);
            },
            GcRule},
           {"sync_batchnorm",
            {std::string_view(kPassName)},
            [](const Thresholds&) {
              return fmt::format(
                  "{} or more framework events named SyncBatchNorm (msprof-analyze's "
                  "max_syncbn_num)",
                  kSyncBatchNorms);
            },
            SyncBatchNormRule},
           {"fused_optimizer",
            {std::string_view(kPassName)},
            [](const Thresholds&) {
              return fmt::format(
                  "the trace records Optimizer.step#<class>.step for an optimizer its "
                  "framework has a fused version of, as its reader knows them (torch_npu: "
                  "torch_npu.optim.NpuFused<class> for SGD, Adadelta, Lamb, Adam, AdamW, AdamP, "
                  "BertAdam, RMSprop, RMSpropTF; MindStudio's affinity-optimizer advice); on "
                  "another PyTorch trace, where it runs {} operators a step or more, none of "
                  "them a multi-tensor or fused kernel (aten::_foreach_*, aten::_fused_*: "
                  "foreach=True, fused=True), and its steps' time outside every operator of "
                  "{:g} us or more (the dispatch such kernels remove, the saving; on a device "
                  "trace only while the device idles) is {:g}% of "
                  "the window or more; a warning where its steps (that dispatch, on another "
                  "PyTorch trace) take {:g}% of the complete steps' time or more",
                  kLoopOptimizerOps, kLoopOptimizerOpNs / 1e3, kLoopOptimizerPct,
                  kOptimizerWarningPct);
            },
            FusedOptimizerRule},
           {"memory_operators",
            {std::string_view(kPassName)},
            [](const Thresholds&) {
              return fmt::format(
                  "the CANN calls msprof-analyze's memory rule times (aclMallocMemInner, "
                  "aclrtFreePhysical, aclrtFree, with or without their layer's AscendCL@) take "
                  "{:g} ms or more in all for one of them (its max_total_duration); a warning "
                  "where the device idles during them for {:g}% of the window (the complete "
                  "steps, else the trace's span) or more",
                  kMemoryOperatorsNs / 1e6, kMemoryOperatorsWarningPct);
            },
            MemoryOperatorsRule},
           {"launch_blocking",
            {std::string_view(kPassName)},
            [](const Thresholds&) {
              return fmt::format(
                  "among the CANN calls named Node@launch and AscendCL@aclrtSynchronizeStream*, "
                  "in time order, a synchronisation directly follows more than {:g} of the "
                  "launches (msprof-analyze's synchronize rule, min_co_occurrence_ratio); not "
                  "where the run records ASCEND_LAUNCH_BLOCKING=1 (the environment finding)",
                  kMinCoOccurrence);
            },
            LaunchBlockingRule}}};
}

}  // namespace opscope::analyze
