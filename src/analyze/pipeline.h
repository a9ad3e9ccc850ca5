// Runs every registered analysis pass over one trace model.
#ifndef OPSCOPE_ANALYZE_PIPELINE_H_
#define OPSCOPE_ANALYZE_PIPELINE_H_

#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

// Resolves the ceilings, then runs the passes. Given (measured) ceilings apply
// only to a trace of the device they were measured on (by name: Kineto's
// deviceProperties, opscope's otherData.devices); otherwise the datasheet
// figures of a known device the trace names; otherwise none, and
// Analysis::ceilings_note says why. Then
// runs the passes, each once its needs are done, up to options.threads at a
// time. The result does not depend on the thread count. A pass that throws
// ends the pipeline with its error, after the passes running have finished.
Analysis AnalyzeTrace(const TraceModel& model, const AnalysisOptions& options = {});

// The passes in an order that runs every pass after its needs; throws
// Error(kInternal) for an unknown need or a cycle (tested over Passes()).
std::vector<const Pass*> PassOrder(const std::vector<Pass>& passes);

// The name of the device a trace's compute ran on, as it records it; "" when unknown.
std::string TraceDeviceName(const TraceModel& model, ComputeOn on);
// "" when `ceilings` apply to the trace, else why not.
std::string CeilingsApplicability(const RooflineCeilings& ceilings, const TraceModel& model,
                                  ComputeOn on);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PIPELINE_H_
