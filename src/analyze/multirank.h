// Traces of several ranks of one job, summarized one at a time (so the
// cluster's traces never need to be in memory together) and compared: step
// time per rank, the slow rank, and how much communication overlaps compute.
#ifndef OPSCOPE_ANALYZE_MULTIRANK_H_
#define OPSCOPE_ANALYZE_MULTIRANK_H_

#include <string>
#include <vector>

#include "analyze/trace_model.h"

namespace opscope::analyze {

struct RankSummary {
  int rank = -1;  // from distributedInfo, else the trace's position
  std::string path;
  int64_t steps = 0, mean_step_ns = 0;  // complete steps (passes/steps.h) and their mean
  int64_t all_steps = 0;                // every ProfilerStep span
  int64_t compute_ns = 0, communication_ns = 0;
  int64_t overlap_ns = 0;  // communication time during which compute ran too
};

RankSummary SummarizeRank(const TraceModel& model, int fallback_rank);

struct RankComparison {
  std::vector<RankSummary> ranks;  // by rank
  int slow_rank = -1;
  double slow_pct = 0;  // its mean step time above the median rank's
};

RankComparison CompareRanks(std::vector<RankSummary> ranks);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_MULTIRANK_H_
