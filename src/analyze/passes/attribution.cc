// The attribution of the steps' time to states (attribution.h): the pass and
// its table.
#include "analyze/passes/attribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "analyze/analysis.h"
#include "analyze/compute_device.h"
#include "analyze/flat_map.h"
#include "analyze/intervals.h"
#include "analyze/mapped.h"
#include "analyze/median.h"
#include "analyze/names.h"
#include "analyze/passes/critical_path.h"
#include "analyze/passes/first_calls.h"
#include "analyze/passes/import_notes.h"
#include "analyze/passes/op_stats.h"
#include "analyze/passes/transfers.h"
#include "analyze/reported.h"
#include "analyze/runtime_calls.h"
#include "core/text.h"

namespace opscope::analyze {

namespace {

constexpr size_t kTop = 5;
// Calls of one allocation function from which it is made again and again
// (in a loop), not once at start-up.
constexpr int64_t kRecurringCalls = 10;

struct StateText {
  std::string_view key, label;
};
constexpr std::array<StateText, kStepStates> kStateText = {{
    {"compute", "device compute"},
    {"communication_exposed", "exposed communication"},
    {"memory", "memory traffic (copies, sets, DMA)"},
    {"device_wait", "device waiting on an event or a peer"},
    {"queued", "device waiting, work queued behind a dependency"},
    {"data_loading", "data loading"},
    {"compilation", "compilation and warm-up"},
    {"setup", "one-off set-up"},
    {"launch", "host launch overhead"},
    {"framework", "framework and Python overhead"},
    {"blocked", "host blocked in a synchronisation"},
    {"annotation_only", "untraced, inside an annotation only"},
    {"untraced", "untraced"},
}};

size_t Index(StepState s) { return static_cast<size_t>(s); }

// A state's label in the trace's terms: on a trace without device work the
// compute is the CPU's operators.
std::string_view LabelIn(const Attribution& at, StepState s) {
  return at.cpu_is_device && s == StepState::kCompute ? "CPU compute (operators)"
                                                      : kStateText[Index(s)].label;
}

// Covered() for queries whose begins mostly do not decrease (time-ordered
// pieces, track after track): each advances a cursor, and a query that goes
// back in time (the next track) finds its place by binary search.
class CoverCursor {
 public:
  explicit CoverCursor(const Intervals& merged) : v_(&merged) {}
  int64_t Covered(int64_t begin, int64_t end) {
    const Intervals& v = *v_;
    if (begin < last_) {
      i_ = static_cast<size_t>(
          std::partition_point(v.begin(), v.end(),
                               [&](const Interval& x) { return x.end <= begin; }) -
          v.begin());
    }
    last_ = begin;
    while (i_ < v.size() && v[i_].end <= begin) ++i_;
    int64_t n = 0;
    for (size_t j = i_; j < v.size() && v[j].begin < end; ++j) {
      n += std::min(end, v[j].end) - std::max(begin, v[j].begin);
    }
    return n;
  }

 private:
  const Intervals* v_;
  size_t i_ = 0;
  int64_t last_ = INT64_MIN;
};

// Sorted runs of intervals (one per host track), merged into their union in
// O(n log runs): the runs are merged pairwise, then touching ones joined.
struct SortedRuns {
  Intervals v;
  std::vector<size_t> starts;
  void NewRun() {
    if (starts.empty() || starts.back() != v.size()) starts.push_back(v.size());
  }
  Intervals TakeUnion() {
    std::vector<size_t> s = starts;
    s.push_back(v.size());
    const auto by_begin = [](const Interval& x, const Interval& y) { return x.begin < y.begin; };
    while (s.size() > 2) {
      std::vector<size_t> merged;
      for (size_t i = 0; i + 2 < s.size(); i += 2) {
        std::inplace_merge(v.begin() + static_cast<std::ptrdiff_t>(s[i]),
                           v.begin() + static_cast<std::ptrdiff_t>(s[i + 1]),
                           v.begin() + static_cast<std::ptrdiff_t>(s[i + 2]), by_begin);
        merged.push_back(s[i]);
      }
      if (s.size() % 2 == 0) merged.push_back(s[s.size() - 2]);
      merged.push_back(s.back());
      s = std::move(merged);
    }
    Intervals out = Join(v, {});  // the touching ones joined
    v = {};
    starts.clear();
    return out;
  }
};

// Operators that only describe tensors (allocation, views, dtype plumbing):
// on a CPU trace they are the framework's time, not compute.
bool IsBookkeeping(std::string_view op) {
  static constexpr std::string_view kNames[] = {"empty",
                                                "empty_strided",
                                                "empty_like",
                                                "view",
                                                "as_strided",
                                                "detach",
                                                "detach_",
                                                "alias",
                                                "reshape",
                                                "_reshape_alias",
                                                "t",
                                                "transpose",
                                                "expand",
                                                "squeeze",
                                                "unsqueeze",
                                                "select",
                                                "slice",
                                                "permute",
                                                "resize_",
                                                "set_",
                                                "lift_fresh",
                                                "_unsafe_view",
                                                "unbind",
                                                "split",
                                                "chunk",
                                                "narrow",
                                                "flatten",
                                                "numel",
                                                "size",
                                                "stride",
                                                "result_type",
                                                "is_nonzero",
                                                "_has_compatible_shallow_copy_type",
                                                "expand_as",
                                                "view_as",
                                                "contiguous"};
  const std::string_view fn = FunctionOf(op);
  return std::find(std::begin(kNames), std::end(kNames), fn) != std::end(kNames);
}

// A runtime call's state by its kind; `copy_blocks`: an asynchronous copy
// that blocks all the same (CopyBlocks).
StepState RuntimeState(RuntimeKind kind, bool copy_blocks) {
  switch (kind) {
    case RuntimeKind::kBlocked: return StepState::kBlocked;
    case RuntimeKind::kSetup: return StepState::kSetup;
    case RuntimeKind::kCompile: return StepState::kCompilation;
    case RuntimeKind::kAsyncCopy: return copy_blocks ? StepState::kBlocked : StepState::kLaunch;
    default: return StepState::kLaunch;
  }
}

void KeepTop(std::vector<std::pair<std::string, int64_t>>& v, size_t keep = kTop) {
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  if (v.size() > keep) v.resize(keep);
}

class Attributor {
 public:
  Attributor(const TraceModel& model, const Analysis& a) : model_(model), a_(a) {
    out_.cpu_is_device = a.compute_on == ComputeOn::kCpu;
    scopes_are_work_ = out_.cpu_is_device && ScopesAreTheWork(model);
  }

  Attribution Run() {
    Window();
    if (window_.empty()) return std::move(out_);
    DeviceTasks();
    TrackGroups host = GroupByTrack(model_, [&](size_t e) { return IsHost(model_.cls[e]); });
    SortByOpening(model_, host);
    // The device's states first: a host piece while the device works or
    // waits on its own work counts as the device's, so only the pieces that
    // reach outside that time are kept (on a busy device, few).
    std::array<Intervals, kStepStates> unions;
    Intervals device;
    for (size_t s = 0; s <= Index(StepState::kQueued); ++s) {
      unions[s] = spans_[s].Take();
      device = Join(device, unions[s]);
    }
    // The host's states, each the union over its threads.
    std::array<SortedRuns, kStepStates> runs;
    CoverCursor on_device(device);
    SweepHost(
        host, false,
        [&](int64_t begin, int64_t end, StepState s, uint32_t) {
          if (on_device.Covered(begin, end) < end - begin) runs[Index(s)].v.push_back({begin, end});
        },
        [&] {
          for (SortedRuns& r : runs) r.NewRun();
        });
    Intervals().swap(device);
    // Each instant to the first state that holds there.
    for (size_t s = 0; s < kStepStates; ++s) {
      unions[s] =
          Join(s <= Index(StepState::kQueued) ? unions[s] : spans_[s].Take(), runs[s].TakeUnion());
    }
    out_.communication_overlapped_ns =
        Total(Intersect(Intersect(window_, unions[Index(StepState::kCommunication)]),
                        unions[Index(StepState::kCompute)]));
    const Intervals blocked = unions[Index(StepState::kBlocked)];  // on any thread
    Intervals remaining = window_;
    for (size_t s = 0; s + 1 < kStepStates; ++s) {
      exclusive_[s] = Intersect(remaining, unions[s]);
      out_.ns[s] = Total(exclusive_[s]);
      remaining = Subtract(remaining, unions[s]);
      unions[s] = {};
    }
    out_.communication_wait_ns =
        Total(Intersect(peer_waits_.Take(), exclusive_[Index(StepState::kCommunication)]));
    out_.overhead_while_blocked_ns =
        Total(Intersect(blocked, exclusive_[Index(StepState::kLaunch)])) +
        Total(Intersect(blocked, exclusive_[Index(StepState::kFramework)]));
    out_.ns[Index(StepState::kUntraced)] = Total(remaining);
    Samples(remaining);
    OsCalls(remaining);
    Contributors(host);
    Outlier();
    SlowCall();
    Startup();
    if (out_.Of(StepState::kQueued) > 0) LongestQueued();
    if (out_.cpu_is_device) {
      CountOperators(Join(remaining, exclusive_[Index(StepState::kAnnotationOnly)]));
    }
    return std::move(out_);
  }

 private:
  void Window() {
    window_ = StepsElseSpan(a_.steps, a_.span);
    out_.complete_steps = a_.step_summary.complete;
    if (out_.complete_steps == 0) out_.profiler_ns = a_.profiler_ns;
    out_.steps_inferred = out_.complete_steps > 0 && !a_.step_summary.inferred_from.empty();
    out_.window_ns = Total(window_);
  }

  // What the host's CPU samples show in the untraced time: counted by their
  // function (BaseName: without return type, template arguments and
  // parameters) and module.
  void Samples(const Intervals& untraced) {
    if (model_.cpu_samples.empty()) return;
    // A sample at t lies in a set where the set covers [t, t + 1).
    const auto inside = [](const Intervals& set, int64_t t) { return Covered(set, t, t + 1) > 0; };
    std::map<std::string, int64_t> functions, modules;
    for (const TraceModel::CpuSample& sample : model_.cpu_samples) {
      if (!inside(window_, sample.ns)) continue;
      ++out_.window_samples;
      if (!inside(untraced, sample.ns)) continue;
      ++out_.untraced_samples;
      // "float std::generate_canonical<...>(...)": without its return type.
      std::string_view function = BaseName(model_.String(sample.function));
      if (const size_t space = function.rfind(' ');
          space != std::string_view::npos && function.find("operator") == std::string_view::npos) {
        function.remove_prefix(space + 1);
      }
      ++functions[std::string(function)];
      std::string_view module = model_.String(sample.module);
      module = module.substr(module.find_last_of('/') + 1);  // npos + 1 == 0: the whole
      ++modules[std::string(module)];
    }
    const auto top = [](std::map<std::string, int64_t>& counts) {
      std::vector<std::pair<std::string, int64_t>> v(counts.begin(), counts.end());
      KeepTop(v, 3);
      return v;
    };
    out_.untraced_functions = top(functions);
    out_.untraced_modules = top(modules);
  }

  // The launching thread's OS calls in the untraced time, by function.
  void OsCalls(const Intervals& untraced) {
    if (model_.launcher_os_calls.empty()) return;
    std::map<std::string, Intervals> by_name;
    for (const TraceModel::OsCall& call : model_.launcher_os_calls) {
      by_name[std::string(model_.String(call.name))].push_back({call.start_ns, call.end_ns});
    }
    std::vector<std::pair<std::string, int64_t>> parts;
    UnionBuilder all;
    for (auto& [name, spans] : by_name) {
      const Intervals in = Intersect(Union(std::move(spans)), untraced);
      for (const Interval& i : in) all.Add(i);
      if (const int64_t ns = Total(in); ns > 0) parts.emplace_back(name, ns);
    }
    out_.untraced_os_ns = Total(all.Take());
    KeepTop(parts, 3);
    out_.untraced_os_calls = std::move(parts);
  }

  // Whether time t lies in the window.
  bool InWindow(int64_t t) const {
    const auto after = std::upper_bound(window_.begin(), window_.end(), t,
                                        [](int64_t x, const Interval& w) { return x < w.begin; });
    return after != window_.begin() && t < std::prev(after)->end;
  }
  // A host operator whose own state is compute (on a CPU trace, the work).
  bool OperatorComputes(size_t e) {
    const EventClass cls = model_.cls[e];
    return IsHost(cls) && cls != EventClass::kRuntime && NamedState(e) == StepState::kCompute;
  }

  // The outermost computing operators of a CPU trace in the window, the tiny
  // ones among them, and the short gaps between them inside `holes` (the
  // time nothing explains; Attribution::operators).
  void CountOperators(const Intervals& holes) {
    const auto computes = [&](size_t e) { return OperatorComputes(e); };
    Attribution::Operators& o = out_.operators;
    struct Op {
      uint32_t track;
      int64_t begin, end;
      bool operator<(const Op& x) const {
        return std::tie(track, begin, end) < std::tie(x.track, x.begin, x.end);
      }
    };
    // The gaps lie between any of a thread's operators, computing or not
    // (a loop of .item() calls: select, item, their bookkeeping).
    const auto op = [&](size_t e) { return model_.cls[e] == EventClass::kHostOp; };
    std::vector<Op> ops;
    for (size_t e = 0; e < model_.size(); ++e) {
      if (!op(e)) continue;
      const int32_t parent = e < a_.links.parent.size() ? a_.links.parent[e] : -1;
      const int64_t ns = model_.duration_ns[e];
      // Every operator bounds a gap (one before the window opens one that
      // reaches into it); the holes keep the gaps' part in the window.
      if (parent < 0 || !op(static_cast<size_t>(parent))) {
        ops.push_back({model_.track[e], model_.start_ns[e], model_.start_ns[e] + ns});
      }
      if (!InWindow(model_.start_ns[e]) || !computes(e) ||
          (parent >= 0 && computes(static_cast<size_t>(parent)))) {
        continue;
      }
      ++o.count, o.ns += ns;
      if (ns < kTinyOperatorNs) ++o.tiny, o.tiny_ns += ns;
    }
    // Each thread's operators in start order; a gap opens where the next
    // starts after every earlier one has ended.
    std::sort(ops.begin(), ops.end());
    Intervals gaps;
    for (size_t i = 1; i < ops.size(); ++i) {
      if (ops[i].track != ops[i - 1].track) continue;
      ops[i].end = std::max(ops[i].end, ops[i - 1].end);  // the latest end so far
      const int64_t from = ops[i - 1].end, to = ops[i].begin;
      if (to > from && to - from < kTinyOperatorNs) {
        gaps.push_back({from, to});
        if (Covered(holes, from, to) > 0) ++o.gaps;  // counted apart: a zero-length call joins two
      }
    }
    o.gap_ns = Total(Intersect(Union(std::move(gaps)), holes));
  }

  // The window's longest compute call, where it is slow against its own
  // name's calls (Attribution::SlowCall): two passes, the longest, then the
  // durations of its name's calls.
  void SlowCall() {
    const auto computes = [&](size_t e) {
      return out_.cpu_is_device ? OperatorComputes(e) : model_.cls[e] == EventClass::kKernel;
    };
    size_t longest = SIZE_MAX;
    for (size_t e = 0; e < model_.size(); ++e) {
      if (!computes(e) || !InWindow(model_.start_ns[e])) continue;
      if (longest == SIZE_MAX || model_.duration_ns[e] > model_.duration_ns[longest]) longest = e;
    }
    if (longest == SIZE_MAX) return;
    std::vector<int64_t> durations;
    for (size_t e = 0; e < model_.size(); ++e) {
      if (model_.name[e] == model_.name[longest] && computes(e) && InWindow(model_.start_ns[e])) {
        durations.push_back(model_.duration_ns[e]);
      }
    }
    const int64_t ns = model_.duration_ns[longest];
    const int64_t median = IntegerMedian(durations);
    if (static_cast<int64_t>(durations.size()) < kSlowCallMinCalls || median <= 0 ||
        static_cast<double>(ns) < kSlowCallRatio * static_cast<double>(median) ||
        100.0 * static_cast<double>(ns - median) <
            kSlowCallPct * static_cast<double>(out_.window_ns)) {
      return;
    }
    out_.slow_call = {std::string(model_.String(model_.name[longest])), ns, median,
                      static_cast<int64_t>(durations.size())};
  }

  // A stepless window opened by one long collective (Attribution::Startup).
  void Startup() {
    if (out_.complete_steps > 0 || window_.size() != 1 || longest_collective_ == SIZE_MAX) return;
    const Interval w = window_.front();
    const int64_t begin = model_.start_ns[longest_collective_];
    const double span = static_cast<double>(w.end - w.begin);
    if (100.0 * static_cast<double>(longest_collective_ns_) < kStartupPct * span ||
        100.0 * static_cast<double>(begin - w.begin) > kStartupStartPct * span) {
      return;
    }
    out_.startup = {std::string(model_.String(model_.name[longest_collective_])), begin - w.begin,
                    longest_collective_ns_};
  }

  // One slow call that makes the steps unsteady (Attribution::Outlier).
  void Outlier() {
    const StepBreakdown *longest = nullptr, *shortest = nullptr;
    for (const StepBreakdown& s : a_.steps) {
      if (s.status != "complete") continue;
      if (longest == nullptr || s.duration_ns > longest->duration_ns) longest = &s;
      if (shortest == nullptr || s.duration_ns < shortest->duration_ns) shortest = &s;
    }
    if (longest == nullptr || longest == shortest || shortest->duration_ns <= 0) return;
    const int64_t excess = longest->duration_ns - shortest->duration_ns;
    if (static_cast<double>(longest->duration_ns) <
            kOutlierStepRatio * static_cast<double>(shortest->duration_ns) ||
        100.0 * static_cast<double>(excess) <
            kOutlierWindowPct * static_cast<double>(out_.window_ns)) {
      return;
    }
    // Each name's own time in the two steps (events that start inside them).
    std::map<uint32_t, std::pair<int64_t, int64_t>> own;  // name -> (long, short)
    std::set<uint32_t> loading;                           // names of data-loading spans
    const auto in = [](const StepBreakdown& s, int64_t t) {
      return t >= s.begin_ns && t < s.begin_ns + s.duration_ns;
    };
    for (size_t e = 0; e < model_.size(); ++e) {
      const EventClass cls = model_.cls[e];
      if (cls == EventClass::kStep || cls == EventClass::kDerived || cls == EventClass::kOther ||
          cls == EventClass::kDeviceAnnotation) {
        continue;
      }
      const int64_t t = model_.start_ns[e];
      const bool l = in(*longest, t), s = in(*shortest, t);
      if (!l && !s) continue;
      int64_t ns = model_.duration_ns[e];
      if (cls == EventClass::kDataLoading) loading.insert(model_.name[e]);
      auto& slot = own[model_.name[e]];
      (l ? slot.first : slot.second) += ns;
      // A host event's time is its parent's no more.
      if (!IsDevice(cls) && e < a_.links.parent.size() && a_.links.parent[e] >= 0) {
        const auto p = static_cast<size_t>(a_.links.parent[e]);
        if (model_.cls[p] != EventClass::kStep) {
          auto& up = own[model_.name[p]];
          (l ? up.first : up.second) -= ns;
        }
      }
    }
    uint32_t worst = UINT32_MAX;
    int64_t grew = 0;
    for (const auto& [name, ns] : own) {
      if (ns.first - ns.second > grew) grew = ns.first - ns.second, worst = name;
    }
    if (worst == UINT32_MAX || 2 * grew < excess) return;
    // A step that waited longer for its batch is a loader that does not
    // keep up (workers whose prefetched batches ran out), not noise: the
    // data-loading state says so.
    if (loading.count(worst) > 0) return;
    out_.outlier = {std::string(model_.String(worst)),
                    longest->name,
                    shortest->name,
                    longest->duration_ns,
                    shortest->duration_ns,
                    own[worst].first,
                    own[worst].second};
  }

  // The device's states, the launches behind its tasks (by correlation), and
  // which launches load their kernel's code on first use.
  void DeviceTasks() {
    const CorrelationIndex task_of(model_, [&](size_t e) { return IsDevice(model_.cls[e]); });
    std::vector<int8_t> peer_wait(model_.string_count(), -1);  // by name: IsPeerWait
    for (size_t e = 0; e < model_.size(); ++e) {
      const EventClass cls = model_.cls[e];
      if (!IsDevice(cls)) continue;
      const int64_t begin = model_.start_ns[e], end = begin + model_.duration_ns[e];
      StepState s = StepState::kCompute;
      if (cls == EventClass::kCommunication) {
        s = StepState::kCommunication;
        if (end - begin > longest_collective_ns_)
          longest_collective_ns_ = end - begin, longest_collective_ = e;
      } else if (cls == EventClass::kMemcpy || cls == EventClass::kMemset ||
                 cls == EventClass::kDma) {
        s = StepState::kMemory;
      } else if (cls == EventClass::kDeviceWait) {
        s = StepState::kDeviceWait;
      }
      // A task that waits for a peer's signal: the collective's own (HCCL's
      // plane tasks), or one on a compute stream where the trace records no
      // planes (Level0); either counts where it lies in exposed communication.
      if (s == StepState::kCommunication || s == StepState::kDeviceWait) {
        int8_t& wait = peer_wait[model_.name[e]];
        if (wait < 0) wait = IsPeerWait(model_.String(model_.name[e]));
        if (wait == 1) peer_waits_.Add({begin, end});
      }
      spans_[Index(s)].Add({begin, end});
    }
    // Launch calls: each kind of call by name once, then per event.
    std::vector<RuntimeKind> kind_of_name(model_.string_count(), RuntimeKind::kUnknown);
    runtime_state_.assign(model_.size(), StepState::kLaunch);  // read for kRuntime events only
    // Per kernel name: its earliest launch, and the longest of the others.
    struct Launches {
      uint32_t first = UINT32_MAX;
      uint32_t count = 0;
      int64_t later_ns = 0;
    };
    std::vector<Launches> launches(model_.string_count());
    size_t first_call = SIZE_MAX;
    bool first_call_launches = false;
    std::vector<std::pair<int64_t, int>> captures;  // begin (+1) and end (-1) of captures
    for (size_t e = 0; e < model_.size(); ++e) {
      if (model_.cls[e] != EventClass::kRuntime) continue;
      if (first_call == SIZE_MAX || model_.start_ns[e] < model_.start_ns[first_call]) {
        first_call = e;
      }
      RuntimeKind& kind = kind_of_name[model_.name[e]];
      if (kind == RuntimeKind::kUnknown) kind = RuntimeKindOf(model_.String(model_.name[e]));
      const size_t task = task_of.Find(model_.correlation[e]);
      const bool copy_blocks = kind == RuntimeKind::kAsyncCopy && CopyBlocks(model_, task);
      const StepState s = RuntimeState(kind, copy_blocks);
      runtime_state_[e] = s;
      if (copy_blocks) out_.refined.push_back({static_cast<uint32_t>(e), StepState::kBlocked});
      if (e == first_call) first_call_launches = task != SIZE_MAX;
      // Graph capture: a stream's begin-capture and end-capture calls.
      if (kind_of_name[model_.name[e]] == RuntimeKind::kLaunch) {
        const std::string n = Lower(BaseName(model_.String(model_.name[e])));
        if (Contains(n, "streambegincapture")) {
          captures.push_back({model_.start_ns[e], +1});
          ++out_.captures;
        }
        if (Contains(n, "graphlaunch")) ++out_.graph_launches;
        if (Contains(n, "streamendcapture")) {
          captures.push_back({model_.start_ns[e] + model_.duration_ns[e], -1});
        }
      }
      if (task == SIZE_MAX) continue;
      // Work launched and not started: the device waits on a dependency.
      const int64_t ready = model_.start_ns[e] + model_.duration_ns[e] + kQueuedGraceNs;
      if (model_.start_ns[task] > ready) {
        spans_[Index(StepState::kQueued)].Add({ready, model_.start_ns[task]});
        queued_.push_back({static_cast<uint32_t>(e), static_cast<uint32_t>(task)});
      }
      if (s == StepState::kLaunch && model_.cls[task] == EventClass::kKernel) {
        Launches& l = launches[model_.name[task]];
        ++l.count;
        if (l.first == UINT32_MAX) {
          l.first = static_cast<uint32_t>(e);
        } else if (model_.start_ns[e] < model_.start_ns[l.first]) {
          l.later_ns = std::max(l.later_ns, model_.duration_ns[l.first]);
          l.first = static_cast<uint32_t>(e);
        } else {
          l.later_ns = std::max(l.later_ns, model_.duration_ns[e]);
        }
      }
    }
    // The time some capture is open: from each begin to the end that closes it.
    std::sort(captures.begin(), captures.end());
    UnionBuilder captured;
    int open = 0;
    int64_t since = 0;
    for (const auto& [at, step] : captures) {
      if (step > 0 && open++ == 0) since = at;
      if (step < 0 && open > 0 && --open == 0) captured.Add({since, at});
    }
    const Intervals capture = captured.Take();
    for (const Interval& w : window_) out_.capture_ns += Covered(capture, w.begin, w.end);
    out_.replay_ranges = static_cast<int64_t>(model_.replay_ranges);
    // The trace's first runtime call, when it neither launches work nor waits
    // for it and takes long: the runtime creating its context.
    if (first_call != SIZE_MAX && !first_call_launches &&
        runtime_state_[first_call] == StepState::kLaunch &&
        model_.duration_ns[first_call] >= kSetupFirstCallNs) {
      runtime_state_[first_call] = StepState::kSetup;
      out_.refined.push_back({static_cast<uint32_t>(first_call), StepState::kSetup});
    }
    // A kernel's first launch that takes kFirstUseNs or more while every
    // later one takes under a tenth of it: the kernel's code loaded on use.
    for (const Launches& l : launches) {
      if (l.count < 2) continue;
      const int64_t first = model_.duration_ns[l.first];
      if (first >= kFirstUseNs && l.later_ns <= (first - 1) / 10) {  // later * 10 < first
        runtime_state_[l.first] = StepState::kCompilation;
        out_.refined.push_back({l.first, StepState::kCompilation});
      }
    }
    std::sort(out_.refined.begin(), out_.refined.end());
  }

  StepState HostState(size_t e) const {
    return model_.cls[e] == EventClass::kRuntime
               ? runtime_state_[e]
               : HostEventState(model_, e, out_.cpu_is_device, scopes_are_work_);
  }

  // HostState, judged once per name and class for the host's own events (a
  // runtime call's state is its own): the sweeps and the operator count ask
  // for millions of events of a few thousand names.
  StepState NamedState(size_t e) {
    if (model_.cls[e] == EventClass::kRuntime) return runtime_state_[e];
    if (name_class_.empty()) {
      name_class_.assign(model_.string_count(), 0);
      name_state_.assign(model_.string_count(), StepState::kUntraced);
    }
    const uint32_t name = model_.name[e];
    const auto mark = static_cast<uint8_t>(static_cast<uint8_t>(model_.cls[e]) + 1);
    if (name_class_[name] != mark) {
      name_class_[name] = mark;
      name_state_[name] = HostState(e);
    }
    return name_state_[name];
  }

  // Each host thread's innermost event over time: emit(begin, end, state,
  // event), the event the state is named after (a data-loading or
  // compilation region's own event inside one).
  // Adjacent pieces in the same state (and, with by_name, named after the
  // same event name) are emitted as one.
  template <typename Emit, typename OnTrack>
  void SweepHost(const TrackGroups& host, bool by_name, Emit&& emit_joined, OnTrack&& on_track) {
    struct Open {
      int64_t end;
      StepState state;
      uint32_t named;
    };
    std::vector<Open> stack;
    Open pending{0, StepState::kUntraced, UINT32_MAX};
    int64_t pending_begin = 0;
    const auto flush = [&] {
      if (pending.named != UINT32_MAX)
        emit_joined(pending_begin, pending.end, pending.state, pending.named);
      pending.named = UINT32_MAX;
    };
    const auto emit = [&](int64_t begin, int64_t end, StepState state, uint32_t named) {
      if (pending.named != UINT32_MAX && pending.end == begin && pending.state == state &&
          (!by_name || model_.name[pending.named] == model_.name[named])) {
        pending.end = end;
        return;
      }
      flush();
      pending = {end, state, named};
      pending_begin = begin;
    };
    for (size_t t = 0; t + 1 < host.begin.size(); ++t) {
      flush();
      on_track();
      stack.clear();
      int64_t at = INT64_MIN;
      const auto close_until = [&](int64_t limit) {
        while (!stack.empty() && stack.back().end <= limit) {
          const Open top = stack.back();
          stack.pop_back();
          if (top.end > at) emit(at, top.end, top.state, top.named);
          at = std::max(at, top.end);
        }
      };
      for (size_t k = host.begin[t]; k < host.begin[t + 1]; ++k) {
        const uint32_t e = host.events[k];
        const int64_t begin = model_.start_ns[e];
        close_until(begin);
        if (!stack.empty() && begin > at) emit(at, begin, stack.back().state, stack.back().named);
        at = std::max(at, begin);
        int64_t end = begin + model_.duration_ns[e];
        if (!stack.empty()) end = std::min(end, stack.back().end);  // nested in its parent
        StepState s = NamedState(e);
        uint32_t named = e;
        if (!stack.empty() &&
            (stack.back().state == StepState::kDataLoading ||
             stack.back().state == StepState::kCompilation ||
             stack.back().state == StepState::kBlocked) &&
            s != StepState::kDataLoading) {
          s = stack.back().state;  // inside a region: the region's state
          named = stack.back().named;
        }
        stack.push_back({end, s, named});
      }
      close_until(INT64_MAX);
    }
    flush();
  }

  // The largest parts of each state: each piece's time in the state's
  // exclusive time, by name (kernel family, copy kind, event name). Where
  // pieces overlap (two threads in the same state, two streams computing),
  // the names' times are scaled to add up to the state's time: each keeps
  // its proportion.
  void Contributors(const TrackGroups& host) {
    Int64Map<int64_t> by_name;  // state << 32 | name -> ns
    std::array<int64_t, kStepStates> counted{};
    {
      std::vector<CoverCursor> cover(exclusive_.begin(), exclusive_.end());
      SweepHost(
          host, true,
          [&](int64_t begin, int64_t end, StepState s, uint32_t e) {
            if (out_.ns[Index(s)] == 0) return;
            const int64_t ns = cover[Index(s)].Covered(begin, end);
            if (ns == 0) return;
            by_name[static_cast<int64_t>(Index(s)) << 32 | model_.name[e]] += ns;
            counted[Index(s)] += ns;
          },
          [] {});
    }
    // Device states: a small set of labels each.
    std::vector<std::string> labels;
    std::vector<std::string> family_of(model_.string_count());
    const auto label = [&](const std::string& name) -> int64_t {
      const auto it = std::find(labels.begin(), labels.end(), name);
      if (it != labels.end()) return it - labels.begin();
      labels.push_back(name);
      return static_cast<int64_t>(labels.size() - 1);
    };
    const auto family = [&](size_t e) -> const std::string& {
      std::string& f = family_of[model_.name[e]];
      if (f.empty()) f = KernelFamily(model_.String(model_.name[e]));
      return f;
    };
    Int64Map<int64_t> by_label;  // state << 32 | label -> ns
    {
      std::vector<CoverCursor> cover(exclusive_.begin(), exclusive_.end());
      const auto add = [&](StepState s, int64_t l, int64_t begin, int64_t end) {
        if (out_.ns[Index(s)] == 0 || end <= begin) return;
        const int64_t ns = cover[Index(s)].Covered(begin, end);
        if (ns == 0) return;
        by_label[static_cast<int64_t>(Index(s)) << 32 | l] += ns;
        counted[Index(s)] += ns;
      };
      for (size_t e = 0; e < model_.size(); ++e) {
        const EventClass cls = model_.cls[e];
        if (!IsDevice(cls)) continue;
        const int64_t begin = model_.start_ns[e], end = begin + model_.duration_ns[e];
        if (cls == EventClass::kKernel) {
          add(StepState::kCompute, label(family(e)), begin, end);
        } else if (cls == EventClass::kCommunication) {
          add(StepState::kCommunication,
              label(std::string(BaseName(model_.String(model_.name[e])))), begin, end);
        } else if (cls == EventClass::kMemcpy) {
          add(StepState::kMemory, label(std::string("copy ") + Name(model_.Copy(e).direction)),
              begin, end);
        } else if (cls == EventClass::kMemset) {
          add(StepState::kMemory, label("memset"), begin, end);
        } else if (cls == EventClass::kDma) {
          add(StepState::kMemory, label("DMA"), begin, end);
        } else if (cls == EventClass::kDeviceWait) {
          add(StepState::kDeviceWait, label(std::string(model_.String(model_.name[e]))), begin,
              end);
        }
      }
      for (const QueuedSpan& q : queued_) {
        const size_t launch = q.launch, task = q.task;
        add(StepState::kQueued, label(family(task)),
            model_.start_ns[launch] + model_.duration_ns[launch] + kQueuedGraceNs,
            model_.start_ns[task]);
      }
    }
    const auto scaled = [&](int64_t key, int64_t ns) {
      // (key: the state above the name's id; the bound says so to the compiler)
      const size_t s = std::min<uint64_t>(static_cast<uint64_t>(key) >> 32, kStepStates - 1);
      return std::pair<size_t, int64_t>(
          s, counted[s] > 0
                 ? static_cast<int64_t>(
                       static_cast<double>(ns) * out_.ns[s] / static_cast<double>(counted[s]) + 0.5)
                 : 0);
    };
    by_name.ForEach([&](int64_t key, int64_t ns) {
      const auto [s, part] = scaled(key, ns);
      if (part > 0)
        out_.top[s].emplace_back(std::string(model_.String(static_cast<uint32_t>(key))), part);
    });
    by_label.ForEach([&](int64_t key, int64_t ns) {
      const auto [s, part] = scaled(key, ns);
      if (part > 0) out_.top[s].emplace_back(labels[static_cast<uint32_t>(key)], part);
    });
    for (auto& top : out_.top) KeepTop(top);
    Peers();
  }

  // Who the waiting was with: each point-to-point task's other rank.
  void Peers() {
    std::map<int32_t, int64_t> tasks;  // rank -> tasks it is one end of
    for (const TraceModel::CollectiveArgs& c : model_.collective_args) {
      if (c.src_rank >= 0 && c.dst_rank >= 0) ++tasks[c.src_rank], ++tasks[c.dst_rank];
    }
    if (tasks.empty()) return;
    out_.own_rank = std::max_element(tasks.begin(), tasks.end(), [](const auto& x, const auto& y) {
                      return x.second < y.second;
                    })->first;
    CoverCursor comm(exclusive_[Index(StepState::kCommunication)]);
    CoverCursor waits(exclusive_[Index(StepState::kDeviceWait)]);
    std::map<int32_t, int64_t> by_peer;
    for (const TraceModel::CollectiveArgs& c : model_.collective_args) {
      const int32_t peer = c.src_rank == out_.own_rank   ? c.dst_rank
                           : c.dst_rank == out_.own_rank ? c.src_rank
                                                         : -1;
      if (peer < 0 || peer == out_.own_rank || c.event >= model_.size()) continue;
      const int64_t begin = model_.start_ns[c.event], end = begin + model_.duration_ns[c.event];
      if (end <= begin) continue;
      by_peer[peer] += comm.Covered(begin, end) + waits.Covered(begin, end);
    }
    for (const auto& [peer, ns] : by_peer) {
      if (ns > 0) out_.peers.emplace_back(peer, ns);
    }
    std::stable_sort(out_.peers.begin(), out_.peers.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
  }

  struct QueuedSpan {
    uint32_t launch, task;  // a launch call, and the work it launched that waited
  };

  // Attribution::longest_queued.
  void LongestQueued() {
    const QueuedSpan* best = nullptr;
    int64_t best_ns = 0;
    const auto ready = [&](const QueuedSpan& q) {
      return model_.start_ns[q.launch] + model_.duration_ns[q.launch] + kQueuedGraceNs;
    };
    for (const QueuedSpan& q : queued_) {  // its wait inside the window
      const int64_t ns = Covered(window_, ready(q), model_.start_ns[q.task]);
      if (ns > best_ns) best = &q, best_ns = ns;
    }
    if (best == nullptr) return;
    Attribution::QueuedWait& w = out_.longest_queued;
    w.ns = best_ns;
    w.task = std::string(model_.String(model_.name[best->task]));
    w.launch = std::string(model_.String(model_.name[best->launch]));
    const int64_t from = ready(*best), until = model_.start_ns[best->task];
    const uint32_t thread = model_.track[best->launch];
    const int64_t launched = model_.start_ns[best->launch];
    std::vector<int8_t> waits(model_.string_count(), -1);  // by name: a stream-wait call
    int64_t previous_launch = INT64_MIN, wait_at = INT64_MIN;
    size_t wait = SIZE_MAX, blocked = SIZE_MAX;
    for (size_t e = 0; e < model_.size(); ++e) {
      if (model_.cls[e] != EventClass::kRuntime) continue;
      const int64_t b = model_.start_ns[e];
      if (model_.track[e] == thread && b <= launched && e != best->launch) {
        int8_t& is_wait = waits[model_.name[e]];
        if (is_wait < 0) {
          is_wait = IsStreamWaitEvent(model_.String(model_.name[e]));
        }
        if (is_wait == 1 && b > wait_at) wait_at = b, wait = e;
        if (runtime_state_[e] == StepState::kLaunch && is_wait == 0 && b > previous_launch) {
          previous_launch = b;
        }
      }
      if (runtime_state_[e] == StepState::kBlocked) {
        const int64_t overlap = std::min(b + model_.duration_ns[e], until) - std::max(b, from);
        if (overlap > w.blocked_ns) w.blocked_ns = overlap, blocked = e;
      }
    }
    // Only a wait issued since the thread's previous launch orders this work.
    if (wait != SIZE_MAX && wait_at > previous_launch) {
      w.stream_wait = std::string(model_.String(model_.name[wait]));
    }
    // A host call that blocked for a tenth of the wait or more: a shorter one
    // says nothing of it.
    if (blocked != SIZE_MAX && 10 * w.blocked_ns >= w.ns) {
      w.blocked = std::string(model_.String(model_.name[blocked]));
    } else {
      w.blocked_ns = 0;
    }
  }

  const TraceModel& model_;
  const Analysis& a_;
  Attribution out_;
  bool scopes_are_work_ = false;
  // NamedState's judgements: each name's class + 1 (0: not judged) and state.
  std::vector<uint8_t> name_class_;
  std::vector<StepState> name_state_;
  Intervals window_;
  std::array<UnionBuilder, kStepStates> spans_;
  std::array<Intervals, kStepStates> exclusive_;
  std::vector<StepState> runtime_state_;
  size_t longest_collective_ = SIZE_MAX;  // the longest collective task, for Startup
  int64_t longest_collective_ns_ = 0;
  UnionBuilder peer_waits_;  // collective tasks waiting on a peer (IsPeerWait)
  std::vector<QueuedSpan> queued_;
};

std::string TopText(const std::vector<std::pair<std::string, int64_t>>& top) {
  std::string s;
  for (const auto& [name, ns] : top) {
    if (!s.empty()) s += ", ";
    s += fmt::format("{} {:.3f} ms", name, ns / 1e6);
  }
  return s;
}

std::string WindowText(const Attribution& at) {
  return at.complete_steps > 0
             ? fmt::format("the {} complete {}step{} ({:.3f} ms)", at.complete_steps,
                           at.steps_inferred ? "inferred " : "", at.complete_steps == 1 ? "" : "s",
                           at.window_ns / 1e6)
             : fmt::format("the trace's span ({:.3f} ms; it has no complete steps{})",
                           at.window_ns / 1e6,
                           at.profiler_ns > 0
                               ? fmt::format("; the profiler's own start and stop, {:.3f} ms, "
                                             "left out",
                                             at.profiler_ns / 1e6)
                               : std::string());
}

void Tables(const Analysis& a, const TableContext& context,
            std::vector<core::ResultTable>& tables) {
  const Attribution* at = a.results.Get<Attribution>(kAttributionPass);
  if (at == nullptr || at->window_ns <= 0) return;
  core::ResultTable table;
  table.section = std::string(kAttributionPass);
  table.title = "Where the steps' time went";
  table.columns = {
      {"trace", "Trace", 0, false},
      {"state", "State"},
      {"what", "What"},
      {.key = "time_ns", .header = "Time", .unit = core::Unit::kTime},
      {.key = "share_pct", .header = "% of window", .precision = 1, .unit = core::Unit::kPercent},
      {"top", "Largest parts"}};
  for (size_t s = 0; s < kStepStates; ++s) {
    if (at->ns[s] == 0) continue;
    table.AddRow({std::string(context.path), std::string(kStateText[s].key),
                  std::string(LabelIn(*at, static_cast<StepState>(s))), at->ns[s],
                  Pct(at->ns[s], at->window_ns), TopText(at->top[s])});
  }
  table.notes.push_back(
      "Each instant of " + WindowText(*at) +
      " counted once: what the device does first (compute, then communication not overlapped "
      "by compute, memory traffic, a device-side wait, work launched but not started), and "
      "where it idles, what the host does (data loading, compilation and warm-up, one-off "
      "set-up, launching, framework and Python, then blocked in a synchronisation); the rows "
      "add up to the window." +
      (at->cpu_is_device ? " The trace has no device work: its operators on the CPU threads "
                           "are the compute."
                         : ""));
  if (at->communication_overlapped_ns > 0) {
    table.notes.push_back(fmt::format(
        "Communication overlapped by compute, not in the rows above: {:.3f} ms ({:.1f}% of "
        "the window).",
        at->communication_overlapped_ns / 1e6,
        Pct(at->communication_overlapped_ns, at->window_ns)));
  }
  tables.push_back(std::move(table));
}

// The step-time diagnosis: the two field documents' order of questions,
// asked of the attribution. Is the window mostly untraced (the trace cannot
// say)? One-off set-up? Warm-up? Else the largest of: the device computing,
// the device waiting (exposed communication, a peer, queued work), memory
// traffic, data loading, host overhead (launch, framework, Python), the host
// blocked while the device idles.
struct Verdict {
  std::string_view id;
  std::vector<StepState> states;  // what it adds up
  int64_t ns = 0;
};

std::vector<Verdict> Verdicts(const Attribution& at) {
  using S = StepState;
  std::vector<Verdict> v = {
      {"step_untraced", {S::kUntraced, S::kAnnotationOnly}},
      {"step_setup", {S::kSetup}},
      {"step_compilation", {S::kCompilation}},
      {"step_compute", {S::kCompute}},
      {"step_device_waiting", {S::kCommunication, S::kDeviceWait, S::kQueued}},
      {"step_memory", {S::kMemory}},
      {"step_data_loading", {S::kDataLoading}},
      {"step_host_overhead", {S::kLaunch, S::kFramework}},
      {"step_host_blocked", {S::kBlocked}},
  };
  for (Verdict& x : v) {
    for (const S s : x.states) x.ns += at.Of(s);
  }
  return v;
}

// The verdict the diagnosis names: a counter profiler's replay wherever its
// ranges are recorded, else a graph capture from kCapturePct, else
// untraced from kUntracedPct, set-up from kSetupPct (set-up and warm-up
// together from kSetupPct too, each kOneOffPartPct or more, named after the
// larger), warm-up from kWarmupPct, in that order; else the largest (one-off
// work only where it exceeds the steady state's largest by a third).
constexpr double kCapturePct = 50, kUntracedPct = 50, kSetupPct = 50, kWarmupPct = 30;
// The share of the window each of set-up and warm-up must take to be judged
// together (a few allocations beside a long warm-up are the warm-up's).
constexpr double kOneOffPartPct = 10;
// A critical path with this share of its window unexplained bounds no saving.
constexpr double kPathBlindPct = 25;

// What the steps' critical path bounds a saving of `states` to (INT64_MAX:
// nothing): removing them shortens no step by more than their time on its
// critical path (every other chain was no longer), plus the path's time
// that nothing explains (untraced, under an annotation only, or the device
// queued behind a dependency the trace does not record), which could be
// them. A path that cannot explain kPathBlindPct of its window or
// more bounds nothing: the host record has holes (parents whose children
// were not recorded), and its explained parts are not to be trusted either.
int64_t PathBound(int64_t window_ns, const CriticalPath* path,
                  const std::vector<StepState>& states) {
  if (path == nullptr || path->window_ns != window_ns || states.empty()) return INT64_MAX;
  // Unexplained: nothing recorded, or the device waiting on a dependency the
  // trace does not record (queued: what it waited for could be anything,
  // a host wait included).
  const auto unexplained = [](StepState s) {
    return s == StepState::kUntraced || s == StepState::kAnnotationOnly || s == StepState::kQueued;
  };
  int64_t blind = 0;
  for (size_t s = 0; s < kStepStates; ++s) {
    if (unexplained(static_cast<StepState>(s))) blind += path->by_state[s];
  }
  if (Pct(blind, path->window_ns) >= kPathBlindPct) return INT64_MAX;
  int64_t on_path = blind;
  for (const StepState s : states) {
    if (!unexplained(s)) on_path += path->by_state[Index(s)];
  }
  return on_path;
}

// A trace without complete steps that captures two graphs or more and
// replays each at most once (a warm-up replay): it records the capture
// phase (and what prepares it: warm-up, compilation), not a run.
bool CaptureRun(const Attribution& at) {
  return at.complete_steps == 0 && at.captures >= 2 && at.graph_launches <= at.captures &&
         at.capture_ns > 0;
}

// `path`: the steps' critical path, or null. The largest state is the one
// whose time, bounded by the critical path (PathBound), is largest: where
// two states are close, the one the steps waited on decides.
Verdict Choose(const Attribution& at, const CriticalPath* path) {
  std::vector<Verdict> v = Verdicts(at);
  // On a CPU trace the short gaps between a thread's operators are their
  // per-call cost (Attribution::Operators), which the compute verdict counts:
  // not time nothing explains.
  if (at.cpu_is_device) v[0].ns = std::max<int64_t>(0, v[0].ns - at.operators.gap_ns);
  const double w = static_cast<double>(at.window_ns);
  if (at.replay_ranges > 0) return {"step_counter_replay", {}, at.window_ns};
  if (100.0 * at.capture_ns / w >= kCapturePct || CaptureRun(at)) {
    return {"step_capture", {}, at.capture_ns};
  }
  if (100.0 * v[0].ns / w >= kUntracedPct) return v[0];
  if (!at.startup.name.empty()) return {"step_startup", {}, at.startup.ns};
  if (100.0 * v[1].ns / w >= kSetupPct) return v[1];
  // Set-up and warm-up together, each a tenth of the window or more: the
  // window is mostly one-off work (a run profiled from its start), named
  // after the larger.
  if (100.0 * std::min(v[1].ns, v[2].ns) / w >= kOneOffPartPct &&
      100.0 * (v[1].ns + v[2].ns) / w >= kSetupPct) {
    Verdict both = v[1].ns >= v[2].ns ? v[1] : v[2];
    both.states = {StepState::kSetup, StepState::kCompilation};
    both.ns = v[1].ns + v[2].ns;
    return both;
  }
  if (100.0 * v[2].ns / w >= kWarmupPct) return v[2];
  if (!at.outlier.name.empty()) {
    return {"step_outlier", {}, at.outlier.long_step_ns - at.outlier.short_step_ns};
  }
  const auto bounded = [&](const Verdict& x) {
    return std::min(x.ns, PathBound(at.window_ns, path, x.states));
  };
  const auto largest =
      std::max_element(v.begin(), v.end(),
                       [&](const Verdict& x, const Verdict& y) { return bounded(x) < bounded(y); });
  // One-off work under its thresholds (set-up, warm-up) leads only where it
  // clearly exceeds the steady state's largest: in a near tie the steady
  // state's lever, paid every iteration, is the one to name (a whole
  // program's trace: its allocations, beside a launch-bound loop).
  const bool one_off = largest == v.begin() + 1 || largest == v.begin() + 2;
  if (one_off) {
    const auto steady = std::max_element(
        v.begin() + 3, v.end(),
        [&](const Verdict& x, const Verdict& y) { return bounded(x) < bounded(y); });
    if (steady != v.end() && 4 * bounded(*steady) >= 3 * bounded(*largest)) return *steady;
  }
  return *largest;
}

const CriticalPath* PathOf(const Analysis& analysis) {
  return analysis.results.Get<CriticalPath>(kCriticalPathPass);
}

// A state's largest parts, "aten::addmm 11.064 ms, ...". Given the first
// calls found in the window, an operator with some says how much they take
// (a part that is mostly one-off first-use work is not a per-step cost).
std::string PartsText(const Attribution& at, StepState s, size_t n = 3,
                      const FirstCalls* first = nullptr) {
  std::string text;
  const auto& top = at.top[Index(s)];
  for (size_t i = 0; i < top.size() && i < n; ++i) {
    text +=
        fmt::format("{}{} {:.3f} ms", text.empty() ? "" : ", ", top[i].first, top[i].second / 1e6);
    if (first == nullptr) continue;
    int64_t calls = 0, ns = 0;
    for (const FirstCall& f : first->calls) {
      if (f.name == top[i].first) ++calls, ns += f.first_ns;
    }
    if (calls > 0) {
      text += fmt::format(" (its {}first call{} {} {:.3f} ms, far above the later ones)",
                          calls == 1 ? "" : std::to_string(calls) + " ", calls == 1 ? "" : "s",
                          calls == 1 ? "takes" : "take", ns / 1e6);
    }
  }
  return text;
}

// What the CPU samples in the untraced time show, for a finding's evidence:
// "; the host's CPU samples in it (812 of the window's 913): std::foo 40.1%,
// ...; modules: app 95.0%, libc.so.6 5.0%", or "" where none fell there.
std::string SampledText(const Attribution& at) {
  // The launching thread's OS calls there: "; the thread that launches the
  // device's work spent 612.3 ms of it in OS calls: pthread_join 595.5 ms".
  std::string os;
  if (at.untraced_os_ns > 0) {
    std::string calls;
    for (const auto& [name, ns] : at.untraced_os_calls) {
      calls += fmt::format("{}{} {:.3f} ms", calls.empty() ? "" : ", ", name, ns / 1e6);
    }
    os = fmt::format(
        "; the thread that launches the device's work spent {:.3f} ms of it in OS calls: {}",
        at.untraced_os_ns / 1e6, calls);
  }
  if (at.untraced_samples <= 0) return os;
  const auto list = [&](const std::vector<std::pair<std::string, int64_t>>& top) {
    std::string out;
    for (const auto& [name, n] : top) {
      out +=
          fmt::format("{}'{}' {:.1f}%", out.empty() ? "" : ", ", name, Pct(n, at.untraced_samples));
    }
    return out;
  };
  return fmt::format("; the host's CPU samples in it ({} of the window's {}): {}; modules: {}{}",
                     at.untraced_samples, at.window_samples, list(at.untraced_functions),
                     list(at.untraced_modules), os);
}

// What the host copies' memory says about pinning (transfers pass): pin
// where many are pageable, say so where they are pinned already, nothing
// where the trace does not record it.
std::string PinningAdvice(const Analysis& a) {
  const auto* found = a.results.Get<std::vector<TransferStats>>(kTransfersPass);
  if (found == nullptr) return {};
  int64_t pinned = 0, pageable = 0, managed = 0, count = 0;
  for (const TransferStats& t : *found) {
    if (t.direction == "HtoD" || t.direction == "DtoH") {
      pinned += t.pinned, pageable += t.pageable, managed += t.managed, count += t.count;
    }
  }
  if (MostlyMigrations(managed, count)) {
    return fmt::format("; {} of {} host copies are {}", managed, count, kPrefetchAdvice);
  }
  if (PinningHelps(pinned, pageable)) {  // as the transfers rule judges it
    return fmt::format(", from pinned memory: {} of {} host copies are from or to pageable memory",
                       pageable, pinned + pageable);
  }
  if (pinned > 0) {
    return fmt::format("; {} of {} host copies already use pinned memory", pinned,
                       pinned + pageable);
  }
  return {};
}

void DiagnosisRule(const RuleContext& c, std::vector<Finding>& out) {
  const Attribution* at = c.analysis.results.Get<Attribution>(kAttributionPass);
  if (at == nullptr || at->window_ns <= 0) return;
  const CriticalPath* path = PathOf(c.analysis);
  const Verdict v = Choose(*at, path);
  if (v.ns <= 0) return;
  const double pct = Pct(v.ns, at->window_ns);
  const std::string window = WindowText(*at);
  const int64_t steps = std::max<int64_t>(at->complete_steps, 1);
  // The account behind it: every state of the verdict with its parts.
  std::string evidence;
  const auto* first = c.analysis.results.Get<FirstCalls>(kFirstCallsPass);
  for (const StepState s : v.states) {
    if (at->Of(s) == 0) continue;
    evidence += fmt::format("{}{} {:.3f} ms ({:.1f}%){}", evidence.empty() ? "" : "; ",
                            LabelIn(*at, s), at->Of(s) / 1e6, Pct(at->Of(s), at->window_ns),
                            at->top[Index(s)].empty() ? "" : ": " + PartsText(*at, s, 3, first));
  }
  evidence += fmt::format(" (of {}; the attribution table has every state)", window);
  // The same states on the steps' critical path (what decided when each step
  // ended): shrinking them saves at most that much of the steps' time.
  const int64_t path_bound = PathBound(at->window_ns, path, v.states);
  if (path != nullptr && path->window_ns == at->window_ns && !v.states.empty()) {
    int64_t on_path = 0;
    for (const StepState s : v.states) on_path += path->by_state[Index(s)];
    if (2 * on_path >= v.ns || path->parts.empty()) {
      evidence += fmt::format(
          "; on the critical path (what decided when each step ended) these states take {:.3f} "
          "ms ({:.1f}%)",
          on_path / 1e6, Pct(on_path, path->window_ns));
    } else {
      // The path runs elsewhere: say where, so the two accounts do not read
      // as a contradiction (an incomplete host record, or the host setting
      // the pace while the device waits).
      const CriticalPath::Part& top = path->parts.front();
      evidence += fmt::format(
          "; the critical path (what decided when each step ended) runs elsewhere: these states "
          "take {:.3f} ms ({:.1f}%) of it, its largest part {} '{}' {:.3f} ms ({:.1f}%, {})",
          on_path / 1e6, Pct(on_path, path->window_ns), Key(top.edge), top.name, top.ns / 1e6,
          Pct(top.ns, path->window_ns), LabelIn(*at, top.state));
    }
  }
  // The projection: the window with `wanted` saved, or as much of it as the
  // critical path allows (it then says so).
  const auto after = [&](int64_t wanted) {
    const int64_t saved = std::min(wanted, path_bound);
    return fmt::format(
        "the window would take {:.3f} ms instead of {:.3f} ms ({:.1f}%{}){}",
        (at->window_ns - saved) / 1e6, at->window_ns / 1e6, -Pct(saved, at->window_ns),
        at->complete_steps > 1 ? fmt::format(", {:.3f} ms less per step", saved / 1e6 / steps)
                               : std::string(),
        // Said where the path takes a twentieth of it or more away.
        20 * (wanted - saved) >= wanted
            ? fmt::format(
                  ", not {:.3f} ms less: the critical path holds only {:.3f} ms of these states "
                  "and of time it cannot explain, and a step ends no sooner than its critical "
                  "path allows",
                  wanted / 1e6, path_bound / 1e6)
            : std::string());
  };
  Finding f{std::string(v.id),
            pct >= 50   ? Severity::kCritical
            : pct >= 20 ? Severity::kWarning
                        : Severity::kInfo,
            "", evidence, ""};
  const std::string share = fmt::format("{:.1f}% of {}", pct, window);
  // On a trace without device work the CPU's operators are the compute.
  const char* idles = at->cpu_is_device ? "No operator computes" : "The device idles";
  // The verdicts whose saving is their whole time: what they are ({0} the
  // share, {1} what idles, {2} the idle device or CPU) and what to do.
  struct Plain {
    std::string_view id;
    const char* title;
    const char* action;
  };
  static constexpr Plain kPlain[] = {
      {"step_compilation", "Warm-up fills {0}: compilation and first-use code loading",
       "Exclude warm-up from what you measure (profile after it), or pay it once: cache "
       "compiled code (torch.compile's cache, lazy-loading settings), warm kernels up before "
       "timing. Without it"},
      {"step_memory", "Memory copies fill {0}: the step is transfer-bound",
       "Move less between host and device: keep the data on the device, copy it once, "
       "overlap copies with compute (asynchronous copies on a side stream{}). At most"},
      {"step_data_loading", "{1} while the host loads data: {0}", "{} At most"},
      {"step_host_overhead",
       "{1} while the host runs framework code and launches work: {0} (host-bound)",
       "Give the device more work per host operation: a larger batch, fewer and larger kernels "
       "(torch.compile, fused operators), CUDA or HIP graphs (graph mode on Ascend) for "
       "launch-heavy steps, less "
       "Python between launches. At most"},
      {"step_host_blocked", "The host waits with {2}: {0}",
       "The device is not what the host waits for here: look at what the blocking calls wait "
       "on (a copy from pageable memory, a synchronisation after the device has finished, a "
       "slow runtime call) and remove or defer them. At most"},
  };
  const auto plain = std::find_if(std::begin(kPlain), std::end(kPlain),
                                  [&](const Plain& p) { return p.id == v.id; });
  const bool runtime_wait =
      v.id == "step_host_overhead" && 2 * at->overhead_while_blocked_ns >= v.ns;
  if (plain != std::end(kPlain) && !runtime_wait) {
    f.title = fmt::format(fmt::runtime(plain->title), share, idles,
                          at->cpu_is_device ? "no operator computing" : "the device idle");
    if (v.id == "step_compilation" && v.states.size() > 1) {
      f.title = fmt::format(
          "Warm-up and one-off set-up fill {}: compilation, first-use code loading and set-up; "
          "this is start-up, not steady state",
          share);
    }
    // Outside PyTorch, the same levers in the runtime's terms.
    const char* action =
        v.id == "step_host_overhead" && !c.analysis.pytorch
            ? "Give the device more work per host operation: a larger batch, "
              "fewer and larger kernels (fused operators, larger jit-compiled "
              "functions), CUDA or HIP Graphs (graph mode on Ascend) for launch-heavy "
              "loops, less host code between launches. At most"
            : plain->action;
    f.action =
        fmt::format(fmt::runtime(action), v.id == "step_memory"         ? PinningAdvice(c.analysis)
                                          : v.id == "step_data_loading" ? DataLoadingAdvice(at)
                                                                        : std::string()) +
        " " + after(v.ns) + ".";
    f.saving_ns = std::min(v.ns, path_bound);
  } else if (v.id == "step_counter_replay") {
    f.severity = Severity::kWarning;
    f.title = fmt::format(
        "A counter capture, not a run: {} range{} of a hardware-counter profiler that replays "
        "each kernel to read its counters (CUPTI's range profiler); the trace's times are the "
        "profiler's replays, so it supports no step-time diagnosis",
        at->replay_ranges, at->replay_ranges == 1 ? "" : "s");
    f.evidence = fmt::format(
        "{} cuda_profiler_range event{} in {} (the kernels profiled, each with its counters "
        "as arguments; their spans are the profiler's, not the kernels' own times)",
        at->replay_ranges, at->replay_ranges == 1 ? "" : "s", window);
    f.action =
        "Read the kernels' counters from the ranges' arguments (or profile them with Nsight "
        "Compute); for where the time goes, record the run again without the counter profiler "
        "(torch.profiler without profiler_metrics in its experimental_config), whose kernels "
        "run once and are timed as they ran.";
  } else if (v.id == "step_capture") {
    f.severity = Severity::kWarning;
    f.evidence = fmt::format(
        "inside stream capture (begin-capture to end-capture calls): {:.3f} ms "
        "of {}; device work that ran: {:.3f} ms",
        v.ns / 1e6, window, at->Of(StepState::kCompute) / 1e6);
    f.title = pct >= kCapturePct
                  ? fmt::format(
                        "A graph capture fills {}: work launched while capturing is recorded "
                        "into the graph, not run; this trace is not a run to diagnose",
                        share)
                  : fmt::format(
                        "A graph-capture run: {} stream captures, {} inside them, the rest "
                        "preparing them (warm-up, compilation); this trace is start-up, not a run "
                        "to diagnose",
                        at->captures, share);
    f.evidence +=
        fmt::format("; {} begin-capture calls, {} graph launches{}", at->captures,
                    at->graph_launches, at->complete_steps == 0 ? ", no complete steps" : "");
    f.action =
        "Profile the replay (the steps that launch the captured graph), not the capture; the "
        "capture itself is one-off set-up, paid once per graph and batch size.";
  } else if (v.id == "step_startup") {
    const Attribution::Startup& o = at->startup;
    f.severity = Severity::kWarning;
    f.title = fmt::format(
        "One-off start-up fills {}: the collective '{}' runs {:.3f} ms from +{:.3f} ms, before "
        "any steady work; this window is not steady state",
        share, o.name, o.ns / 1e6, o.offset_ns / 1e6);
    f.evidence = fmt::format(
        "'{}' lasts {:.3f} ms ({:.1f}% of {}) and starts {:.3f} ms after the window's start; "
        "the trace has no steps to judge instead (the attribution table has the whole window)",
        o.name, o.ns / 1e6, pct, window, o.offset_ns / 1e6);
    f.action =
        "Judge the steps after it: profile the steady iterations (a schedule that skips "
        "start-up, step markers in the trace), where communication and compute can be read as "
        "they recur. A start-up collective this long is one rank waiting for the others to "
        "start (or a one-off parameter broadcast): compare the ranks' start times, not the "
        "collective's speed.";
  } else if (v.id == "step_outlier") {
    const Attribution::Outlier& o = at->outlier;
    f.severity = Severity::kWarning;
    f.title = fmt::format(
        "The steps are not steady: {} takes {:.1f}x {} ({:.3f} vs {:.3f} ms), most of it in "
        "'{}' ({:.3f} ms of its own time there, {:.3f} ms in {}): one slow call, not the "
        "model's cost; these steps support no steady-state diagnosis",
        o.long_step, static_cast<double>(o.long_step_ns) / static_cast<double>(o.short_step_ns),
        o.short_step, o.long_step_ns / 1e6, o.short_step_ns / 1e6, o.name, o.long_ns / 1e6,
        o.short_ns / 1e6, o.short_step);
    f.evidence =
        fmt::format("{} takes {:.3f} ms more than {} ({:.1f}% of {}); '{}' grew by {:.3f} ms of it",
                    o.long_step, (o.long_step_ns - o.short_step_ns) / 1e6, o.short_step,
                    Pct(o.long_step_ns - o.short_step_ns, at->window_ns), window, o.name,
                    (o.long_ns - o.short_ns) / 1e6);
    f.action =
        "Record more steps after warm-up (torch.profiler's schedule: wait, warmup, then ten or "
        "more active steps) and judge the steady ones; if the slow call recurs, look at what "
        "runs beside it (preemption, page faults, a thread pool waking up, a data-dependent "
        "path).";
  } else if (runtime_wait) {
    // The host work that leaves the device idle runs while a thread waits in
    // a synchronisation: the wait is on the runtime's own work (completion
    // callbacks, buffer events), not on the program issuing work.
    f.title = fmt::format(
        "{} while a thread waits in a synchronisation and the runtime's own threads work: {} "
        "(runtime latency, not the program's dispatch)",
        idles, share);
    f.evidence +=
        fmt::format(" {:.3f} ms of it while a host thread is blocked in a synchronisation.",
                    at->overhead_while_blocked_ns / 1e6);
    f.action =
        "The step is waiting on the runtime, not on its own work: measure the device work with "
        "device events or many calls per wait (a micro-benchmark's single call per "
        "synchronisation measures the runtime's completion latency); cut the synchronisations "
        "(wait once per step, not per call). Fewer or larger kernels will not help here. At "
        "most " +
        after(v.ns) + ".";
    f.saving_ns = std::min(v.ns, path_bound);
  } else if (v.id == "step_untraced") {
    f.severity = Severity::kWarning;
    f.title = at->untraced_samples > 0 && !at->untraced_functions.empty()
                  ? fmt::format(
                        "No event explains {}: no device work and no host call recorded; the "
                        "host's CPU samples there are mostly in '{}' ({:.1f}%)",
                        share, at->untraced_functions[0].first,
                        Pct(at->untraced_functions[0].second, at->untraced_samples))
              : at->cpu_is_device
                  ? fmt::format(
                        "Nothing explains {}: no operator runs and the host records nothing "
                        "else there; the trace cannot say what the program did",
                        share)
                  : fmt::format(
                        "Nothing explains {}: no device work and no host event other than "
                        "annotations; the trace cannot say what the program waited on",
                        share);
    f.evidence += SampledText(*at);
    if (at->cpu_is_device && at->operators.gap_ns > 0) {
      f.evidence += fmt::format(
          "; {:.3f} ms of it lies in {} gaps under {:.0f} µs between a thread's consecutive "
          "operators (their per-call cost, not counted in the title's share)",
          at->operators.gap_ns / 1e6, at->operators.gaps, kTinyOperatorNs / 1e3);
    }
    // What the reader could not find may be why nothing explains the time
    // (an export without its kernel or runtime tables, the profiler's own
    // warnings that it collected no CUDA events): said here, not only in
    // the import notes' table.
    if (const auto* notes = c.analysis.results.Get<ImportNotes>(kImportNotesPass);
        notes != nullptr && !notes->notes.empty()) {
      std::string said = notes->Joined();
      constexpr size_t kSaid = 600;  // bytes: the table has them whole
      if (said.size() > kSaid)
        said = core::CutUtf8(said, kSaid) + " (the import notes have it whole)";
      f.evidence += "; what the reader could not use: " + said;
    }
    // What the device did in the rest, so the untraced part is not read as
    // the whole story (a long trace whose host was not recorded).
    const int64_t device_ns = at->Of(StepState::kCompute) + at->Of(StepState::kCommunication) +
                              at->Of(StepState::kMemory);
    const int64_t waiting_ns = at->Of(StepState::kDeviceWait) + at->Of(StepState::kQueued);
    // The CPU samples say the host was computing there, not waiting: that
    // work kept the device idle.
    // The marks and samplers of the program's own framework: a PyTorch
    // program's record_function and Python stacks; else NVTX or ROCTx.
    const bool torch = c.analysis.pytorch;
    const std::string_view ranges =
        torch ? "torch.profiler.record_function ranges" : "NVTX or ROCTx ranges";
    const std::string sampled =
        at->untraced_samples > 0
            ? fmt::format(
                  "The CPU samples show the host computing there while the device "
                  "idles: make that work faster, run it before the loop or beside the "
                  "device's work (another thread or process), and mark it with {} to "
                  "see it in the trace. ",
                  ranges)
            : "";
    // A trace that records the host's runtime calls already (a rocprofv3
    // --hip-trace run whose program computes on the host for seconds between
    // them): recording them again shows nothing new; the time is the
    // program's own work outside them. Compilation is left out: torch.compile's
    // Python frames are no runtime call.
    const int64_t calls_ns =
        at->Of(StepState::kLaunch) + at->Of(StepState::kBlocked) + at->Of(StepState::kSetup);
    // A CPU trace records the framework's operators: the time between them
    // is the program's own code, which the operators do not show.
    const std::string record =
        at->cpu_is_device && device_ns > 0 && at->untraced_samples == 0
            ? fmt::format(
                  "The trace records the operators only: the time nothing explains is the "
                  "program's own code between them (Python in the loop, preprocessing, "
                  "logging, a sleep or I/O) or another process. See it with {} and mark the "
                  "program's phases with {}; then make that code faster or move it out of the "
                  "loop.",
                  torch ? "Python's frames in the trace (with_stack=True), py-spy or cProfile"
                        : "a sampler of the host's CPU (perf record)",
                  ranges)
        : calls_ns > 0 && at->untraced_samples == 0
            ? fmt::format(
                  "The trace records the host's runtime calls ({:.3f} ms of them): the time "
                  "nothing explains is the program's own work outside them (host computation, "
                  "I/O, start-up before its first call, checks after its last) or another "
                  "process. Mark the program's phases with {} (one per iteration, as "
                  "steps{}) or sample the host's CPU ({}) to see it.",
                  calls_ns / 1e6, ranges,
                  torch ? ": prof.step() once per iteration writes ProfilerStep#N" : "",
                  torch ? "with_stack=True for Python's frames; py-spy or perf record"
                        : "nsys --sample=cpu, perf record")
            : "Record what the window runs: the host's operators and runtime calls with the "
              "device (torch.profiler activities CPU and CUDA/NPU; rocprofv3 --hip-trace; nsys "
              "-t cuda,nvtx), steps that cover the work (ProfilerStep or NVTX/ROCTx ranges per "
              "iteration), threads that do it.";
    f.action =
        sampled +
        fmt::format(
            "{}{}", record,
            // Short is judged where there are no steps: complete steps of a
            // few hundred milliseconds are a fair sample, were they recorded.
            at->complete_steps == 0 && at->window_ns < 1000000000
                ? " A trace this short supports no step diagnosis."
                : fmt::format(
                      " Of what was recorded, {} {:.3f} ms ({:.1f}%){}: "
                      "the attribution table says in what{}.",
                      at->cpu_is_device ? "the operators computed" : "the device worked",
                      device_ns / 1e6, Pct(device_ns, at->window_ns),
                      waiting_ns > 0 ? fmt::format(" and waited with work queued {:.3f} ms "
                                                   "({:.1f}%)",
                                                   waiting_ns / 1e6, Pct(waiting_ns, at->window_ns))
                                     : std::string(),
                      at->complete_steps == 0 ? "; without steps the window includes start-up"
                                              : ""));
  } else if (v.id == "step_setup") {
    f.severity = Severity::kWarning;
    // Under half the window it is the largest part, not the whole story.
    f.title = fmt::format("One-off set-up{} {}{}: start-up, not steady state",
                          v.states.size() > 1 ? " and warm-up fill" : " fills", share,
                          pct < kSetupPct ? ", the largest part" : "");
    // Of the set-up's largest parts, the allocation calls made again and again
    // (a loop that allocates and frees each iteration): not one-off, said so.
    std::string recurring;
    int64_t recurring_ns = 0;
    for (const auto& part : at->top[Index(StepState::kSetup)]) {
      // (not a structured binding: clang 14 cannot capture one in a lambda)
      const std::string& name = part.first;
      const int64_t ns = part.second;
      const auto stats = std::find_if(
          c.analysis.operators.begin(), c.analysis.operators.end(), [&](const OpStats& o) {
            return o.name == name && o.cls == EventClass::kRuntime && o.count >= kRecurringCalls;
          });
      if (stats == c.analysis.operators.end() || !IsMemoryAllocation(name)) continue;
      recurring += fmt::format("{}{} {} calls ({:.3f} ms)", recurring.empty() ? "" : ", ", name,
                               stats->count, ns / 1e6);
      recurring_ns += ns;
    }
    if (!recurring.empty()) {
      f.evidence +=
          fmt::format("; of it, {:.3f} ms is allocation made again and again, not one-off: {}",
                      recurring_ns / 1e6, recurring);
    }
    f.action =
        std::string(c.analysis.pytorch
                        ? "Judge steady-state steps: profile after warm-up (torch.profiler "
                          "schedule with wait and warmup steps). If allocation recurs in every "
                          "step, keep the caching allocator warm (no torch.cuda.empty_cache() in "
                          "the loop) and reuse buffers."
                        : "Judge the steady state: record only the loop after start-up (nsys "
                          "--delay or --capture-range=cudaProfilerApi, msprof --delay) and mark "
                          "its iterations with NVTX or ROCTx ranges. If allocation recurs in "
                          "every iteration, allocate once and reuse the buffers.") +
        (recurring.empty() ? std::string()
         : c.analysis.pytorch
             // The caching allocator going back to the device (msprof-analyze's
             // memory rule, advisor/rules/en/memory.yaml, gives the same levers).
             ? " Here it does: the caching allocator asks the device for memory again and "
               "again. Let it grow segments instead of allocating new ones "
               "(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, PYTORCH_NPU_ALLOC_CONF on "
               "Ascend), take empty_cache() out of the loop, and where the device's memory is "
               "nearly full, lower the batch size."
             : " Here it does: allocate the buffers once, before the loop, and reuse them.") +
        " Saving, were it all one-off: " + after(v.ns) + ".";
    f.saving_ns = std::min(v.ns, path_bound);
  } else if (v.id == "step_compute") {
    // The largest lever: a kernel family (elementwise and copy kernels
    // together: unfused eager code), or on a CPU trace an operator.
    // One stalled call (Attribution::SlowCall) is said apart: the lead is
    // chosen with its part beyond its name's median left out.
    const Attribution::SlowCall& slow = at->slow_call;
    const int64_t slow_excess = slow.name.empty() ? 0 : slow.ns - slow.median_ns;
    const std::string slow_part = slow.name.empty()   ? std::string()
                                  : at->cpu_is_device ? slow.name
                                                      : std::string(KernelFamily(slow.name));
    std::string lead = "compute";
    int64_t lead_ns = v.ns - slow_excess;
    std::vector<std::pair<std::string, int64_t>> top = at->top[Index(StepState::kCompute)];
    for (auto& [part, ns] : top) {
      if (part == slow_part) ns = std::max<int64_t>(ns - slow_excess, 0);
    }
    std::stable_sort(top.begin(), top.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
    if (!top.empty()) {
      lead = top[0].first, lead_ns = top[0].second;
      if (!at->cpu_is_device) {
        int64_t eager = 0;
        for (const auto& [family, ns] : top) {
          if (family == "elementwise" || family == "copy and layout") eager += ns;
        }
        if (eager > lead_ns) lead = "elementwise and copy", lead_ns = eager;
      }
    }
    const bool slow_in_lead =
        !slow.name.empty() &&
        (slow_part == lead || (lead == "elementwise and copy" &&
                               (slow_part == "elementwise" || slow_part == "copy and layout")));
    const char* what = at->cpu_is_device ? "CPU" : "device";
    f.severity = pct >= 50 ? Severity::kWarning : Severity::kInfo;
    // On the CPU, operators that are each a few microseconds: what takes the
    // time is the framework's cost per call, not the operators' arithmetic.
    const Attribution::Operators& ops = at->operators;
    const int64_t steps = std::max<int64_t>(at->complete_steps, 1);
    if (at->cpu_is_device && ops.count > 0 && 2 * ops.tiny_ns >= ops.ns &&
        ops.tiny >= kTinyOperatorsPerStep * steps) {
      const int64_t tiny_ns = std::min(ops.tiny_ns, v.ns);
      // The short gaps between the calls are the same per-call cost (the
      // interpreter issuing the next one): counted with it where they are
      // a twentieth of the window or more.
      const bool gaps = 20 * ops.gap_ns >= at->window_ns;
      const int64_t per_call_ns = tiny_ns + (gaps ? ops.gap_ns : 0);
      if (2 * per_call_ns >= at->window_ns) f.severity = Severity::kWarning;
      f.title = fmt::format(
          "The CPU computes {} in tiny operators{}: {} calls {} of {:.1f} µs on average, {:.0f}% "
          "of the operators' time: the framework's cost per call, not arithmetic, is the work",
          share,
          gaps ? fmt::format(", and the short gaps between them take {:.1f}% more",
                             Pct(ops.gap_ns, at->window_ns))
               : std::string(),
          ops.tiny / steps, at->complete_steps > 0 ? "a step" : "in the window",
          ops.tiny_ns / 1e3 / static_cast<double>(ops.tiny), Pct(ops.tiny_ns, ops.ns));
      f.evidence += fmt::format(
          " Outermost operators in the window: {}, {:.3f} ms; under {:.0f} µs each: {}, {:.3f} "
          "ms. Largest: {}.",
          ops.count, ops.ns / 1e6, kTinyOperatorNs / 1e3, ops.tiny, ops.tiny_ns / 1e6,
          PartsText(*at, StepState::kCompute));
      if (ops.gap_ns > 0) {
        f.evidence += fmt::format(
            " Gaps under {:.0f} µs between a thread's consecutive operators with nothing "
            "recorded in them: {}, {:.3f} ms ({:.1f}% of {}).",
            kTinyOperatorNs / 1e3, ops.gaps, ops.gap_ns / 1e6, Pct(ops.gap_ns, at->window_ns),
            window);
      }
      f.action = fmt::format(
          "Give each call more work: replace loops over small tensors with whole-tensor "
          "operations (vectorise; batch the small tensors into one), or compile the step "
          "(torch.compile) so the calls fuse: each call costs microseconds whatever its size. "
          "If the tiny operators' time{} halved, {}.",
          gaps ? " and the gaps between them" : "", after(per_call_ns / 2));
      f.saving_ns = std::min(per_call_ns / 2, path_bound);
      out.push_back(std::move(f));
      return;
    }
    // Computing the most is not being bound by it: where the device also
    // idles behind the host (data loading, host overhead, blocking calls) a
    // tenth of the window or more (where host_blocked_<kind> warns), the step
    // is not device-bound, and that finding is ranked by its own saving.
    const Verdict* host_side = nullptr;
    const std::vector<Verdict> verdicts = Verdicts(*at);
    for (const Verdict& x : verdicts) {
      const bool host = x.id == "step_data_loading" || x.id == "step_host_overhead" ||
                        x.id == "step_host_blocked";
      if (host && (host_side == nullptr || x.ns > host_side->ns)) host_side = &x;
    }
    const char* kernels = at->cpu_is_device ? "is" : "kernels are";
    const char* without = slow_in_lead ? " without the stalled call" : "";
    if (host_side != nullptr && 10 * host_side->ns >= at->window_ns) {
      const char* doing = host_side->id == "step_data_loading"    ? "loads data"
                          : host_side->id == "step_host_overhead" ? "runs framework code and "
                                                                    "launches work"
                                                                  : "waits in blocking calls";
      f.title = fmt::format(
          "The {} computes {}, the largest part, but the step is not {}-bound: the {} also "
          "idles {:.1f}% of it while the host {}; {} {} the largest part of compute ({:.3f} "
          "ms{})",
          what, share, what, what, Pct(host_side->ns, at->window_ns), doing, lead, kernels,
          lead_ns / 1e6, without);
    } else {
      f.title = fmt::format(
          "The {} computes {}: the step is {}-bound; {} {} the largest part "
          "({:.3f} ms{})",
          what, share, what, lead, kernels, lead_ns / 1e6, without);
    }
    // On the CPU the lead is an operator: its family says what to do.
    const std::string family = at->cpu_is_device ? OperatorFamily(lead) : std::string();
    if (family == "Matrix multiplies" || family == "Convolutions") {
      f.action = fmt::format(
          "Make the CPU's {} faster or fewer: enough intra-op threads (torch.set_num_threads, "
          "one per physical core), bf16 autocast where the CPU supports it (AVX-512 BF16, AMX), "
          "oneDNN-friendly layouts (channels_last for convolutions), larger batches per call; "
          "check their achieved FLOP/s in the roofline table. If {} took half as long, {}.",
          Lower(family), lead, after(lead_ns / 2));
    } else if (family == kDataMovementFamily) {
      f.action = fmt::format("Copy less: {} If {} took half as long, {}.", kCopyLessAdvice, lead,
                             after(lead_ns / 2));
    } else if (at->cpu_is_device) {
      f.action = fmt::format(
          "Make the operators' work less: the operators table has the largest by self time with "
          "their input shapes; avoid repeated calls, fuse elementwise and data-movement "
          "operators (torch.compile). If {} took half as long, {}.",
          lead, after(lead_ns / 2));
    } else {
      f.action = fmt::format(
          "Make the device work less: {} If {} took half as long, {}.",
          lead == "elementwise" || lead == "copy and layout" || lead == "elementwise and copy"
              ? (c.analysis.pytorch
                     ? "fuse the small elementwise and copy kernels (torch.compile, fused "
                       "optimizers and norms), avoid layout copies (.contiguous(), dtype casts in "
                       "the loop)."
                     : "fuse the small elementwise and copy kernels (a compiler's fusion: XLA, "
                       "a jit, fused library kernels), avoid layout copies and dtype casts in the "
                       "loop.")
          : lead == "GEMM"
              ? "lower precision (bf16/fp16, TF32 or FP8 where accuracy allows) and shapes that "
                "tile well (multiples of 64/128); check the roofline table for how close they "
                "run to the device's peak."
          : lead == "convolution"
              ? (c.analysis.pytorch
                     ? "lower precision (bf16/fp16, TF32 where accuracy allows), channels_last "
                       "(NHWC) tensors so no layout transposes surround them, and the fastest "
                       "algorithm chosen once (torch.backends.cudnn.benchmark=True for fixed "
                       "shapes)."
                     : "lower precision (bf16/fp16, TF32 where accuracy allows), NHWC tensors so "
                       "no layout transposes surround them, and the fastest algorithm searched "
                       "once for fixed shapes.")
          : lead == "attention"
              ? "a fused (flash) attention kernel for these shapes, lower precision, and fewer or "
                "shorter sequences (padding removed, variable-length batches)."
              : "look at the kernels table for the longest kernels and their operators.",
          // A family: "the GEMM kernels", "the other kernels".
          fmt::format("the {} kernels", lead), after(lead_ns / 2));
    }
    f.saving_ns = std::min(lead_ns / 2, path_bound);
    if (!slow.name.empty()) {
      const std::string name = core::CutUtf8(slow.name, 100);
      f.title += fmt::format(
          "; one call of '{}' takes {:.3f} ms, {:.0f}x the median of its {} calls ({:.3f} ms): "
          "a stalled call, not that {}'s cost",
          name, slow.ns / 1e6, static_cast<double>(slow.ns) / static_cast<double>(slow.median_ns),
          slow.calls, slow.median_ns / 1e6, at->cpu_is_device ? "operator" : "kernel");
      f.evidence += fmt::format(
          " The longest compute call, '{}', takes {:.3f} ms beyond the median of its calls "
          "({:.1f}% of {}).",
          slow.name, slow_excess / 1e6, Pct(slow_excess, at->window_ns), window);
      f.action = fmt::format(
                     "First the stalled call: look at what ran beside it (another process on "
                     "the {}, a clock or power drop, a first-use tuning run, preemption) and "
                     "record more steps to see whether it recurs; had it taken its median "
                     "time, {}. Then, ",
                     at->cpu_is_device ? "CPU" : "device", after(slow_excess)) +
                 Lower(f.action.substr(0, 1)) + f.action.substr(1);
      f.saving_ns = std::min(std::max(slow_excess, lead_ns / 2), path_bound);
    }
  } else if (v.id == "step_device_waiting") {
    const int64_t exposed = at->Of(StepState::kCommunication);
    const int64_t waits = at->Of(StepState::kDeviceWait);
    const int64_t queued = at->Of(StepState::kQueued);
    const int64_t overlapped = at->communication_overlapped_ns;
    // Compute that could hide the exposed communication: the window's compute
    // that does not already overlap a collective.
    const int64_t free_compute = std::max<int64_t>(at->Of(StepState::kCompute) - overlapped, 0);
    const bool dependency = queued > exposed + waits || waits > exposed;
    // Waiting or moving data: the timeline's tasks that wait on a peer
    // (HCCL's Notify Wait), else, where the timeline has none, the
    // producer's communication records (communication.json): an
    // operation's time outside its transfers (Wait, Synchronization and
    // Idle Time: Idle is Elapse - Transit - Wait, the operation waiting
    // with no task of its own running).
    int64_t wait_ns = at->communication_wait_ns, of_ns = exposed;
    std::string wait_source = "in tasks that wait on a peer";
    if (wait_ns == 0 && c.reported != nullptr) {
      int64_t transit = 0, elapse = 0;
      for (const ReportedCollective& x : c.reported->collectives) {
        transit += x.transit_ns, elapse += x.elapse_ns;
      }
      if (elapse > 0) {
        wait_ns = std::max<int64_t>(elapse - transit, 0), of_ns = elapse;
        wait_source = "outside transfers, in the producer's communication records";
      }
    }
    const bool peer_wait = !dependency && of_ns > 0 && 2 * wait_ns >= of_ns;
    std::string peer;
    if (!at->peers.empty()) {
      peer = fmt::format("; rank {} above all: {:.3f} ms of it in tasks with that rank",
                         at->peers[0].first, at->peers[0].second / 1e6);
      f.evidence += fmt::format(" Ranks waited with (this is rank {}): ", at->own_rank);
      for (size_t i = 0; i < at->peers.size() && i < 4; ++i) {
        f.evidence += fmt::format("{}rank {} {:.3f} ms", i == 0 ? "" : ", ", at->peers[i].first,
                                  at->peers[i].second / 1e6);
      }
      f.evidence += ".";
    }
    if (exposed > 0) {
      f.evidence += fmt::format(
          " Communication overlapped by compute, not counted: {:.3f} ms; compute outside it "
          "{:.3f} ms.",
          overlapped / 1e6, free_compute / 1e6);
    }
    // The longest queued wait, with what the trace says ordered it.
    const Attribution::QueuedWait& q = at->longest_queued;
    if (queued > 0 && q.ns > 0) {
      f.evidence += fmt::format(
          " The longest wait: '{}' started {:.3f} ms after its launch ({}){}{}.",
          core::CutUtf8(q.task, 120), q.ns / 1e6, q.launch,
          q.stream_wait.empty()
              ? std::string()
              : fmt::format("; its thread had called {} just before launching it: the stream "
                            "waited for an event recorded elsewhere (another stream, thread or "
                            "process)",
                            q.stream_wait),
          q.blocked.empty()
              ? std::string()
              : fmt::format("; meanwhile the host blocked in {}{} for {:.3f} ms of it",
                            q.blocked == q.launch ? "another call of " : "", q.blocked,
                            q.blocked_ns / 1e6));
    }
    // The producer's own step breakdown (torch_npu's step_trace_time, msprof's
    // step traces), where it gave one: the same question answered by it.
    if (c.reported != nullptr && exposed > 0) {
      const ReportedStepTotals r = SumReportedSteps(c.reported->steps);
      if (r.steps > 0 && r.step_ns > 0) {
        f.evidence += fmt::format(
            " The producer's step breakdown (reported_steps, {} step row{}): communication not "
            "overlapped {:.3f} ms of {:.3f} ms ({:.1f}%), {:.3f} ms overlapped.",
            r.steps, r.steps == 1 ? "" : "s", r.exposed_ns / 1e6, r.step_ns / 1e6,
            Pct(r.exposed_ns, r.step_ns), r.overlapped_ns / 1e6);
      }
    }
    f.title = fmt::format(
        "The {} waits {}: {}{}", at->cpu_is_device ? "CPU" : "device", share,
        queued > exposed + waits
            ? "work is queued behind a dependency (another stream, an event or a peer)"
        : waits > exposed ? "on events and peers (another stream, other ranks to arrive)"
        : peer_wait
            ? fmt::format("in communication that compute does not overlap, most of it waiting "
                          "for other ranks ({:.3f} of {:.3f} ms {})",
                          wait_ns / 1e6, of_ns / 1e6, wait_source)
            : std::string("in communication that compute does not overlap"),
        peer);
    // The lever that fits what the device waits in: a dependency, a late
    // rank, a collective that compute could hide, or one that nothing can.
    if (dependency) {
      f.action =
          q.stream_wait.empty() || queued <= exposed + waits
              ? "Find what the device waits for before speeding anything up: behind a dependency, "
                "the stream or event its queued work waits on (another stream's work, an event the "
                "host records late); in a collective, the rank that arrives last (compare the "
                "ranks' step times and the communication tables; the slow rank's own step shows "
                "why it is late)."
              : fmt::format(
                    "Find where the event the stream waits for ({}) is recorded, and what delays "
                    "it: another stream's work in this process (the streams' rows of the trace), "
                    "or another thread or process the trace does not record (a scheduler, a "
                    "data or sampling worker: profile it too). Speeding up the kernels will not "
                    "help while the stream waits{}.",
                    q.stream_wait,
                    q.blocked.empty()
                        ? std::string()
                        : fmt::format("; the host's {} waits behind the same work", q.blocked));
    } else if (peer_wait) {
      f.action = std::string(
                     "The collectives wait for another rank, they do not move data: find the rank "
                     "that arrives last (") +
                 (at->peers.empty() ? "this trace does not record whose signal each wait is for: "
                                      "a Level1 timeline with the communication planes "
                                      "(trace_view.json or the database) does; or compare"
                                    : "the ranks named here; compare") +
                 " the ranks' step times, the late_ranks table where several ranks are analysed "
                 "together) and what makes its step late (its compute, data loading or host). "
                 "Tuning or overlapping the collective will not help while the others wait for it.";
    } else if (ComputeCanHide(free_compute, exposed)) {
      f.action =
          "Overlap the collectives with the compute the step has (gradient all-reduce started "
          "during the backward pass: DDP buckets, FSDP prefetching), and reduce what is sent "
          "(bf16 gradients, larger buckets); where one rank arrives late, the others wait in "
          "the collective: compare the ranks' step times first.";
    } else {
      f.action = fmt::format(
          "There is {} compute in the window to hide it behind: the collectives themselves are "
          "the cost (their volume, the link, or a rank that arrives late). Compare the ranks' "
          "step times first, then reduce the volume (compression, fewer or larger buckets) or "
          "give each step more work per collective.",
          free_compute == 0 ? "no" : "too little");
    }
    f.action += " At most " + after(v.ns) + ".";
    f.saving_ns = std::min(v.ns, path_bound);
  }
  out.push_back(std::move(f));
}

// A record with holes (issue 36; the sampled ranks' reading: 13-19% of
// every step is the device idle under an annotation with nothing recorded
// below it): where the diagnosis names another state, the part nothing
// explains is said, so the diagnosis is read as about the rest.
constexpr double kHolesPct = 10, kHolesWarningPct = 25;

void UntracedPartRule(const RuleContext& c, std::vector<Finding>& out) {
  const Attribution* at = c.analysis.results.Get<Attribution>(kAttributionPass);
  if (at == nullptr || at->window_ns <= 0) return;
  const Verdict v = Choose(*at, PathOf(c.analysis));
  if (v.ns <= 0 || v.id == "step_untraced" || v.id == "step_capture" ||
      v.id == "step_counter_replay") {
    return;
  }
  const int64_t annotation = at->Of(StepState::kAnnotationOnly);
  const int64_t untraced = at->Of(StepState::kUntraced);
  const int64_t holes = annotation + untraced;
  const double pct = Pct(holes, at->window_ns);
  if (pct < kHolesPct) return;
  std::string parts;
  if (annotation > 0) {
    parts = fmt::format("{:.3f} ms inside an annotation with nothing recorded below it{}",
                        annotation / 1e6,
                        at->top[Index(StepState::kAnnotationOnly)].empty()
                            ? std::string()
                            : " (" + PartsText(*at, StepState::kAnnotationOnly) + ")");
  }
  if (untraced > 0) {
    parts += fmt::format("{}{:.3f} ms with no event at all{}", parts.empty() ? "" : "; ",
                         untraced / 1e6, SampledText(*at));
  }
  // On a CPU trace, most of it in short gaps between the operators: the
  // per-call cost of issuing them, which the compute verdict on tiny
  // operators counts; said, and information only.
  const Attribution::Operators& ops = at->operators;
  const bool between_calls = at->cpu_is_device && 2 * ops.gap_ns >= holes;
  if (ops.gap_ns > 0 && at->cpu_is_device) {
    parts += fmt::format(
        "; of it, {:.3f} ms in {} gaps under {:.0f} µs between a thread's "
        "consecutive operators (the interpreter issuing the next call)",
        ops.gap_ns / 1e6, ops.gaps, kTinyOperatorNs / 1e3);
  }
  const char* idle = at->cpu_is_device ? "no operator runs" : "the device idles";
  out.push_back(
      {"untraced_part",
       pct >= kHolesWarningPct && !between_calls ? Severity::kWarning : Severity::kInfo,
       fmt::format("Nothing in the trace explains {:.1f}% of {}: {} and the host records nothing "
                   "that says why; the diagnosis is about the rest",
                   pct, WindowText(*at), idle),
       parts,
       at->cpu_is_device
           ? "On a trace without device work this time lies between the operators: the Python "
             "that issues them (a loop, data preparation, logging), which the profiler does not "
             "record, or a wait outside the trace (I/O, a lock, another process). Record Python "
             "with with_stack=True or sample it (py-spy) to see which; work in the Python loop "
             "itself moves into fewer, larger tensor operations."
           : "Record what the host does there before judging host overhead: the runtime and "
             "synchronisation calls with the device activity (torch.profiler activities CPU and "
             "CUDA/NPU), Python with with_stack=True, the threads that do the work (a thread the "
             "profiler does not see, a helper process); where the time is the program waiting "
             "on something outside the trace (I/O, another process, a lock), the trace cannot "
             "show it."});
}

}  // namespace

std::string DiagnosedWindow(const Attribution& at) { return WindowText(at); }

std::string DataLoadingAdvice(const Attribution* at) {
  const bool workers = at != nullptr && std::any_of(at->top[Index(StepState::kDataLoading)].begin(),
                                                    at->top[Index(StepState::kDataLoading)].end(),
                                                    [](const auto& span) {
                                                      return IsWorkerDataLoaderSpan(span.first);
                                                    });
  const char* pin = at != nullptr && at->cpu_is_device ? "" : ", pin_memory=True";
  return workers ? fmt::format(
                       "The DataLoader loads in worker processes already and they do not keep "
                       "up with the step: more workers (num_workers, up to the free cores), "
                       "persistent_workers=True, a larger prefetch_factor{}, and lighter "
                       "per-item work (decode, augmentation) or a faster store.",
                       pin)
                 : fmt::format(
                       "Load batches ahead of the step: DataLoader(num_workers>0, "
                       "persistent_workers=True, prefetch_factor){}, and lighter per-item work "
                       "(decode, augmentation) or a faster store.",
                       pin);
}

std::string_view Key(StepState state) { return kStateText[Index(state)].key; }
std::string_view Label(StepState state) { return kStateText[Index(state)].label; }
bool IsDeviceState(StepState state) { return Index(state) <= Index(StepState::kQueued); }

std::string_view KernelFamily(std::string_view kernel_name) {
  const std::string n = Lower(kernel_name);
  const auto any = [&](std::initializer_list<std::string_view> words) {
    return std::any_of(words.begin(), words.end(),
                       [&](std::string_view w) { return Contains(n, w); });
  };
  // TorchInductor's generated kernels say their kind first, the first three
  // letters of its kernel categories (torch/_inductor/wrapper_benchmark.py:
  // foreach, persistent_reduction, pointwise, reduction, split_scan,
  // template); the operator names after "fused_" are what was
  // fused into them, so an epilogue named after the GEMM or convolution it
  // follows ("triton_poi_fused_addmm_gelu_view") is elementwise work, not a
  // GEMM. Templates are the matmul, convolution and attention kernels.
  if (Contains(n, "triton_poi_") || Contains(n, "triton_for_")) return "elementwise";
  if (Contains(n, "triton_red_") || Contains(n, "triton_per_") || Contains(n, "triton_spl_"))
    return "reduction and normalization";
  if (Contains(n, "triton_tem_")) {
    return any({"attention", "attn", "sdpa"}) ? "attention"
           : Contains(n, "conv")              ? "convolution"
                                              : "GEMM";
  }
  if (any({"flash", "attention", "attn", "fmha", "sdpa", "mha_"})) return "attention";
  if (any({"conv", "winograd", "implicit_gemm", "fft2d", "dgrad", "wgrad"})) return "convolution";
  // Device work named after its operator (PyTorch's pre-Kineto export with
  // use_cuda=True) gives aten::addmm, aten::mm, aten::linear, aten::addmv
  // (PyTorch before 1.6 without the aten:: prefix).
  if (any({"gemm",        "matmul",   "cutlass",      "cublas",     "sgemm",   "hgemm",
           "wmma",        "mma_",     "nvjet",        "cijk_",      "tensile", "rocblas",
           "hipblaslt",   "xmma",     "_ogs",         "bmm",        "gemv",    "dot_",
           "aten::addmm", "aten::mm", "aten::linear", "aten::addmv"}) ||
      n == "addmm" || n == "mm" || n == "linear" || n == "addmv")
    return "GEMM";
  if (any({"reduce", "reduction", "softmax", "norm", "sum_", "mean", "argmax", "topk", "scan",
           "cumsum"}))
    return "reduction and normalization";
  if (any({"copy", "transpose", "permute", "cat_", "concat", "gather", "scatter", "index",
           "transdata", "nchw", "nhwc"}))
    return "copy and layout";
  if (any({"elementwise", "vectorized", "unrolled", "pointwise", "triton_poi", "fused_", "add",
           "mul",         "relu",       "gelu",     "silu",      "sigmoid",    "tanh",   "cast",
           "fill",        "clamp",      "where",    "dropout",   "uniform",    "exp"}))
    return "elementwise";
  return "other";
}

std::string_view Diagnosis(const Analysis& analysis) {
  const Attribution* at = analysis.results.Get<Attribution>(kAttributionPass);
  if (at == nullptr || at->window_ns <= 0) return {};
  const Verdict v = Choose(*at, PathOf(analysis));
  return v.ns > 0 ? v.id : std::string_view();
}

int64_t CriticalPathBound(const Analysis& analysis, int64_t window_ns,
                          const std::vector<StepState>& states) {
  return PathBound(window_ns, PathOf(analysis), states);
}

int64_t CriticalPathWaitBound(const Analysis& analysis, int64_t window_ns) {
  const CriticalPath* path = PathOf(analysis);
  const int64_t bound = PathBound(window_ns, path, {StepState::kBlocked});
  return bound == INT64_MAX ? bound : bound + path->sync_device_ns;
}

bool NotARun(const Analysis& analysis) {
  const std::string_view d = Diagnosis(analysis);
  return d == "step_capture" || d == "step_counter_replay";
}

StepState HostEventState(const TraceModel& model, size_t e, bool cpu_is_device,
                         bool scopes_are_work, size_t task) {
  const EventClass cls = model.cls[e];
  const std::string_view name = model.String(model.name[e]);
  switch (cls) {
    case EventClass::kDataLoading: return StepState::kDataLoading;
    case EventClass::kSync: return StepState::kBlocked;
    case EventClass::kRuntime: {
      const RuntimeKind kind = RuntimeKindOf(name);
      return RuntimeState(kind, kind == RuntimeKind::kAsyncCopy && CopyBlocks(model, task));
    }
    case EventClass::kStep: return StepState::kAnnotationOnly;
    case EventClass::kAnnotation:
      // On a CPU trace a collective's annotation (gloo:all_reduce) is the
      // communication itself, and the program's own scopes are its work.
      if (cpu_is_device && IsCommunication(name)) return StepState::kCommunication;
      return scopes_are_work ? StepState::kCompute : StepState::kAnnotationOnly;
    case EventClass::kPython:
      if (CompileKind(name) == "torch.compile") return StepState::kCompilation;
      // A thread waiting in Python (a lock, a condition, a sleep) explains
      // nothing: the time falls to what the other threads do, else untraced.
      return IsPythonWait(name) ? StepState::kUntraced : StepState::kFramework;
    case EventClass::kHostOp: {
      if (CompileKind(name) == "torch.compile") return StepState::kCompilation;
      if (cpu_is_device) {
        if (IsCommunication(name)) return StepState::kCommunication;
        return IsBookkeeping(name) ? StepState::kFramework : StepState::kCompute;
      }
      const std::string_view fn = FunctionOf(name);
      if (fn == "item" || fn == "_local_scalar_dense") return StepState::kBlocked;
      // A runtime's own allocation scopes (XLA's "Build buffer allocations",
      // "DeviceMemAllocator::Alloc"): one-off set-up, as allocation calls are.
      for (const std::string& w : Words(name)) {
        if (w == "alloc" || w == "allocation" || w == "allocations") return StepState::kSetup;
      }
      return StepState::kFramework;
    }
    default: return StepState::kFramework;
  }
}

Attribution ComputeAttribution(const TraceModel& model, const Analysis& analysis) {
  return Attributor(model, analysis).Run();
}

Pass AttributionPass() {
  return {kAttributionPass,
          "Where did the steps' time go: each instant to one state (compute, exposed "
          "communication, memory, waits, set-up, warm-up, launch, framework, blocked, untraced)?",
          {"steps", "links"},
          [](const TraceModel& model, Analysis& a) {
            a.results.Set(kAttributionPass, ComputeAttribution(model, a));
          },
          Tables,
          {{"step_<state>",
            {kAttributionPass},
            [](const Thresholds&) {
              return fmt::format(
                  "always, once per trace with a window: the state that decided the window's "
                  "time, by the attribution: a counter capture (step_counter_replay) where the "
                  "trace holds a counter profiler's ranges (its kernels were replayed), else a "
                  "graph capture when stream capture covers {:g}% "
                  "or more of the window, or the trace has no complete steps, two captures or "
                  "more and no more graph launches than captures (a capture run: its start-up) "
                  "(either leaves no other finding but those about the "
                  "trace itself: not a run, its times judge nothing), else untraced when nothing "
                  "explains {:g}% or more (on a CPU trace less the gaps under {:g} us between a "
                  "thread's consecutive operators: their per-call cost), "
                  "else start-up (step_startup: a window without steps opened by one collective "
                  "that lasts {:g}% of it or more and begins in its first {:g}%), "
                  "else one-off set-up from {:g}% (set-up and warm-up together from the same "
                  "share where each takes {:g}% or more, named after the larger), else warm-up "
                  "(compilation, first-use loads) "
                  "from {:g}%, else unsteady steps (step_outlier: the longest complete step "
                  "{:g}x the shortest or more, {:g}% of the window or more apart, and one "
                  "name's own time grew by half the difference), else the largest (each state's "
                  "time at most its time on the steps' critical path plus the path's time "
                  "nothing explains, where that is under {:g}% of the path) of compute, "
                  "device waiting (exposed "
                  "communication, peers, queued work), memory, data loading, host overhead "
                  "(launch, framework; runtime latency where a host thread is blocked in a "
                  "synchronisation for half of it or more) and the host blocked with the "
                  "device idle, set-up and warm-up under their thresholds among them only where "
                  "they exceed the largest of the others by a third (in a nearer tie the "
                  "steady state's lever is named); critical "
                  "from 50% of the window, warning from 20% (compute: warning from 50%, set-up "
                  "and untraced: warning); on a CPU trace the compute verdict names tiny "
                  "operators (the framework's cost per call) where the outermost computing "
                  "operators under {:g} us each hold half their time or more and number {} a "
                  "step or more, with the gaps between them where those are 5% of the window "
                  "or more (a warning where the two are half of it); the compute verdict says "
                  "one stalled call apart (the window's longest compute call, {:g}x the median "
                  "of its name's calls or more, {} calls or more, beyond that median by {:g}% "
                  "of the window or more), its lead chosen without it, saving at least that "
                  "excess; the saving is the state's "
                  "time (compute: half of its largest kernel family, or of the tiny operators' "
                  "time and those gaps), at most the states' time on "
                  "the steps' critical path plus the path's time nothing explains (untraced or "
                  "under an annotation only) where that is under {:g}% of the path",
                  kCapturePct, kUntracedPct, kTinyOperatorNs / 1e3, kStartupPct, kStartupStartPct,
                  kSetupPct, kOneOffPartPct, kWarmupPct, kOutlierStepRatio, kOutlierWindowPct,
                  kPathBlindPct, kTinyOperatorNs / 1e3, kTinyOperatorsPerStep, kSlowCallRatio,
                  kSlowCallMinCalls, kSlowCallPct, kPathBlindPct);
            },
            DiagnosisRule},
           {"untraced_part",
            {kAttributionPass},
            [](const Thresholds&) {
              return fmt::format(
                  "the step-time diagnosis names a state other than untraced (or a capture), "
                  "and the window's time that nothing explains (the device idle under an "
                  "annotation with nothing below it, or with no event at all) is {:g}% of it or "
                  "more (a warning from {:g}%, unless on a CPU trace half of it or more lies in "
                  "gaps under {:g} us between a thread's consecutive operators: their per-call "
                  "cost, which the compute verdict counts); no saving: the trace cannot say "
                  "what it was",
                  kHolesPct, kHolesWarningPct, kTinyOperatorNs / 1e3);
            },
            UntracedPartRule}}};
}

}  // namespace opscope::analyze
