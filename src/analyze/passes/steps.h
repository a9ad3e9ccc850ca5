// Analysis pass "steps": What fills each step (compute, communication, copies
// and idle time on the trace's compute device inside each ProfilerStep span),
// and which steps are fit to be averaged.
//
// A step is not averaged when it is
//  - "empty": no compute work overlaps it and no operator starts inside it (a
//    span left open after the last iteration);
//  - "partial": the last step, shorter than half the median of the others and
//    with fewer than half as many operators and device events starting in it as
//    their median: the trace ended inside it (a step that is only faster runs
//    as many operators);
//  - "overrun": a step that ends more than kOverrunSlackNs after the
//    producer stopped recording (TraceModel::recording_end_ns): the trace did
//    not see it end (Kineto closes the last step before it stops);
//  - "warm-up": a leading step longer than kWarmupRatio times the median of the
//    complete steps after it (at least two of them), checked from the first
//    step on until one is not; at most half the steps are marked so.
//  - "queue-filling": a leading step (checked from the first on, until one is
//    not; at most half the steps, among the first kMaxQueueFillingSteps: a
//    launch queue holds a few steps' work) at most kQueueFillRatio times the median
//    of the complete steps after it (at least two), in which the host got
//    ahead of the device by half what it is short of that median or more
//    (the end of the device work launched in it, by correlation id, past
//    the step's end, less that of the work launched before it past its
//    start): the host ran ahead filling the launch queue, and what the step
//    seems to save the device spent after it (a device trace only:
//    MarkQueueFillingSteps).
// The rest are "complete": means, medians and diffs use only these.
#ifndef OPSCOPE_ANALYZE_PASSES_STEPS_H_
#define OPSCOPE_ANALYZE_PASSES_STEPS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analyze/intervals.h"
#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

inline constexpr double kWarmupRatio = 1.5;
inline constexpr double kPartialRatio = 0.5;
inline constexpr double kQueueFillRatio = 0.9;
inline constexpr size_t kMaxQueueFillingSteps = 8;

struct StepBreakdown {
  std::string name;
  int64_t begin_ns = 0, duration_ns = 0;
  // Time within the step on the compute device (the device, or the CPU threads
  // running operators when the trace has no device work).
  int64_t compute_ns = 0, communication_ns = 0, memory_ns = 0, idle_ns = 0;
  // The same time split without overlap, so that the four parts add up to the
  // step: communication not overlapped by compute, copies and sets overlapped
  // by neither. compute_ns + communication_exposed_ns + memory_exposed_ns +
  // idle_ns == duration_ns.
  int64_t communication_exposed_ns = 0, memory_exposed_ns = 0;
  bool has_work = false;  // compute work overlaps it, or an operator starts inside it
  int64_t events = 0;     // operators and device events starting inside it
  std::string status;     // "complete", "warm-up", "partial", "empty", "overrun", "queue-filling"
  std::string status_reason;  // why it is not complete
};

struct StepSummary {
  std::string compute_on;  // "device", "cpu" or "none": what compute_ns measures
  // Where the steps come from: empty, the trace's own step spans; else the
  // kernel whose launches mark them (InferSteps).
  std::string inferred_from;
  bool inferred_on_host = false;  // ... a framework operator's calls (no device work)
  int64_t tasks_per_step = 0;     // inferred steps: the median tasks in one
  int64_t steps = 0, complete = 0;
  // Of the complete steps only.
  int64_t mean_ns = 0, median_ns = 0, min_ns = 0, max_ns = 0;
  std::vector<int64_t> durations_ns;  // the complete steps' durations, in order
};

// Steps of a trace that records none, read from its device work (issue 36):
// a loop launches the same work each iteration, so a kernel launched once per
// iteration marks where each one starts. On the device with the most tasks,
// the kernel chosen is the one launched the fewest times (at least
// kMinInferredSteps + 1) such that between its consecutive launches
//  - the device runs at least kMinStepTasks tasks (median), so a layer of a
//    model (tens of kernels, repeated within one forward) is not taken for
//    an iteration;
//  - the number of tasks is within 10% of that median in 90% of the
//    intervals, and no interval but the first, nor the work after the last
//    launch, runs more than 1.5 times it (a kernel of the forward pass's
//    layers alone leaves the backward in one interval, or after the last);
//  - the intervals hold two thirds of the device's tasks or more (a kernel
//    of one backward pass's layers leaves its forward outside them);
//  - half the intervals or more run exactly the same tasks (the same names,
//    as often: compared by a sum of the names' hashes).
// Of the kernels launched that many times, the one whose intervals agree most
// often, then the one launched first. Each step runs from one launch's start
// to the next one's; the work before the first (start-up) and after the last
// (an iteration the trace may cut off) is in no step. Empty: no kernel
// qualifies, or the trace records steps.
struct InferredSteps {
  std::string kernel;          // the marker's name
  bool on_host = false;        // a trace without device work: the marker is a framework operator
  int64_t tasks_per_step = 0;  // median tasks between two launches
  std::vector<std::pair<int64_t, int64_t>> spans;  // (begin, duration), in time order
};
inline constexpr int64_t kMinInferredSteps = 6, kMinStepTasks = 100;
// A trace without device work: the same, over the framework operators of the
// thread that runs the most (the outermost ones, an operator inside another
// counting in it), a marker being an operator, an iteration kMinHostStepOps
// of them or more, within 20% of the median in 90% of the intervals, the
// intervals' names not compared (a µs clock and the first step's gradient
// creation make them vary by a few).
inline constexpr int64_t kMinHostStepOps = 20;
InferredSteps InferSteps(const TraceModel& model);

// One row per ProfilerStep#N span on the host (or inferred step), in time
// order, with status.
std::vector<StepBreakdown> ComputeSteps(const TraceModel& model);

// Sets each step's status and reason from durations, events, has_work and
// the recording's end (the rules above; INT64_MAX: unknown), in place; steps
// must be in time order.
void ClassifySteps(std::vector<StepBreakdown>& steps, int64_t recording_end_ns = INT64_MAX);

// Marks the leading complete steps that only filled the launch queue (the
// rule above) on a trace whose compute device is a device; after
// ClassifySteps.
void MarkQueueFillingSteps(const TraceModel& model, std::vector<StepBreakdown>& steps);

// The complete steps' statistics.
StepSummary SummarizeSteps(const std::vector<StepBreakdown>& steps);

// The spans of the complete steps, merged (sorted, disjoint): the window the
// analyses that judge steady steps read; empty where no step is complete.
Intervals CompleteStepSpans(const std::vector<StepBreakdown>& steps);

// The window an analysis judges: the complete steps' spans, else (none is
// complete) the trace's span; empty where both are.
Intervals StepsElseSpan(const std::vector<StepBreakdown>& steps, const TraceSpan& span);

// Its entry in the pass table.
Pass StepsPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_STEPS_H_
