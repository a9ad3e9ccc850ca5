// Scale-out analysis run in one process: stage 1 (a summary per trace,
// summary.h) on threads, a trace at a time per thread, then stage 2
// (merge.h). The MPI driver (src/mpi/) runs the same two functions in
// several processes; `opscope analyze --summary-only` and `opscope merge`
// run them by hand. Each path hands the merge the same serialized
// summaries, so all give the same result.
#ifndef OPSCOPE_ANALYZE_SCALEOUT_SCALEOUT_H_
#define OPSCOPE_ANALYZE_SCALEOUT_SCALEOUT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/analyze_files.h"
#include "analyze/scaleout/merge.h"
#include "analyze/scaleout/summary.h"
#include "analyze/trace_inputs.h"

namespace opscope::analyze {

struct SummarizeOptions {
  std::optional<RooflineCeilings> ceilings;
  int threads = 1;  // traces summarised at once
  // Cores this process may use (0: every core); each trace at once gets an
  // even share for its import and passes. Several processes on one machine
  // (MPI) divide the machine's cores between them.
  int cores = 0;
};

// Stage 1 for every trace; positions[i] (i when `positions` is empty) is
// traces[i]'s rank when nothing names one. Returns each one's summary as a
// file holds it (CompressSummary(SerializeSummary(...))), in order. Side files that could not be
// read are added to `unused`. The first error, in that order, is rethrown.
std::vector<std::string> SummarizeTraces(const std::vector<TraceInput>& traces,
                                         const std::vector<size_t>& positions,
                                         const SummarizeOptions& options,
                                         std::vector<UnusedFile>& unused);

// Stage 2 over summaries as files hold them (or plain JSON; `names[i]`
// names documents[i] in errors), each parsed, folded in and dropped.
ScaleOutResult MergeSummaryDocuments(const std::vector<std::string_view>& documents,
                                     const std::vector<std::string>& names);

// Stage 2 over summary files, read one at a time.
ScaleOutResult MergeSummaryFiles(const std::vector<std::string>& paths);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_SCALEOUT_SCALEOUT_H_
