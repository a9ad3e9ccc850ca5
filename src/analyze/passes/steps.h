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
//  - "warm-up": a leading step longer than kWarmupRatio times the median of the
//    complete steps after it (at least two of them), checked from the first
//    step on until one is not; at most half the steps are marked so.
// The rest are "complete": means, medians and diffs use only these.
#ifndef OPSCOPE_ANALYZE_PASSES_STEPS_H_
#define OPSCOPE_ANALYZE_PASSES_STEPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

inline constexpr double kWarmupRatio = 1.5;
inline constexpr double kPartialRatio = 0.5;

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
  bool has_work = false;      // compute work overlaps it, or an operator starts inside it
  int64_t events = 0;         // operators and device events starting inside it
  std::string status;         // "complete", "warm-up", "partial", "empty"
  std::string status_reason;  // why it is not complete
};

struct StepSummary {
  std::string compute_on;  // "device", "cpu" or "none": what compute_ns measures
  int64_t steps = 0, complete = 0;
  // Of the complete steps only.
  int64_t mean_ns = 0, median_ns = 0, min_ns = 0, max_ns = 0;
  std::vector<int64_t> durations_ns;  // the complete steps' durations, in order
};

// One row per ProfilerStep#N span on the host, in time order, with status.
std::vector<StepBreakdown> ComputeSteps(const TraceModel& model);

// Sets each step's status and reason from durations, events and has_work (the rules
// above), in place; steps must be in time order.
void ClassifySteps(std::vector<StepBreakdown>& steps);

// The complete steps' statistics.
StepSummary SummarizeSteps(const std::vector<StepBreakdown>& steps);

// Its entry in the pass table.
Pass StepsPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_STEPS_H_
