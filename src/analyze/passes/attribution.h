// Analysis pass "attribution": one account of where the time of the steps
// went, adding up to the window (issue 36). Each instant of the window is in
// exactly one state, decided in this order:
//
//  1. What the device does (the device's tracks; on a trace without device
//     work, the CPU threads' operators stand for it): compute kernels, then
//     communication not overlapped by compute, then memory traffic (copies,
//     sets, DMA), then a device-side wait (an event or a peer), then work
//     launched and not yet started more than kQueuedGraceNs after its launch
//     call returned (a dependency on another stream, an event or a peer).
//  2. Where the device idles, what the host does. Each traced host thread is
//     in the state of its innermost event (inside data loading, a
//     compilation region or a blocking call, that region's state; a
//     runtime's allocation scope is set-up), and across threads work
//     explains the idle device before a wait: data loading, compilation and
//     warm-up, one-off set-up, host launch overhead, framework and Python,
//     then the host blocked in a synchronisation, then a user annotation with
//     nothing recorded below it. A Python frame that waits (the standard
//     library's waits and the built-ins they block in: names.h IsPythonWait)
//     holds no state: a thread asleep in one explains nothing.
//  3. Nothing on the host: untraced.
//
// A blocking call (a synchronisation, a synchronous copy, an asynchronous
// copy to or from pageable memory, .item()) is a wait, never work: where the
// device is busy meanwhile, the device's state wins. One-off set-up is memory
// allocation, stream, event and graph creation, and the trace's first runtime
// call when it launches nothing, waits for nothing and lasts kSetupFirstCallNs
// or more (the runtime creates its context there); compilation and warm-up is module loading,
// compile frames, and a launch of kFirstUseNs or more that is its kernel's first while every later
// launch of it takes under a tenth of that (a first-use code load).
//
// The window is the complete steps (steps.h), else the trace's span.
#ifndef OPSCOPE_ANALYZE_PASSES_ATTRIBUTION_H_
#define OPSCOPE_ANALYZE_PASSES_ATTRIBUTION_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyze/passes/pass.h"

namespace opscope::analyze {

inline constexpr int64_t kQueuedGraceNs = 50'000;
inline constexpr int64_t kSetupFirstCallNs = 10'000'000;
inline constexpr int64_t kFirstUseNs = 1'000'000;
inline constexpr double kOutlierStepRatio = 2, kOutlierWindowPct = 25;
// One compute call is slow where it takes kSlowCallRatio times the median of
// its name's calls or more (kSlowCallMinCalls calls or more) and what it
// takes beyond that median is kSlowCallPct% of the window or more.
inline constexpr double kSlowCallRatio = 10, kSlowCallPct = 10;
inline constexpr int64_t kSlowCallMinCalls = 3;
// A collective is start-up when it begins in the first kStartupStartPct% of
// a stepless window and lasts kStartupPct% of it or more.
inline constexpr double kStartupPct = 50, kStartupStartPct = 10;
// On a CPU trace, an operator is tiny under kTinyOperatorNs: its time is the
// framework's per-call cost (dispatch, allocation, the checks around the
// kernel), a few microseconds whatever the tensor, more than its arithmetic.
inline constexpr int64_t kTinyOperatorNs = 20000;
// The compute verdict names tiny operators as the work where they hold half
// the operators' time or more and number kTinyOperatorsPerStep a step or more.
inline constexpr int64_t kTinyOperatorsPerStep = 100;

// The states, in the order that decides an instant (see above).
enum class StepState : uint8_t {
  kCompute,
  kCommunication,  // exposed: not overlapped by compute
  kMemory,
  kDeviceWait,
  kQueued,
  kDataLoading,
  kCompilation,
  kSetup,
  kLaunch,
  kFramework,
  kBlocked,
  kAnnotationOnly,
  kUntraced,  // kept last
};
inline constexpr size_t kStepStates = static_cast<size_t>(StepState::kUntraced) + 1;
// A stable key ("compute", "communication_exposed", ...) and a label.
std::string_view Key(StepState state);
std::string_view Label(StepState state);
// Device-side states: the device (or, on a CPU trace, the CPU) is working or
// waiting on device work; the others are host states on an idle device.
bool IsDeviceState(StepState state);

struct Attribution {
  int64_t window_ns = 0;
  int64_t complete_steps = 0;  // 0: the window is the trace's span
  // Without complete steps: the profiler's own start and stop at the span's
  // edges, left out of the window (Analysis::profiler_ns).
  int64_t profiler_ns = 0;
  // The host's CPU samples (TraceModel::cpu_samples) in the untraced time, of
  // those in the window, and the functions and modules most sampled there
  // (at most three each, most first): what the host computed where no event
  // says.
  int64_t untraced_samples = 0, window_samples = 0;
  std::vector<std::pair<std::string, int64_t>> untraced_functions, untraced_modules;
  // The launching thread's OS calls (TraceModel::launcher_os_calls) in the
  // untraced time: their time there in all, and by function, most first (at
  // most three).
  int64_t untraced_os_ns = 0;
  std::vector<std::pair<std::string, int64_t>> untraced_os_calls;
  bool steps_inferred = false;  // the steps are InferSteps's, not the trace's own
  bool cpu_is_device = false;   // a trace without device work: its operators are the compute
  std::array<int64_t, kStepStates> ns{};
  // The largest contributors of each state, most time first (at most 5):
  // kernel families for compute, copy directions for memory, event names
  // for the others.
  std::array<std::vector<std::pair<std::string, int64_t>>, kStepStates> top;
  int64_t communication_overlapped_ns = 0;  // beside the account, never added to it
  // Of the exposed communication, the time a task waits for another rank's
  // signal (names.h IsPeerWait): waiting on a peer, beside the account.
  int64_t communication_wait_ns = 0;
  // Of the launch and framework time, the part during which some host thread
  // is blocked in a synchronisation (the runtime's threads working while the
  // program waits): beside the account.
  int64_t overhead_while_blocked_ns = 0;
  // Ranges of a counter profiler that replayed the kernels
  // (TraceModel::replay_ranges): the trace is a counter capture, not a run.
  int64_t replay_ranges = 0;
  // Window time inside a graph capture (a stream's begin-capture call to its
  // end-capture call): work launched then is recorded into a graph, not run.
  int64_t capture_ns = 0;
  // Begin-capture calls and graph launches (cudaGraphLaunch, hipGraphLaunch)
  // in the trace: a trace without steps that captures graphs and replays each
  // at most once records a capture run (vLLM's and SGLang's start-up), even
  // where most of its time prepares the captures.
  int64_t captures = 0, graph_launches = 0;
  // The ranks the exposed communication and device waits were with, where the
  // trace names the two ranks of each task (TraceModel::CollectiveArgs): this
  // rank (the one in every pair), and each peer with the time of its tasks in
  // those two states, most first.
  int32_t own_rank = -1;
  std::vector<std::pair<int32_t, int64_t>> peers;
  // Steps that are not steady because of one slow call: the longest complete
  // step takes kOutlierStepRatio times the shortest or more, the difference
  // is kOutlierWindowPct% of the window or more, and one name's own time
  // (a host event's outside its children, a device task's) grew by half the
  // difference or more between them. Empty name: none.
  struct Outlier {
    std::string name;
    std::string long_step, short_step;
    int64_t long_step_ns = 0, short_step_ns = 0;
    int64_t long_ns = 0, short_ns = 0;  // the name's own time in each step
  } outlier;
  // The window's longest compute call (a kernel; on a CPU trace an
  // operator) where it is slow against its own name's calls (kSlowCallRatio,
  // kSlowCallPct): one stalled call (a clock drop, preemption, a first-use
  // tuning run), not that kernel's cost. Empty name: none.
  struct SlowCall {
    std::string name;
    int64_t ns = 0, median_ns = 0, calls = 0;
  } slow_call;
  // A trace without complete steps that opens with one collective filling
  // kStartupPct% of its span or more (a start-up broadcast, ranks waiting for
  // each other to start): one-off, not the steady state. Empty name: none.
  struct Startup {
    std::string name;
    int64_t offset_ns = 0, ns = 0;  // from the window's start; its duration
  } startup;
  // On a CPU trace, the outermost operators that compute (an operator inside
  // another counts in its parent) starting in the window: how many, their
  // time, and of them the tiny ones (under kTinyOperatorNs each). Beside
  // them, the gaps under kTinyOperatorNs between one thread's consecutive
  // operators where nothing is recorded (untraced or inside an annotation
  // only): the interpreter and framework issuing the next call, the same
  // per-call cost as a tiny operator's. How many, and their time in the
  // window.
  struct Operators {
    int64_t count = 0, ns = 0, tiny = 0, tiny_ns = 0;
    int64_t gaps = 0, gap_ns = 0;
  } operators;
  // The runtime calls whose state their name alone does not decide: the
  // trace-wide rules (the first call's context creation: setup; a kernel's
  // first-use launch: compilation) and the asynchronous copies that block
  // (CopyBlocks: blocked), by event, for the passes that class events as this
  // one does.
  std::vector<std::pair<uint32_t, StepState>> refined;
  // The longest wait of work launched and not started (the queued state):
  // the task and its launch call, how long it waited, the stream-wait call
  // (cudaStreamWaitEvent and the like) its thread issued after its previous
  // launch and before this one, the stream then waiting for an event
  // recorded elsewhere ("" none), and the host call that blocked longest
  // during the wait with that overlap, where it covers a tenth of it or more
  // ("" none).
  struct QueuedWait {
    int64_t ns = 0;
    std::string task, launch, stream_wait, blocked;
    int64_t blocked_ns = 0;
  } longest_queued;

  int64_t Of(StepState s) const { return ns[static_cast<size_t>(s)]; }
};

// The kernel family of a compute kernel's name: "GEMM", "convolution",
// "attention", "elementwise", "reduction and normalization", "copy and
// layout", "other". Indicative: names only.
std::string_view KernelFamily(std::string_view kernel_name);
// The window the attribution covers, in words: "the 2 complete steps (1230.240
// ms)", "the trace's span (19.930 ms; it has no complete steps)".
std::string DiagnosedWindow(const Attribution& at);
// What to do about a host that waits for its batches, in the loader's terms:
// a single-process DataLoader is told to load in workers; one whose spans
// are a worker loader's (names.h IsWorkerDataLoaderSpan) already does, and its
// workers do not keep up. Pinned memory only where a device receives the
// batches (not on a CPU trace). One sentence or more, ending with a stop;
// null `at`: neither is known.
std::string DataLoadingAdvice(const Attribution* at);

// The state of a host event's own time by what the event is: the rules above
// (a runtime call by RuntimeKindOf, an asynchronous copy that blocks as a
// wait; `task`: the device task it launched, SIZE_MAX none), without the
// trace-wide refinements (a kernel's first-use launch, the runtime's context
// creation). `cpu_is_device`: a trace without device work; `scopes_are_work`:
// on such a trace its user scopes are the work (ScopesAreTheWork).
StepState HostEventState(const TraceModel& model, size_t e, bool cpu_is_device,
                         bool scopes_are_work, size_t task = SIZE_MAX);

struct Analysis;
Attribution ComputeAttribution(const TraceModel& model, const Analysis& analysis);

// The id of the step-time diagnosis the trace gets (step_<state>), "" where
// the attribution did not run or has no window: a rule that would say the
// same of the same time stays silent.
struct Analysis;
std::string_view Diagnosis(const Analysis& analysis);
// Whether the diagnosis found the trace is not a run to diagnose (a graph
// capture, a counter profiler's replay): its other findings would judge
// times that are not the program's.
bool NotARun(const Analysis& analysis);
// What the steps' critical path allows removing `states` from a window of
// `window_ns` to save: their time on the path plus the path's unexplained
// time (a step ends no sooner than its path allows); INT64_MAX where the
// path bounds nothing (none, another window, a quarter of it unexplained).
int64_t CriticalPathBound(const Analysis& analysis, int64_t window_ns,
                          const std::vector<StepState>& states);
// The same for removing the host's waits for the device: the path's
// blocked time, its unexplained time, and the device work it reached through
// waits (CriticalPath::sync_device_ns), which the host could have overlapped.
int64_t CriticalPathWaitBound(const Analysis& analysis, int64_t window_ns);

// Its entry in the pass table; its result is in its slot (a.results).
inline constexpr std::string_view kAttributionPass = "attribution";
Pass AttributionPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_ATTRIBUTION_H_
