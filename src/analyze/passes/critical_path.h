// Analysis pass "critical_path": the chain of host and device intervals that
// decided when each step ended (issue 36), walked back from the step's end.
//
// Every interval of the trace is a node with its dependencies: a host event
// on its thread after its parent's start or its previous sibling's end (and,
// for a blocking call, after the device task it waited for); a device task
// after its launch call's start (the runtime call with its correlation id;
// for torch_npu, whose tasks carry none, the call its HostToDevice flow
// starts in), the previous task on its stream, or, where
// neither explains a start held back kQueuedGraceNs past its launch, another
// stream's task that ended just before it (an event dependency the trace does
// not record); a host thread idle for more than kWakeNs that resumes within
// kWakeNs (or a twentieth of its idle time) of another thread's top-level
// event ending, after it. An event that began inside another and outlasts
// it is beside it, not nested in it.
//
// From the step's end (or, where the device work the step launched ends
// later, from that work's end), the walk goes each time to the dependency
// that was satisfied last: the one the interval waited on. Where a thread's
// first event, or a task whose launch is not on record, has no dependency in
// the trace, the walk continues on the step's own thread at that instant.
//
// Each edge's time is the time between its ends, so the path covers its step
// exactly: the parts add up to the window (the complete steps, else the
// trace's span). This is where opscope and HolisticTraceAnalysis's
// lightweight critical path differ by design: HTA weighs the time between
// two top-level operators and a blocking call's wait as 0, so its path is
// shorter than the step and a synchronisation never leads to the device work
// it waited on; here the first is host_gap time and the second is the device
// work, reached through a sync edge.
#ifndef OPSCOPE_ANALYZE_PASSES_CRITICAL_PATH_H_
#define OPSCOPE_ANALYZE_PASSES_CRITICAL_PATH_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/passes/attribution.h"
#include "analyze/passes/pass.h"

namespace opscope::analyze {

// What an edge of the path is (the names follow HTA's CPEdgeType where one
// matches).
enum class PathEdge : uint8_t {
  kHost,         // a host event's own time (outside its children): HTA's operator edge
  kDevice,       // a device task running: HTA's operator edge on a stream
  kLaunchDelay,  // a launch call's start to its task's start, the stream idle
  kStreamGap,    // the previous task on the stream ends, this one starts: kernel_kernel_delay
  kCrossStream,  // another stream's task ends, this one starts: an event dependency
  kCrossThread,  // another thread's event ends, this thread resumes (it waited for it)
  kSync,         // a device task ends, the blocking call that waited for it returns
  kHostGap,      // between two top-level events of a thread: nothing traced (HTA: 0)
  kUntraced,     // before the path's first event in the window
};
inline constexpr int64_t kWakeNs = 20'000;
inline constexpr size_t kPathEdges = static_cast<size_t>(PathEdge::kUntraced) + 1;
std::string_view Key(PathEdge edge);  // "host", "device", "launch_delay", ...

struct CriticalPath {
  int64_t window_ns = 0;
  int64_t complete_steps = 0;  // 0: one walk over the trace's span
  std::array<int64_t, kPathEdges> by_edge{};
  // The same time by the attribution's states (a host event's own time in
  // its event's state, a device task in compute, communication, memory or a
  // device wait, launch delays and stream gaps as launch overhead (a gap
  // before a task whose launch is not on record as untraced), cross-stream
  // waits as queued, syncs as blocked, gaps as untraced).
  std::array<int64_t, kStepStates> by_state{};
  struct Part {
    PathEdge edge = PathEdge::kHost;
    StepState state = StepState::kUntraced;
    std::string name;  // the event ("" for gaps)
    int64_t count = 0, ns = 0;
  };
  std::vector<Part> parts;  // by (edge, state, name), most time first
  // The path's time inside blocking calls before the device work each
  // waited for ended (the walk reaches that work through the call's sync
  // edge): device work the wait kept the host from overlapping with what
  // followed it. Removing the waits can save no more than this and the
  // path's blocked time (kSync edges).
  int64_t sync_device_ns = 0;
  int64_t cut_walks = 0;  // walks stopped by the step bound (never on a well-formed trace)
};

struct Analysis;
CriticalPath ComputeCriticalPath(const TraceModel& model, const Analysis& analysis);

inline constexpr std::string_view kCriticalPathPass = "critical_path";
Pass CriticalPathPass();
// The graph it walks, built from the model alone while the attribution runs
// (a scratch result: dropped once the walk is done).
inline constexpr std::string_view kCriticalPathGraphPass = "critical_path_graph";
Pass CriticalPathGraphPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_CRITICAL_PATH_H_
