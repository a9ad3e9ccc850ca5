// Where the host blocks: explicit synchronisations, copies that block the
// calling thread, and data loading. One analysis in one file: its pass, the
// table it contributes and its advisor rule, registered with one line in
// registry.cc (docs/seams.md).
//
// What blocks, by each runtime's documentation:
// - a synchronisation: a runtime call that waits for the device
//   (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize,
//   their hip* and cu* twins, AscendCL's aclrtSynchronizeStream/Device);
// - a synchronous copy: a copy call that returns only once the copy is done
//   (cudaMemcpy, hipMemcpy, hipMemcpyWithStream, aclrtMemcpy: any copy call
//   without "Async" in its name), and an asynchronous one whose host memory
//   is pageable (the CUDA Runtime API's "API synchronization behavior": a
//   copy from pageable memory to the device first synchronises the stream,
//   and one from the device to pageable memory returns only when it is
//   done), its host memory from the copy it launched (the model's copy
//   column, by correlation);
// - data loading: the DataLoader's iterator (EventClass::kDataLoading).
// Each kind's time is the union of its calls on the host threads, so nested
// or duplicated records count once; inside the complete steps where the trace
// has them (warm-up excluded), else over the host's whole span.
#include "analyze/passes/host_waits.h"

#include <fmt/format.h>

#include <algorithm>
#include <any>
#include <deque>
#include <unordered_map>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "analyze/names.h"
#include "analyze/passes/attribution.h"
#include "analyze/passes/pass.h"
#include "analyze/runtime_calls.h"

namespace opscope::analyze {
namespace {

constexpr std::string_view kPassName = "host_waits";
// The rule's thresholds: a kind's share of the window, and its least time.
constexpr double kBlockedPct = 10, kBlockedCriticalPct = 30;
constexpr int64_t kBlockedMinNs = 1'000'000;

struct HostWait {
  std::string kind;  // "synchronization", "synchronous copy", "data loading"
  int64_t calls = 0;
  int64_t ns = 0;  // the union of its calls, inside the window
  // Of ns, the time the device (on a CPU trace: no operator) was working: a
  // wait the device's work sets the pace of, which removing it cannot save.
  int64_t device_busy_ns = 0;
  // Of device_busy_ns, the part the host could have overlapped with what it
  // did next were the waits for the device gone: the device's work during
  // them, as far as the time the device then idled while the host worked
  // (operators, runtime calls, data loading; not waiting, not untraced)
  // absorbs it before the window ends (Compute). Without the waits the host
  // does that work at once, and what it launches queues behind the
  // device's. Synchronisations and synchronous copies only.
  int64_t overlap_ns = 0;
  int64_t longest_ns = 0;
  std::string longest;   // the longest call, and the operator it ran in
  int64_t bytes = -1;    // synchronous copies: bytes copied, where recorded
  int64_t pageable = 0;  // synchronous copies: async calls blocked by pageable memory
};

struct HostWaits {
  std::vector<HostWait> kinds;  // the kinds that occur, most time first
  int64_t window_ns = 0;        // the time the shares are of
  int64_t complete_steps = 0;   // 0: the window is the host's span
};

enum Kind { kSyncCall, kSyncCopy, kLoading, kKinds };
constexpr const char* kKindNames[kKinds] = {"synchronization", "synchronous copy", "data loading"};

bool IsHostClass(EventClass cls) {
  return cls == EventClass::kHostOp || cls == EventClass::kRuntime ||
         cls == EventClass::kDataLoading || cls == EventClass::kPython ||
         cls == EventClass::kAnnotation;
}

HostWaits Compute(const TraceModel& model, const Analysis& a) {
  HostWaits out;
  // The copies each launch produced, by correlation: pageable host memory, bytes.
  struct Launched {
    bool pageable = false;
    int64_t bytes = -1;
  };
  std::unordered_map<int64_t, Launched> copies;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kMemcpy || model.correlation[e] < 0) continue;
    Launched& l = copies[model.correlation[e]];
    l.pageable |= model.Copy(e).host_memory == HostMemory::kPageable;
    if (model.bytes[e] >= 0) l.bytes = std::max<int64_t>(l.bytes, 0) + model.bytes[e];
  }
  // Each distinct runtime call name's kind, once.
  std::vector<int8_t> kind_of_name(model.string_count(), -2);  // -2 unknown, -1 none
  const auto runtime_kind = [&](uint32_t name) {
    int8_t& k = kind_of_name[name];
    if (k == -2) {
      const std::string n = Lower(BaseName(model.String(name)));
      k = Contains(n, "synchronize") ? kSyncCall
          : Contains(n, "memcpy")    ? (Contains(n, "async") ? -3 : kSyncCopy)
                                     : -1;
    }
    return k;
  };
  Intervals spans[kKinds];
  UnionBuilder host_work;  // operators, runtime calls, data loading
  HostWait waits[kKinds];
  std::vector<size_t> longest(kKinds, SIZE_MAX);
  int64_t host_begin = INT64_MAX, host_end = INT64_MIN;
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    if (!IsHostClass(cls)) continue;
    const int64_t begin = model.start_ns[e], end = begin + model.duration_ns[e];
    host_begin = std::min(host_begin, begin), host_end = std::max(host_end, end);
    if (cls == EventClass::kHostOp || cls == EventClass::kRuntime ||
        cls == EventClass::kDataLoading) {
      host_work.Add({begin, end});
    }
    int k = -1;
    if (cls == EventClass::kDataLoading) {
      k = kLoading;
    } else if (cls == EventClass::kRuntime) {
      k = runtime_kind(model.name[e]);
      if (k == -3 || k == kSyncCopy) {
        const auto it = copies.find(model.correlation[e]);
        const Launched* copy = it == copies.end() ? nullptr : &it->second;
        if (k == -3) {  // an async copy: blocking where its host memory is pageable
          k = copy != nullptr && copy->pageable ? kSyncCopy : -1;
          if (k == kSyncCopy) ++waits[kSyncCopy].pageable;
        }
        if (k == kSyncCopy && copy != nullptr && copy->bytes >= 0) {
          waits[kSyncCopy].bytes = std::max<int64_t>(waits[kSyncCopy].bytes, 0) + copy->bytes;
        }
      }
    }
    if (k < 0) continue;
    ++waits[k].calls;
    spans[k].push_back({begin, end});
    if (longest[k] == SIZE_MAX || model.duration_ns[e] > model.duration_ns[longest[k]]) {
      longest[k] = e;
    }
  }
  // The window: the complete steps, else the host's span.
  Intervals window = CompleteStepSpans(a.steps);
  out.complete_steps = a.step_summary.complete;
  if (window.empty() && host_begin < host_end) window.push_back({host_begin, host_end});
  out.window_ns = Total(window);
  // What the device does meanwhile (a CPU trace's device is its operators,
  // those run while loading data aside: they are the loading).
  UnionBuilder working;
  const bool cpu = a.compute_on == ComputeOn::kCpu;
  const auto loading = [&](size_t e) {
    bool inside = false;
    ForEachAncestor(a.links, a.links.parent[e], [&](int32_t p) {
      inside = model.cls[static_cast<size_t>(p)] == EventClass::kDataLoading;
      return !inside;
    });
    return inside;
  };
  // Work launched and held back past kQueuedGraceNs after its launch call
  // returned (the attribution's "queued"): the device waits on a dependency
  // then, and a host call waiting for that work waits on the dependency.
  const CorrelationIndex launch_of(model,
                                   [&](size_t e) { return model.cls[e] == EventClass::kRuntime; });
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    if (cpu ? cls == EventClass::kHostOp && !loading(e) : IsDevice(cls)) {
      working.Add({model.start_ns[e], model.start_ns[e] + model.duration_ns[e]});
    }
    if (!cpu && IsDevice(cls)) {
      const size_t call = launch_of.Find(model.correlation[e]);
      if (call == SIZE_MAX) continue;
      const int64_t ready = model.start_ns[call] + model.duration_ns[call] + kQueuedGraceNs;
      if (model.start_ns[e] > ready) working.Add({ready, model.start_ns[e]});
    }
  }
  const Intervals busy = working.Take();
  // Of the device's work during each wait for it, what the host's work after
  // the wait could have run beside, were the waits (of both kinds: a
  // `.item()` is a copy and then a synchronisation) gone: the device's
  // backlog grows by each wait's device work and shrinks, oldest first, by
  // the time the device then idles while the host works, within the window
  // (the complete steps: the loop goes on from one to the next).
  Intervals blocked_kind[kKinds];
  for (const int k : {kSyncCall, kSyncCopy}) blocked_kind[k] = Union(spans[k]);
  const Intervals all_waits = Join(blocked_kind[kSyncCall], blocked_kind[kSyncCopy]);
  const Intervals host_only =
      Intersect(Subtract(Subtract(host_work.Take(), busy), all_waits), window);
  int64_t kept_apart[kKinds] = {};
  {
    struct Wait {
      Interval span;
      int kind;
    };
    std::vector<Wait> each;
    for (const int k : {kSyncCall, kSyncCopy}) {
      for (const Interval& in : Intersect(blocked_kind[k], window)) each.push_back({in, k});
    }
    std::sort(each.begin(), each.end(),
              [](const Wait& x, const Wait& y) { return x.span.begin < y.span.begin; });
    std::deque<std::pair<int, int64_t>> backlog;  // (kind, device work), oldest first
    int64_t from = INT64_MIN;
    const auto absorb = [&](int64_t until) {
      if (backlog.empty() || until <= from) return;
      int64_t room = Covered(host_only, from, until);
      while (room > 0 && !backlog.empty()) {
        const int64_t take = std::min(room, backlog.front().second);
        kept_apart[backlog.front().first] += take;
        room -= take;
        if ((backlog.front().second -= take) == 0) backlog.pop_front();
      }
    };
    for (const Wait& w : each) {
      absorb(w.span.begin);
      if (const int64_t worked = Covered(busy, w.span.begin, w.span.end); worked > 0) {
        backlog.emplace_back(w.kind, worked);
      }
      from = std::max(from, w.span.end);
    }
    if (!window.empty()) absorb(window.back().end);
  }
  for (int k = 0; k < kKinds; ++k) {
    if (waits[k].calls == 0) continue;
    HostWait w = std::move(waits[k]);
    w.kind = kKindNames[k];
    const Intervals blocked = k == kLoading ? Union(std::move(spans[k])) : blocked_kind[k];
    for (const Interval& in : window) w.ns += Covered(blocked, in.begin, in.end);
    w.overlap_ns = kept_apart[k];
    // The part of it the device worked through (or held launched work
    // waiting on a dependency): each blocked span against
    // the device's busy time, inside the window.
    for (const Interval& in : Intersect(blocked, window)) {
      w.device_busy_ns += Covered(busy, in.begin, in.end);
    }
    const size_t e = longest[k];
    w.longest_ns = model.duration_ns[e];
    w.longest = std::string(model.String(model.name[e]));
    // The framework operator it ran in, which is what the user's code calls.
    ForEachAncestor(a.links, a.links.parent[e], [&](int32_t p) {
      if (model.cls[static_cast<size_t>(p)] != EventClass::kHostOp) return true;
      w.longest += " in " + std::string(model.String(model.name[static_cast<size_t>(p)]));
      return false;
    });
    out.kinds.push_back(std::move(w));
  }
  std::stable_sort(out.kinds.begin(), out.kinds.end(),
                   [](const HostWait& x, const HostWait& y) { return x.ns > y.ns; });
  return out;
}

std::string WindowText(const HostWaits& w) {
  return w.complete_steps > 0
             ? fmt::format("{} ({:.3f} ms)",
                           w.complete_steps == 1
                               ? std::string("the 1 complete step")
                               : fmt::format("the {} complete steps", w.complete_steps),
                           w.window_ns / 1e6)
             : fmt::format("the host's span ({:.3f} ms; the trace has no complete steps)",
                           w.window_ns / 1e6);
}

void Tables(const Analysis& a, const TableContext& context,
            std::vector<core::ResultTable>& tables) {
  const HostWaits* w = a.results.Get<HostWaits>(kPassName);
  if (w == nullptr || w->kinds.empty()) return;
  core::ResultTable table;
  table.section = std::string(kPassName);
  table.title = "Where the host blocks";
  table.columns = {
      {"trace", "Trace", 0, false},
      {"kind", "Kind"},
      {"calls", "Calls"},
      {.key = "blocked_ns", .header = "Blocked", .unit = core::Unit::kTime},
      {.key = "share_pct", .header = "% of window", .precision = 1, .unit = core::Unit::kPercent},
      {.key = "device_busy_ns", .header = "Device working", .unit = core::Unit::kTime},
      {.key = "kept_apart_ns", .header = "Kept apart", .unit = core::Unit::kTime},
      {.key = "longest_ns", .header = "Longest", .unit = core::Unit::kTime},
      {"longest", "Longest call"},
      {.key = "bytes",
       .header = "Bytes",
       .precision = 0,
       .terminal = false,
       .unit = core::Unit::kBytes},
      {"pageable_calls", "Async on pageable", 0, false}};
  for (const HostWait& k : w->kinds) {
    const bool copy = k.kind == kKindNames[kSyncCopy];
    table.AddRow({std::string(context.path), k.kind, k.calls, k.ns, Pct(k.ns, w->window_ns),
                  k.device_busy_ns,
                  k.kind == kKindNames[kLoading] ? core::Value{} : core::Value{k.overlap_ns},
                  k.longest_ns, k.longest,
                  copy && k.bytes >= 0 ? core::Value{k.bytes} : core::Value{},
                  copy ? core::Value{k.pageable} : core::Value{}});
  }
  table.notes.push_back(
      "Blocked: the union of the calls on the host threads, within " + WindowText(*w) +
      ". Synchronous copies: copy calls that return when the copy is done, and async copies "
      "from or to pageable memory, which block too (CUDA's API synchronization behavior). Device "
      "working: the part of it during which the device (on a CPU trace, an operator) worked, "
      "or held launched work that waited on a dependency; only the rest is time the wait "
      "costs, with what is kept apart. Kept apart: of the device's work during a wait for the "
      "device, the part the host's work after the wait could have run beside, were the waits "
      "gone (as far as the time the device then idled while the host worked absorbs it, "
      "within the window).");
  tables.push_back(std::move(table));
}

// What removing a kind's waits could save. Blocked is not busy: only the
// time the device idled meanwhile can be saved; while the device works, its
// work sets the pace. And no more than the steps' critical path holds of
// waits of its kind (and of time it cannot explain): a wait the steps did
// not wait on saves nothing. A wait the device worked through saves the part
// of that work the host could have overlapped with what it did next
// (overlap_ns), bounded by the device work the path reached through waits.
int64_t Saves(const Analysis& a, const HostWaits& w, const HostWait& k) {
  const bool loading = k.kind == kKindNames[kLoading];
  const int64_t unbounded = k.ns - k.device_busy_ns + k.overlap_ns;
  return std::min(unbounded, loading ? CriticalPathBound(a, w.window_ns, {StepState::kDataLoading})
                                     : CriticalPathWaitBound(a, w.window_ns));
}

// Whether the rule reports a kind whose waits could save `idle`.
bool Reported(const HostWaits& w, int64_t idle) {
  return Pct(idle, w.window_ns) >= kBlockedPct && idle >= kBlockedMinNs;
}

void BlockedRule(const RuleContext& c, std::vector<Finding>& out) {
  const HostWaits* w = c.analysis.results.Get<HostWaits>(kPassName);
  if (w == nullptr || w->window_ns <= 0) return;
  for (const HostWait& k : w->kinds) {
    const bool loading = k.kind == kKindNames[kLoading];
    const int64_t unbounded = k.ns - k.device_busy_ns + k.overlap_ns;
    const int64_t idle = Saves(c.analysis, *w, k);
    // The step-time diagnosis already names data loading, with this advice.
    if (loading && Diagnosis(c.analysis) == "step_data_loading") continue;
    const double pct = Pct(idle, w->window_ns);
    if (!Reported(*w, idle)) continue;
    std::string action =
        loading ? DataLoadingAdvice(c.analysis.results.Get<Attribution>(kAttributionPass))
        : k.kind == kKindNames[kSyncCopy]
            ? (c.analysis.pytorch
                   ? "Copy from pinned memory without blocking: pin_memory=True in the "
                     "DataLoader or tensor.pin_memory(), then .to(device, non_blocking=True); "
                     "replace blocking copy calls (cudaMemcpy, .cpu() in the loop) by "
                     "asynchronous ones read later."
                   : "Copy from pinned memory without blocking: host buffers from "
                     "cudaMallocHost (hipHostMalloc), copied with cudaMemcpyAsync on a stream "
                     "and waited for only where the result is used.")
        : c.analysis.pytorch
            ? "Take host synchronisations out of the step: .item(), .cpu(), printing or "
              "comparing tensors on the host, torch.cuda.synchronize(); keep values on the "
              "device and read them every N steps."
            : "Take host synchronisations out of the loop: wait on an event for the work a "
              "result needs (cudaEventSynchronize, cudaStreamWaitEvent; hipEventSynchronize, "
              "hipStreamWaitEvent) rather than on the "
              "whole device or stream, and read results every N iterations.";
    const std::string per_step =
        w->complete_steps > 0 ? fmt::format(" ({:.3f} ms per step)",
                                            idle / 1e6 / static_cast<double>(w->complete_steps))
                              : std::string();
    const int64_t idle_blocked = k.ns - k.device_busy_ns;
    action += fmt::format(
        " Fixing it saves at most {:.3f} ms{}: {}{}.", idle / 1e6, per_step,
        k.overlap_ns > 0
            ? fmt::format("{:.3f} ms blocked with the device idle, and {:.3f} ms of the device "
                          "work waited for that the host's work after the wait could have run "
                          "beside",
                          idle_blocked / 1e6, k.overlap_ns / 1e6)
            : std::string("the blocked time during which the device idled"),
        20 * (unbounded - idle) >= unbounded
            ? fmt::format(", as much as the steps' critical path holds of such waits ({:.3f} ms "
                          "in all)",
                          unbounded / 1e6)
            : std::string());
    std::string id = "host_blocked_" + k.kind;
    std::replace(id.begin(), id.end(), ' ', '_');
    out.push_back(
        {id, pct >= kBlockedCriticalPct ? Severity::kCritical : Severity::kWarning,
         fmt::format(
             fmt::runtime(k.overlap_ns > 0 ? "The host's waits in {} cost {:.1f}% of {}"
                                           : "The host is blocked in {} with the device idle for "
                                             "{:.1f}% of {}"),
             k.kind, pct,
             w->complete_steps == 1  ? "the complete step"
             : w->complete_steps > 0 ? "the complete steps"
                                     : "its span"),
         fmt::format("{} calls, {:.3f} ms of {}, of which the device worked or held queued work "
                     "{:.3f} ms (its work "
                     "set the pace then{}){}; longest: '{}', {:.3f} ms",
                     k.calls, k.ns / 1e6, WindowText(*w), k.device_busy_ns / 1e6,
                     k.overlap_ns > 0
                         ? fmt::format(", but {:.3f} ms of that work is time the device then "
                                       "idled while the host worked: the wait kept them apart",
                                       k.overlap_ns / 1e6)
                         : std::string(),
                     k.pageable > 0 ? fmt::format("; {} asynchronous copies blocked by pageable "
                                                  "host memory",
                                                  k.pageable)
                                    : std::string(),
                     k.longest, k.longest_ns / 1e6),
         std::move(action), idle});
  }
}

}  // namespace

bool SynchronizationsReported(const Analysis& analysis) {
  const HostWaits* w = analysis.results.Get<HostWaits>(kPassName);
  if (w == nullptr || w->window_ns <= 0) return false;
  for (const HostWait& k : w->kinds) {
    if (k.kind == kKindNames[kSyncCall]) return Reported(*w, Saves(analysis, *w, k));
  }
  return false;
}

Pass HostWaitsPass() {
  return {kPassName,
          "Where does the host block: synchronisations, copies that wait, data loading?",
          {"links", "steps"},
          [](const TraceModel& model, Analysis& a) { a.results.Set(kPassName, Compute(model, a)); },
          Tables,
          {{"host_blocked_<kind>",
            {std::string_view(kPassName)},
            [](const Thresholds&) {
              return fmt::format(
                  "synchronisations, synchronous copies or data loading (each a kind) block the "
                  "host while the device idles (the time the device works meanwhile is its "
                  "pace, not the wait's cost), or, for a wait for the device, keep the device "
                  "work it waited for from running beside the host's work after it (as far as "
                  "the time the device then idles while the host works absorbs it, with every "
                  "such wait gone, within the window), for at least {:g}% of the complete steps "
                  "(of the host's span "
                  "without them) and {:g} ms; critical from {:g}%; the saving is that time, at "
                  "most the steps' critical path's time in such waits (for a wait for the "
                  "device, with the device work the path reaches through them) plus its "
                  "unexplained time (the shares are of that bounded time)",
                  kBlockedPct, kBlockedMinNs / 1e6, kBlockedCriticalPct);
            },
            BlockedRule}}};
}

}  // namespace opscope::analyze
