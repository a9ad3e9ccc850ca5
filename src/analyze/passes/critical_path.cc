// The critical path of each step (critical_path.h): the pass and its table.
#include "analyze/passes/critical_path.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "analyze/analysis.h"
#include "analyze/compute_device.h"
#include "analyze/flat_map.h"
#include "analyze/names.h"
#include "analyze/runtime_calls.h"

namespace opscope::analyze {

namespace {

constexpr std::array<std::string_view, kPathEdges> kEdgeKeys = {
    "host",         "device", "launch_delay", "stream_gap", "cross_stream",
    "cross_thread", "sync",   "host_gap",     "untraced"};

StepState DeviceState(EventClass cls) {
  switch (cls) {
    case EventClass::kCommunication: return StepState::kCommunication;
    case EventClass::kMemcpy:
    case EventClass::kMemset:
    case EventClass::kDma: return StepState::kMemory;
    case EventClass::kDeviceWait: return StepState::kDeviceWait;
    default: return StepState::kCompute;
  }
}

// The graph the path is walked on (its indices of host nesting, device
// streams, launches and waits: built from the model alone, so the pass
// critical_path_graph builds it while the attribution runs), then the walk.
class Walker {
 public:
  Walker(const TraceModel& model, const Analysis& a)
      : model_(model),
        cpu_is_device_(a.compute_on == ComputeOn::kCpu),
        scopes_are_work_(cpu_is_device_ && ScopesAreTheWork(model)),
        kind_of_name_(model.string_count(), RuntimeKind::kUnknown),
        state_of_name_(model.string_count(), 0),
        flags_of_name_(model.string_count(), 0),
        parts_(1024) {
    // A synchronisation is the host's where no device work shares its
    // process (JAX's block_until_ready on a host thread), the device's where
    // some does (Kineto's cuda_sync records, on the GPU's rows, repeat a wait
    // its runtime call already shows).
    std::vector<uint8_t> device_track(model_.tracks.size(), 0);
    for (size_t e = 0; e < model_.size(); ++e) {
      if (IsDevice(model_.cls[e])) device_track[model_.track[e]] = 1;
    }
    std::map<std::string_view, bool> device_process;
    for (size_t t = 0; t < model_.tracks.size(); ++t) {
      device_process[model_.tracks[t].pid] |= device_track[t] != 0;
    }
    host_sync_.assign(model_.tracks.size(), 0);
    for (size_t t = 0; t < model_.tracks.size(); ++t) {
      host_sync_[t] = device_process[model_.tracks[t].pid] ? 0 : 1;
    }
    IndexLaunches();
    IndexHost();
    IndexDevice();
    IndexWaitingCalls();
    for (const TraceModel::LaunchFlow& f : model_.launch_flows) {
      // A flow that ends before it starts (the clocks disagree) orders nothing.
      if (f.host_track < model_.tracks.size() && f.device_track < model_.tracks.size() &&
          f.device_ns >= f.host_ns) {
        flows_.push_back({f.device_track, f.device_ns, f.host_track, f.host_ns});
      }
    }
    std::sort(flows_.begin(), flows_.end(), FlowLaunch::ByTask);
  }

  // Walks back from each complete step's end; once (the walker is spent).
  CriticalPath Run(const Analysis& a) {
    attribution_ = a.results.Get<Attribution>(kAttributionPass);
    for (const StepBreakdown& s : a.steps) {
      if (s.status != "complete") continue;
      ++out_.complete_steps;
      const int64_t begin = s.begin_ns, end = s.begin_ns + s.duration_ns;
      out_.window_ns += end - begin;
      const int32_t step = StepPosition(begin, s.duration_ns);
      const uint32_t home = step >= 0 ? model_.track[host_.events[step]] : HomeBy(end);
      // The step is done when its device work is: where work it launched
      // ends after its host span, the path ends there (and is counted
      // within the step).
      const size_t lagging = LastLaunchedTask(begin, end);
      if (lagging != SIZE_MAX && End(lagging) > end) {
        Walk(begin, end, {Node::kDeviceEnd, static_cast<int64_t>(lagging)}, home);
      } else if (step >= 0) {
        Walk(begin, end, {Node::kHostAt, step, kFindChild}, home);
      } else {
        Walk(begin, end, Sink(end), home);
      }
    }
    if (out_.complete_steps == 0) {
      const auto [begin, end] = a.span;  // the attribution's window
      if (begin < end) {
        out_.window_ns = end - begin;
        Walk(begin, end, Sink(end), HomeBy(end));
      }
    }
    parts_.ForEach([&](int64_t key, const Sum& sum) {
      const auto id = static_cast<uint32_t>(key & 0xffffffff);
      out_.parts.push_back(
          {static_cast<PathEdge>(key >> 40), static_cast<StepState>(key >> 32 & 0xff),
           id == UINT32_MAX ? "" : std::string(model_.String(id)), sum.count, sum.ns});
    });
    std::sort(out_.parts.begin(), out_.parts.end(), [](const auto& x, const auto& y) {
      return x.ns != y.ns ? x.ns > y.ns : x.name < y.name;
    });
    return std::move(out_);
  }

 private:
  static constexpr int32_t kFindChild = -2;

  // A place on the path. kHostAt: inside host event `at` (a position in
  // host_.events) at the walk's time, with `child` the child that ended
  // last before then (-1 none, kFindChild: look it up); kHostStart: at host
  // event `at`'s start; kDeviceEnd / kDeviceStart: at a device task's (an
  // event id) end or start.
  struct Node {
    enum Kind : uint8_t { kHostAt, kHostStart, kDeviceEnd, kDeviceStart, kDone } kind;
    int64_t at;
    int32_t child = kFindChild;
  };

  // Host events by track, each track's by start then the longer first, with
  // each one's parent as a position (its descendants follow it).
  void IndexHost() {
    host_ = GroupByTrack(model_, [&](size_t e) { return OnHost(e); });
    SortByOpening(model_, host_);
    const size_t n = host_.events.size();
    parent_.assign(n, -1);
    subtree_end_.assign(n, 0);
    std::vector<int32_t> open;
    int64_t latest = INT64_MIN;
    for (size_t t = 0; t + 1 < host_.begin.size(); ++t) {
      open.clear();
      for (size_t k = host_.begin[t]; k < host_.begin[t + 1]; ++k) {
        const int64_t end = HostEnd(k);
        // Its parent is the innermost open event that lasts until its end:
        // one that closes before it does (a Python call that began before
        // the step and returns inside it) is beside it, not around it.
        while (!open.empty() && HostEnd(open.back()) < end) {
          subtree_end_[open.back()] = static_cast<int32_t>(k);
          open.pop_back();
        }
        const int32_t p = open.empty() ? -1 : open.back();
        parent_[k] = p;
        open.push_back(static_cast<int32_t>(k));
        if (p < 0 && end > latest) latest = end, sink_track_ = model_.track[host_.events[k]];
      }
      for (const int32_t k : open) subtree_end_[k] = static_cast<int32_t>(host_.begin[t + 1]);
    }
    for (size_t k = 0; k < n; ++k) {
      if (parent_[k] < 0) top_ends_.push_back(static_cast<int32_t>(k));
    }
    std::sort(top_ends_.begin(), top_ends_.end(),
              [&](int32_t x, int32_t y) { return HostEnd(x) < HostEnd(y); });
  }

  // linked_: each runtime call's first device task of its correlation id,
  // and each device task's first runtime call of its id (its launch), in
  // event order as the readers wrote them. A column per event rather than a
  // map by id: a trace's ids can be sparse (a hash map of them cost 32 MB on
  // the 522 MB Kineto trace, held beside the attribution while it runs).
  void IndexLaunches() {
    linked_.assign(model_.size(), UINT32_MAX);
    std::vector<std::pair<int64_t, uint32_t>> calls, tasks;  // (id, event), by id then event
    for (size_t e = 0; e < model_.size(); ++e) {
      if (model_.correlation[e] < 0) continue;
      if (model_.cls[e] == EventClass::kRuntime) {
        calls.emplace_back(model_.correlation[e], static_cast<uint32_t>(e));
      } else if (IsDevice(model_.cls[e])) {
        tasks.emplace_back(model_.correlation[e], static_cast<uint32_t>(e));
      }
    }
    if (calls.empty() || tasks.empty()) return;
    std::sort(calls.begin(), calls.end());
    std::sort(tasks.begin(), tasks.end());
    // Both sides by id: each id's first event on one side is linked to every
    // event of that id on the other.
    size_t c = 0, t = 0;
    while (c < calls.size() && t < tasks.size()) {
      const int64_t id = calls[c].first;
      if (tasks[t].first < id) {
        ++t;
      } else if (tasks[t].first > id) {
        ++c;
      } else {
        const uint32_t first_call = calls[c].second, first_task = tasks[t].second;
        for (; c < calls.size() && calls[c].first == id; ++c) linked_[calls[c].second] = first_task;
        for (; t < tasks.size() && tasks[t].first == id; ++t) linked_[tasks[t].second] = first_call;
      }
    }
  }
  // The first device task of runtime call e's id, or SIZE_MAX.
  size_t TaskOf(size_t e) const { return linked_[e] == UINT32_MAX ? SIZE_MAX : linked_[e]; }

  // Runtime calls that return once the work they issued is done (MTIA's
  // runFunction; any runtime's synchronous launch): by name, those of which
  // half the calls with a linked task or more end after that task does.
  // An asynchronous launch returns before its work ends but by chance.
  void IndexWaitingCalls() {
    std::vector<std::pair<uint32_t, uint32_t>> calls(model_.string_count());  // linked, waited
    for (size_t e = 0; e < model_.size(); ++e) {
      if (model_.cls[e] != EventClass::kRuntime) continue;
      const size_t d = TaskOf(e);
      if (d == SIZE_MAX) continue;
      auto& [linked, waited] = calls[model_.name[e]];
      ++linked;
      if (End(d) <= End(e)) ++waited;
    }
    waits_for_own_.assign(model_.string_count(), 0);
    for (size_t n = 0; n < calls.size(); ++n) {
      waits_for_own_[n] = calls[n].first > 0 && 2 * calls[n].second >= calls[n].first;
    }
  }

  bool OnHost(size_t e) const {
    const EventClass cls = model_.cls[e];
    return IsHost(cls) && (cls != EventClass::kSync || host_sync_[model_.track[e]] != 0);
  }

  // The sibling before position k (the previous top-level event of its
  // thread for a top-level one), or -1: the events between a parent and k
  // are all in the parent's subtree, so k - 1's ancestors lead to it.
  int32_t PrevSibling(int32_t k) const {
    const auto begin = static_cast<int32_t>(host_.begin[model_.track[host_.events[k]]]);
    const int32_t p = parent_[k];
    for (int32_t j = k - 1; j >= begin && j != p; j = parent_[j]) {
      if (parent_[j] == p) return j;
      if (parent_[j] < 0) break;
    }
    return -1;
  }

  int64_t HostEnd(size_t k) const {
    const uint32_t e = host_.events[k];
    return model_.start_ns[e] + std::max<int64_t>(model_.duration_ns[e], 0);
  }
  int64_t HostStart(size_t k) const { return model_.start_ns[host_.events[k]]; }
  // The child of k that started last before `at` (its descendants follow
  // it, sorted by start, up to subtree_end_[k]: an event that starts inside
  // k and outlasts it is beside k, and ends its subtree), or -1.
  int32_t ChildBefore(int32_t k, int64_t at) const {
    const uint32_t* first = host_.events.data() + k + 1;
    const uint32_t* last = host_.events.data() + subtree_end_[k];
    const uint32_t* q =
        std::partition_point(first, last, [&](uint32_t x) { return model_.start_ns[x] < at; });
    auto c = static_cast<int32_t>(q - host_.events.data()) - 1;
    while (c > k && parent_[c] != k) c = parent_[c];
    return c > k ? c : -1;
  }

  // The top-level host event ending last in (after, until] on another track
  // than `not_track`, or -1. A bounded look back.
  int32_t LatestTopEnd(int64_t after, int64_t until, uint32_t not_track) const {
    auto k = std::partition_point(top_ends_.begin(), top_ends_.end(),
                                  [&](int32_t x) { return HostEnd(x) <= until; });
    for (int look = 0; k != top_ends_.begin() && look < 64; ++look) {
      --k;
      if (HostEnd(*k) <= after) break;
      if (model_.track[host_.events[*k]] != not_track) return *k;
    }
    return -1;
  }

  // Device tasks by stream (track), each by start; and every task by end.
  void IndexDevice() {
    device_ = GroupByTrack(
        model_, [&](size_t e) { return IsDevice(model_.cls[e]) && model_.duration_ns[e] >= 0; });
    for (size_t t = 0; t + 1 < device_.begin.size(); ++t) {
      std::sort(device_.events.data() + device_.begin[t],
                device_.events.data() + device_.begin[t + 1], [&](uint32_t x, uint32_t y) {
                  return model_.start_ns[x] != model_.start_ns[y]
                             ? model_.start_ns[x] < model_.start_ns[y]
                             : x < y;
                });
    }
    for (size_t t = 0; t + 1 < device_.begin.size(); ++t) {
      if (device_.begin[t] < device_.begin[t + 1])
        device_tracks_.push_back(static_cast<uint32_t>(t));
    }
  }

  int64_t End(size_t e) const { return model_.start_ns[e] + model_.duration_ns[e]; }

  // Of the tasks launched by calls that start in [begin, end), the one that
  // ends last; SIZE_MAX none. Each stream's tasks from the first to start
  // at `begin` (none launched in the window starts before it), until one
  // whose launch call starts at `end` or later (or, without a recorded
  // launch, that itself starts then).
  size_t LastLaunchedTask(int64_t begin, int64_t end) const {
    size_t last = SIZE_MAX;
    for (const uint32_t t : device_tracks_) {
      const uint32_t* stop = device_.events.data() + device_.begin[t + 1];
      for (const uint32_t* k =
               std::partition_point(device_.events.data() + device_.begin[t], stop,
                                    [&](uint32_t x) { return model_.start_ns[x] < begin; });
           k != stop; ++k) {
        const int32_t call = LaunchPosition(*k);
        const int64_t launched = call >= 0 ? HostStart(call) : model_.start_ns[*k];
        if (launched >= end) break;
        if (call >= 0 && launched >= begin && (last == SIZE_MAX || End(*k) > End(last))) {
          last = *k;
        }
      }
    }
    return last;
  }

  // The state the attribution gave a runtime call its name does not decide
  // (Attribution::refined), or kUntraced where it gave none.
  StepState Refined(uint32_t e) const {
    if (attribution_ == nullptr) return StepState::kUntraced;
    const auto& refined = attribution_->refined;
    const auto it = std::lower_bound(refined.begin(), refined.end(),
                                     std::pair<uint32_t, StepState>{e, StepState::kCompute});
    return it != refined.end() && it->first == e ? it->second : StepState::kUntraced;
  }

  // The host position of the call that launched device task d, or -1: its
  // runtime call by correlation id, else (torch_npu's tasks carry none) the
  // innermost host event open where the HostToDevice flow that ends at the
  // task's start begins.
  int32_t LaunchPosition(size_t d) const {
    const size_t call = linked_[d] == UINT32_MAX ? SIZE_MAX : linked_[d];
    if (call != SIZE_MAX) return HostPosition(call);
    if (flows_.empty()) return -1;
    const FlowLaunch key{model_.track[d], model_.start_ns[d], 0, 0};
    const auto f = std::lower_bound(flows_.begin(), flows_.end(), key, FlowLaunch::ByTask);
    if (f == flows_.end() || f->device_track != key.device_track || f->device_ns != key.device_ns) {
      return -1;
    }
    return OpenAt(f->host_track, f->host_ns);
  }

  // The innermost host event on track t open at `at` (started at or before,
  // ending at or after), or -1.
  int32_t OpenAt(uint32_t t, int64_t at) const {
    if (static_cast<size_t>(t) + 1 >= host_.begin.size()) return -1;
    const uint32_t* first = host_.events.data() + host_.begin[t];
    const uint32_t* last = host_.events.data() + host_.begin[t + 1];
    const uint32_t* k =
        std::partition_point(first, last, [&](uint32_t x) { return model_.start_ns[x] <= at; });
    if (k == first) return -1;
    auto p = static_cast<int32_t>(k - 1 - host_.events.data());
    while (p >= 0 && HostEnd(p) < at) p = parent_[p];
    return p;
  }

  // The position of host event e.
  int32_t HostPosition(size_t e) const {
    const uint32_t t = model_.track[e];
    const uint32_t* first = host_.events.data() + host_.begin[t];
    const uint32_t* last = host_.events.data() + host_.begin[t + 1];
    const uint32_t* k = std::partition_point(
        first, last, [&](uint32_t x) { return model_.start_ns[x] < model_.start_ns[e]; });
    for (; k != last && model_.start_ns[*k] == model_.start_ns[e]; ++k) {
      if (*k == e) return static_cast<int32_t>(k - host_.events.data());
    }
    return -1;
  }

  // The task before device task e on its stream, or SIZE_MAX.
  size_t PreviousOnStream(size_t e) const {
    const uint32_t t = model_.track[e];
    const uint32_t* first = device_.events.data() + device_.begin[t];
    const uint32_t* last = device_.events.data() + device_.begin[t + 1];
    const uint32_t* k = std::partition_point(
        first, last, [&](uint32_t x) { return model_.start_ns[x] < model_.start_ns[e]; });
    for (; k != last && *k != e && model_.start_ns[*k] == model_.start_ns[e]; ++k) {
    }
    return k == first || k == last || *k != e ? SIZE_MAX : *(k - 1);
  }

  // The device task ending last in (after, until], on another track than
  // `not_track` (UINT32_MAX: any); SIZE_MAX none. Each stream's tasks by
  // start, looked back from the last one to start by `until` (a bounded
  // look: a stream's tasks end in the order they start but for overlaps).
  size_t LatestEnd(int64_t after, int64_t until, uint32_t not_track) const {
    size_t best = SIZE_MAX;
    for (const uint32_t t : device_tracks_) {
      if (t == not_track) continue;
      const uint32_t* first = device_.events.data() + device_.begin[t];
      const uint32_t* k =
          std::partition_point(first, device_.events.data() + device_.begin[t + 1],
                               [&](uint32_t x) { return model_.start_ns[x] <= until; });
      for (int look = 0; k != first && look < 64; ++look) {
        const int64_t end = End(*--k);
        if (end <= after) break;
        if (end > until) continue;
        if (best == SIZE_MAX || end > End(best)) best = *k;
        break;
      }
    }
    return best;
  }

  // The step event (kStep) of a step, or -1.
  int32_t StepPosition(int64_t begin, int64_t duration) {
    if (!steps_indexed_) {  // once: inferred steps have no step events to find
      steps_indexed_ = true;
      for (size_t k = 0; k < host_.events.size(); ++k) {
        if (model_.cls[host_.events[k]] == EventClass::kStep) {
          steps_.push_back({model_.start_ns[host_.events[k]], static_cast<int32_t>(k)});
        }
      }
      std::sort(steps_.begin(), steps_.end());
    }
    auto it =
        std::lower_bound(steps_.begin(), steps_.end(), std::pair<int64_t, int32_t>{begin, -1});
    for (; it != steps_.end() && it->first == begin; ++it) {
      if (model_.duration_ns[host_.events[it->second]] == duration) return it->second;
    }
    return -1;
  }

  // The thread of a window without a step event: the one whose top-level
  // host event ends last by the window's end (an annotation that outlasts
  // the recording, on another process, is not it); else the trace's.
  uint32_t HomeBy(int64_t end) const {
    auto k = std::partition_point(top_ends_.begin(), top_ends_.end(),
                                  [&](int32_t x) { return HostEnd(x) <= end; });
    return k != top_ends_.begin() ? model_.track[host_.events[*(k - 1)]] : sink_track_;
  }

  // Where a window ending at `end` ends: the host or device interval that
  // ends last by then (the outermost host one of equals).
  Node Sink(int64_t end) const {
    Node node{Node::kDone, 0};
    int64_t best = INT64_MIN;
    auto k = std::partition_point(top_ends_.begin(), top_ends_.end(),
                                  [&](int32_t x) { return HostEnd(x) <= end; });
    if (k != top_ends_.begin()) {
      best = HostEnd(*(k - 1));
      node = {Node::kHostAt, *(k - 1), kFindChild};
    }
    const size_t d = LatestEnd(INT64_MIN, end, UINT32_MAX);
    if (d != SIZE_MAX && End(d) > best) node = {Node::kDeviceEnd, static_cast<int64_t>(d)};
    return node;
  }

  // On track t at time `at`: the innermost host event running then (started
  // before, ending at or after) with the child of it that started last, else
  // the top-level event that ended last before (with `gap` true), else -1.
  int32_t Containing(uint32_t t, int64_t at, bool& gap, int32_t& child) const {
    gap = false, child = -1;
    if (static_cast<size_t>(t) + 1 >= host_.begin.size()) return -1;  // none: UINT32_MAX
    const uint32_t* first = host_.events.data() + host_.begin[t];
    const uint32_t* last = host_.events.data() + host_.begin[t + 1];
    const uint32_t* k =
        std::partition_point(first, last, [&](uint32_t x) { return model_.start_ns[x] < at; });
    if (k == first) return -1;
    auto p = static_cast<int32_t>(k - 1 - host_.events.data());
    int32_t below = -1;
    while (p >= 0 && HostEnd(p) < at) below = p, p = parent_[p];
    if (p >= 0) {
      child = below;
      return p;
    }
    gap = true;
    return below;
  }

  bool Blocks(size_t e) {
    switch (model_.cls[e]) {
      case EventClass::kSync: return true;
      case EventClass::kRuntime: {
        const RuntimeKind kind = KindOf(e);
        return kind == RuntimeKind::kBlocked ||
               (kind == RuntimeKind::kAsyncCopy &&
                Refined(static_cast<uint32_t>(e)) == StepState::kBlocked);
      }
      case EventClass::kHostOp: return (Flags(model_.name[e]) & kWaits) != 0;
      default: return false;
    }
  }

  // What a name says, worked out once per name: an operator that waits for
  // the device (.item()), a compilation region (torch.compile's frames).
  static constexpr uint8_t kKnown = 1, kWaits = 2, kCompiles = 4;
  uint8_t Flags(uint32_t name) {
    uint8_t& f = flags_of_name_[name];
    if (f == 0) {
      const std::string_view text = model_.String(name);
      const std::string_view fn = FunctionOf(text);
      f = static_cast<uint8_t>(kKnown | (fn == "item" || fn == "_local_scalar_dense" ? kWaits : 0) |
                               (CompileKind(text) == "torch.compile" ? kCompiles : 0));
    }
    return f;
  }

  RuntimeKind KindOf(size_t e) {
    RuntimeKind& kind = kind_of_name_[model_.name[e]];
    if (kind == RuntimeKind::kUnknown) kind = RuntimeKindOf(model_.String(model_.name[e]));
    return kind;
  }

  // The state of host position k's own time: its event's (as the
  // attribution decided it for a runtime call it refined), or inside data
  // loading, a synchronisation or a compilation region, the region's.
  StepState HostStateAt(int32_t k) {
    const uint32_t e = host_.events[k];
    const EventClass cls = model_.cls[e];
    if (cls == EventClass::kRuntime) {
      if (const StepState refined = Refined(e); refined != StepState::kUntraced) return refined;
    }
    // By name and class once (the class in the high byte, plus one).
    uint16_t& known = state_of_name_[model_.name[e]];
    if (known >> 8 != static_cast<uint16_t>(cls) + 1) {
      known = static_cast<uint16_t>(
          (static_cast<uint16_t>(cls) + 1) << 8 |
          static_cast<uint16_t>(HostEventState(model_, e, cpu_is_device_, scopes_are_work_)));
    }
    const auto own = static_cast<StepState>(known & 0xff);
    if (own == StepState::kDataLoading) return own;
    for (int32_t p = parent_[k], guard = 0; p >= 0 && guard < 256; p = parent_[p], ++guard) {
      const EventClass region = model_.cls[host_.events[p]];
      if (region == EventClass::kDataLoading) return StepState::kDataLoading;
      if (region == EventClass::kSync) return StepState::kBlocked;
      if ((region == EventClass::kPython || region == EventClass::kHostOp) &&
          (Flags(model_.name[host_.events[p]]) & kCompiles) != 0) {
        return StepState::kCompilation;
      }
    }
    return own;
  }

  void Add(PathEdge edge, StepState state, uint32_t name, int64_t begin, int64_t end) {
    begin = std::max(begin, window_begin_), end = std::min(end, window_end_);
    if (end <= begin) return;
    const int64_t ns = end - begin;
    out_.by_edge[static_cast<size_t>(edge)] += ns;
    out_.by_state[static_cast<size_t>(state)] += ns;
    const int64_t key = static_cast<int64_t>(static_cast<uint64_t>(edge) << 40 |
                                             static_cast<uint64_t>(state) << 32 | name);
    Sum& sum = parts_[key];
    ++sum.count, sum.ns += ns;
  }

  // A blocking call's time from `begin` until the device work it waited for
  // ended at `end` (the path goes on through that work).
  // The walk goes back in time: what an earlier wait reaches (two threads
  // waiting at once) is counted once.
  void AddWaited(int64_t begin, int64_t end) {
    begin = std::max(begin, window_begin_), end = std::min({end, window_end_, waited_floor_});
    if (end <= begin) return;
    out_.sync_device_ns += end - begin;
    waited_floor_ = begin;
  }

  // Walks back from `node` at `end` to `begin`, adding each edge's time.
  void Walk(int64_t begin, int64_t end, Node node, uint32_t home) {
    window_begin_ = begin, window_end_ = end, waited_floor_ = INT64_MAX;
    int64_t at = end;
    if (node.kind == Node::kHostAt) at = std::min(at, HostEnd(node.at));
    if (node.kind == Node::kDeviceEnd) at = std::min(at, End(node.at));
    Add(PathEdge::kUntraced, StepState::kUntraced, UINT32_MAX, at, end);
    const size_t limit = 4 * (host_.events.size() + device_.events.size()) + 16;
    size_t steps = 0;
    while (node.kind != Node::kDone && at > begin) {
      if (++steps > limit) {
        ++out_.cut_walks;
        break;
      }
      switch (node.kind) {
        case Node::kHostAt: node = FromHost(static_cast<int32_t>(node.at), node.child, at); break;
        case Node::kHostStart: node = FromHostStart(static_cast<int32_t>(node.at), at, home); break;
        case Node::kDeviceEnd: {
          const auto d = static_cast<size_t>(node.at);
          const int64_t start = std::min(model_.start_ns[d], at);
          Add(PathEdge::kDevice, DeviceState(model_.cls[d]), model_.name[d], start, at);
          at = start;
          node = {Node::kDeviceStart, node.at};
          break;
        }
        case Node::kDeviceStart:
          node = FromDeviceStart(static_cast<size_t>(node.at), at, home);
          break;
        case Node::kDone: break;
      }
    }
    if (at > begin) Add(PathEdge::kUntraced, StepState::kUntraced, UINT32_MAX, begin, at);
  }

  // Inside host position k at `at`: back to the child that ended last, or
  // (a blocking call at its end) the device task it waited for, or another
  // thread's event that ended just before this one resumed, or k's start.
  Node FromHost(int32_t k, int32_t child, int64_t& at) {
    const uint32_t e = host_.events[k];
    if (child == kFindChild) child = ChildBefore(k, at);
    const int64_t child_end = child >= 0 ? std::min(HostEnd(child), at) : INT64_MIN;
    const int64_t start = model_.start_ns[e];
    if (at == HostEnd(k) && Blocks(e)) {
      const size_t d = LatestEnd(std::max(start, child_end), at, UINT32_MAX);
      if (d != SIZE_MAX) {
        AddWaited(std::max(start, child_end), End(d));
        Add(PathEdge::kSync, StepState::kBlocked, model_.name[e], End(d), at);
        at = End(d);
        return {Node::kDeviceEnd, static_cast<int64_t>(d)};
      }
    }
    // A call that returns once its own work is done (IndexWaitingCalls),
    // where that work ended inside it: it waited for it.
    if (at == HostEnd(k) && model_.cls[e] == EventClass::kRuntime &&
        waits_for_own_[model_.name[e]] != 0) {
      const size_t d = TaskOf(e);
      if (d != SIZE_MAX && End(d) <= at && End(d) > std::max(start, child_end)) {
        AddWaited(std::max(start, child_end), End(d));
        Add(PathEdge::kSync, StepState::kBlocked, model_.name[e], End(d), at);
        at = End(d);
        return {Node::kDeviceEnd, static_cast<int64_t>(d)};
      }
    }
    // Another thread's work that ended just before this thread resumed:
    // what it waited for (a backward pass on autograd's thread).
    const int64_t own = child >= 0 ? child_end : std::min(start, at);
    if (at - own > kWakeNs) {
      const int64_t after = std::max(own, at - std::max(kWakeNs, (at - own) / 20));
      const int32_t other = LatestTopEnd(after, at - 1, model_.track[e]);
      if (other >= 0) {
        Add(PathEdge::kCrossThread, HostStateAt(k), model_.name[e], HostEnd(other), at);
        at = HostEnd(other);
        return {Node::kHostAt, other, kFindChild};
      }
    }
    if (child >= 0) {
      Add(PathEdge::kHost, HostStateAt(k), model_.name[e], child_end, at);
      at = child_end;
      return {Node::kHostAt, child, kFindChild};
    }
    Add(PathEdge::kHost, HostStateAt(k), model_.name[e], std::min(start, at), at);
    at = std::min(start, at);
    return {Node::kHostStart, k};
  }

  // At host position k's start: its parent (its previous sibling the child
  // to go back to); else (top level) its thread's previous event, unless the
  // thread had been idle (a thread other than the step's, for more than
  // kWakeNs): then what woke it, another thread's event that ended just
  // before, else the step's own thread at this instant.
  Node FromHostStart(int32_t k, int64_t& at, uint32_t home) {
    if (parent_[k] >= 0) {
      const int32_t q = PrevSibling(k);
      return {Node::kHostAt, parent_[k], q >= 0 && HostStart(q) < at ? q : kFindChild};
    }
    const uint32_t t = model_.track[host_.events[k]];
    const int32_t q = PrevSibling(k);
    const int64_t q_end = q >= 0 ? std::min(HostEnd(q), at) : INT64_MIN;
    if (q >= 0 && (t == home || at - q_end <= kWakeNs)) {
      Add(PathEdge::kHostGap, StepState::kUntraced, UINT32_MAX, q_end, at);
      at = q_end;
      return {Node::kHostAt, q, kFindChild};
    }
    if (t == home) return {Node::kDone, 0};
    const int64_t idle = q >= 0 ? at - q_end : at - window_begin_;
    const int32_t other =
        LatestTopEnd(std::max(q_end, at - std::max(kWakeNs, idle / 20)), at - 1, t);
    if (other >= 0) {
      Add(PathEdge::kCrossThread, StepState::kUntraced, UINT32_MAX, HostEnd(other), at);
      at = HostEnd(other);
      return {Node::kHostAt, other, kFindChild};
    }
    return OnHome(home, at);
  }

  // Continue on the step's own thread at `at`.
  Node OnHome(uint32_t home, int64_t& at) {
    bool gap = false;
    int32_t child = -1;
    const int32_t x = Containing(home, at, gap, child);
    if (x < 0) return {Node::kDone, 0};
    if (gap) {
      const int64_t x_end = std::min(HostEnd(x), at);
      Add(PathEdge::kHostGap, StepState::kUntraced, UINT32_MAX, x_end, at);
      at = x_end;
      return {Node::kHostAt, x, kFindChild};
    }
    return {Node::kHostAt, x, child};
  }

  // At device task d's start: whichever of its launch call's start, the
  // previous task on its stream's end and (when neither explains the start)
  // another stream's task's end came last.
  Node FromDeviceStart(size_t d, int64_t& at, uint32_t home) {
    int32_t call_k = LaunchPosition(d);
    int64_t launch = INT64_MIN, ready = INT64_MIN;
    if (call_k >= 0 && HostStart(call_k) <= at) {
      launch = HostStart(call_k), ready = HostEnd(call_k) + kQueuedGraceNs;
    } else {
      call_k = -1;
    }
    const size_t prev = PreviousOnStream(d);
    const int64_t prev_end = prev != SIZE_MAX ? std::min(End(prev), at) : INT64_MIN;
    size_t other = SIZE_MAX;
    if (at > std::max(ready, prev_end) && (call_k >= 0 || prev != SIZE_MAX)) {
      other = LatestEnd(std::max(launch, prev_end), at - 1, model_.track[d]);
    }
    if (other != SIZE_MAX) {
      Add(PathEdge::kCrossStream, StepState::kQueued, model_.name[other], End(other), at);
      at = End(other);
      return {Node::kDeviceEnd, static_cast<int64_t>(other)};
    }
    if (prev != SIZE_MAX && prev_end >= launch) {
      // Named after the task before, as HTA credits a kernel-to-kernel gap:
      // the device's own launch overhead where the task's launch is on
      // record (it was queued), else nothing in the trace explains it. A
      // task held back past both its launch's return and the stream's
      // previous task (each by kQueuedGraceNs) waited on a dependency the
      // trace does not show, as the attribution counts it: queued.
      const StepState state = call_k < 0 ? StepState::kUntraced
                              : at > std::max(prev_end + kQueuedGraceNs, ready)
                                  ? StepState::kQueued
                                  : StepState::kLaunch;
      Add(PathEdge::kStreamGap, state, model_.name[prev], prev_end, at);
      at = prev_end;
      return {Node::kDeviceEnd, static_cast<int64_t>(prev)};
    }
    if (call_k >= 0) {
      // Held back past kQueuedGraceNs after its launch returned, with
      // nothing on record to explain it: the device waited on a dependency
      // for the rest (queued, as the attribution counts it).
      const uint32_t name = model_.name[host_.events[call_k]];
      if (at > ready) {
        Add(PathEdge::kLaunchDelay, StepState::kQueued, name, ready, at);
        at = ready;
      }
      Add(PathEdge::kLaunchDelay, StepState::kLaunch, name, launch, at);
      at = launch;
      return {Node::kHostStart, call_k};
    }
    // No launch recorded (a reader without correlation ids): the step's own
    // thread at this instant.
    return OnHome(home, at);
  }

  const TraceModel& model_;
  const Attribution* attribution_ = nullptr;  // its refined runtime calls; null: it did not run
  const bool cpu_is_device_, scopes_are_work_;
  MappedVector<uint32_t> linked_;       // IndexLaunches
  std::vector<uint8_t> waits_for_own_;  // by name: the call returns once its task is done
  std::vector<RuntimeKind> kind_of_name_;
  std::vector<uint8_t> host_sync_;       // per track: its synchronisations are the host's
  std::vector<uint16_t> state_of_name_;  // (class + 1) << 8 | state; 0 not yet known
  std::vector<uint8_t> flags_of_name_;   // Flags(); 0 not yet known
  TrackGroups host_, device_;
  std::vector<int32_t> parent_;
  std::vector<int32_t> subtree_end_;     // per position: the first position after its descendants
  std::vector<uint32_t> device_tracks_;  // the tracks holding device tasks
  std::vector<int32_t> top_ends_;        // top-level host positions by end
  struct FlowLaunch {
    uint32_t device_track;
    int64_t device_ns;
    uint32_t host_track;
    int64_t host_ns;
    static bool ByTask(const FlowLaunch& x, const FlowLaunch& y) {
      return x.device_track != y.device_track ? x.device_track < y.device_track
                                              : x.device_ns < y.device_ns;
    }
  };
  std::vector<FlowLaunch> flows_;  // the model's launch flows, by device track and time
  uint32_t sink_track_ = UINT32_MAX;
  int64_t window_begin_ = 0, window_end_ = 0, waited_floor_ = INT64_MAX;
  struct Sum {
    int64_t count = 0, ns = 0;
  };
  Int64Map<Sum> parts_;  // edge << 40 | state << 32 | name id (UINT32_MAX: none)
  std::vector<std::pair<int64_t, int32_t>> steps_;  // the step events' starts and positions
  bool steps_indexed_ = false;
  CriticalPath out_;
};

std::string PartsText(const CriticalPath& cp, PathEdge edge) {
  std::string text;
  int shown = 0;
  for (const CriticalPath::Part& p : cp.parts) {
    if (p.edge != edge || p.name.empty()) continue;
    text += fmt::format("{}{} {:.3f} ms", text.empty() ? "" : ", ", p.name, p.ns / 1e6);
    if (++shown == 3) break;
  }
  return text;
}

void Tables(const Analysis& a, const TableContext& context,
            std::vector<core::ResultTable>& tables) {
  const CriticalPath* cp = a.results.Get<CriticalPath>(kCriticalPathPass);
  if (cp == nullptr || cp->window_ns <= 0) return;
  core::ResultTable table;
  table.section = std::string(kCriticalPathPass);
  table.title = "What each step waited on: its critical path";
  table.columns = {
      {"trace", "Trace", 0, false},
      {"edge", "Edge"},
      {"state", "State"},
      {"what", "What"},
      {.key = "count", .header = "Times", .unit = core::Unit::kCount},
      {.key = "time_ns", .header = "Time", .unit = core::Unit::kTime},
      {.key = "share_pct", .header = "% of window", .precision = 1, .unit = core::Unit::kPercent}};
  const size_t shown = context.Shown(cp->parts.size(), table);
  for (size_t i = 0; i < shown; ++i) {
    const CriticalPath::Part& p = cp->parts[i];
    table.AddRow({std::string(context.path), std::string(Key(p.edge)), std::string(Key(p.state)),
                  p.name, p.count, p.ns, Pct(p.ns, cp->window_ns)});
  }
  const std::string window =
      cp->complete_steps > 0 ? fmt::format("the {} complete step{} ({:.3f} ms)", cp->complete_steps,
                                           cp->complete_steps == 1 ? "" : "s", cp->window_ns / 1e6)
                             : fmt::format("the trace's span ({:.3f} ms; it has no complete steps)",
                                           cp->window_ns / 1e6);
  std::string edges;
  for (size_t i = 0; i < kPathEdges; ++i) {
    if (cp->by_edge[i] == 0) continue;
    edges += fmt::format("{}{} {:.1f}%", edges.empty() ? "" : ", ", kEdgeKeys[i],
                         Pct(cp->by_edge[i], cp->window_ns));
  }
  std::string states;
  for (size_t s = 0; s < kStepStates; ++s) {
    if (cp->by_state[s] == 0) continue;
    states += fmt::format("{}{} {:.1f}%", states.empty() ? "" : ", ",
                          Key(static_cast<StepState>(s)), Pct(cp->by_state[s], cp->window_ns));
  }
  table.notes.push_back(
      "Walked back from the end of " + window +
      ": each interval to the dependency it waited on last (a host event to its last child or "
      "its previous sibling, a blocking call to the device task it waited for, a device task to "
      "its launch, the previous task on its stream or another stream's task); the rows add up "
      "to the window. By edge: " +
      edges + ". By state: " + states + ".");
  if (const std::string device = PartsText(*cp, PathEdge::kDevice); !device.empty()) {
    table.notes.push_back("Device tasks on the path, longest: " + device + ".");
  }
  if (cp->cut_walks > 0) {
    table.notes.push_back(fmt::format(
        "{} walk{} stopped at the bound on its length; the rest of its window is untraced.",
        cp->cut_walks, cp->cut_walks == 1 ? "" : "s"));
  }
  tables.push_back(std::move(table));
}

}  // namespace

std::string_view Key(PathEdge edge) { return kEdgeKeys[static_cast<size_t>(edge)]; }

CriticalPath ComputeCriticalPath(const TraceModel& model, const Analysis& analysis) {
  return Walker(model, analysis).Run(analysis);
}

Pass CriticalPathGraphPass() {
  return {kCriticalPathGraphPass,
          "What does each host and device interval depend on (the graph the critical path is "
          "walked on)?",
          {},
          [](const TraceModel& model, Analysis& a) {
            a.results.Set(kCriticalPathGraphPass, std::make_shared<Walker>(model, a));
          },
          nullptr,
          {},
          /*scratch=*/true};
}

Pass CriticalPathPass() {
  return {kCriticalPathPass,
          "What did each step wait on: the chain of host and device intervals that decided "
          "when it ended?",
          {"steps", kAttributionPass, kCriticalPathGraphPass},
          [](const TraceModel& model, Analysis& a) {
            const auto* graph = a.results.Get<std::shared_ptr<Walker>>(kCriticalPathGraphPass);
            a.results.Set(kCriticalPathPass, graph != nullptr && *graph != nullptr
                                                 ? (*graph)->Run(a)
                                                 : ComputeCriticalPath(model, a));
          },
          Tables};
}

}  // namespace opscope::analyze
