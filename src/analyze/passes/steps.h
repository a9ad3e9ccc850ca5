// Analysis pass "steps": What fills each step: device compute, communication, copies and idle time
// inside each ProfilerStep span.
#ifndef OPSCOPE_ANALYZE_PASSES_STEPS_H_
#define OPSCOPE_ANALYZE_PASSES_STEPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct StepBreakdown {
  std::string name;
  int64_t begin_ns, duration_ns;
  int64_t compute_ns, communication_ns, memory_ns, idle_ns;  // device time within the step
};

// One row per ProfilerStep#N span on the host.
std::vector<StepBreakdown> ComputeSteps(const TraceModel& model);

// Its entry in the pass table.
Pass StepsPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_STEPS_H_
