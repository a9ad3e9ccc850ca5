// Runs every registered analysis pass over one trace model.
#ifndef OPSCOPE_ANALYZE_PIPELINE_H_
#define OPSCOPE_ANALYZE_PIPELINE_H_

#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

// Resolves the ceilings (given, else those of a device the trace names), then
// runs the passes, each once its needs are done, up to options.threads at a
// time. The result does not depend on the thread count. A pass that throws
// ends the pipeline with its error, after the passes running have finished.
Analysis AnalyzeTrace(const TraceModel& model, const AnalysisOptions& options = {});

// The passes in an order that runs every pass after its needs; throws
// Error(kInternal) for an unknown need or a cycle (tested over Passes()).
std::vector<const Pass*> PassOrder(const std::vector<Pass>& passes);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PIPELINE_H_
