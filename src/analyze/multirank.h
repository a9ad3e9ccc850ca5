// Traces of several ranks of one job, summarized one at a time (so the
// cluster's traces never need to be in memory together) and compared: step
// time per rank, the slow rank, and how much communication overlaps compute.
#ifndef OPSCOPE_ANALYZE_MULTIRANK_H_
#define OPSCOPE_ANALYZE_MULTIRANK_H_

#include <string>
#include <vector>

#include "analyze/passes/steps.h"
#include "analyze/reported.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct RankSummary {
  int rank = -1;  // from distributedInfo, else the trace's position
  std::string path;
  int64_t steps = 0, mean_step_ns = 0;  // complete steps (passes/steps.h) and their mean
  int64_t all_steps = 0;                // every ProfilerStep span
  int64_t compute_ns = 0, communication_ns = 0;
  int64_t overlap_ns = 0;  // communication time during which compute ran too
  // The rank left a timeline (events); false: only its producer's summaries
  // (a step breakdown, communication records), which the ranks' other tables
  // hold, so this row's timeline figures do not apply.
  bool timeline = true;
};

// The rank a trace's own metadata names (Kineto's distributedInfo "rank"); -1
// none.
int DistributedRank(const TraceModel& model);

// `steps`: the trace's complete steps where its analysis has them (the steps
// pass ran); null: computed here.
RankSummary SummarizeRank(const TraceModel& model, int fallback_rank,
                          const StepSummary* steps = nullptr);

struct RankComparison {
  std::vector<RankSummary> ranks;  // by rank
  int slow_rank = -1;
  double slow_pct = 0;  // its mean step time above the median rank's
};

RankComparison CompareRanks(std::vector<RankSummary> ranks);

// Ranks compared by torch_npu's step_trace_time.csv, as msprof-analyze's
// cluster step breakdown does: each rank's means over its steps; the slow rank
// has the longest mean step (computing + communication not overlapped + free),
// and the component that makes it slow is the one whose mean exceeds the
// median over ranks by the most.
struct StepRankInput {
  int rank = -1;
  std::string path;
  const std::vector<ReportedStep>* steps = nullptr;
  // The communication groups the rank recorded (profiler_metadata.json's
  // parallel_group_info); null or empty: none.
  const std::vector<ReportedGroup>* groups = nullptr;
};

struct StepRankMeans {
  int rank = -1;
  std::string path;
  int64_t steps = 0;  // rows with the three step components
  int64_t step_ns = 0, computing_ns = 0, comm_not_overlapped_ns = 0, free_ns = 0;
  int64_t bubble_ns = -1, preparing_ns = -1;  // -1: not in the file
};

// A pipeline stage: the ranks at one position of the pipeline-parallel
// groups (role "pp": each group's ranks, sorted, are its stages in order, as
// msprof-analyze maps them), with the means of their step means.
struct StageMeans {
  int stage = -1;
  std::vector<int> ranks;
  int64_t step_ns = 0, computing_ns = 0, comm_not_overlapped_ns = 0, free_ns = 0;
  int64_t bubble_ns = -1;  // -1: not in the files
};

struct ReportedStepRanks {
  std::vector<StepRankMeans> ranks;  // by rank
  int slow_rank = -1;
  double slow_pct = 0;                   // its mean step above the median of the ranks' means
  std::string slow_component;            // "computing", "communication not overlapped" or "free"
  int64_t slow_component_excess_ns = 0;  // over the median rank's
  // Pipeline stages, where the ranks recorded pp groups and two or more
  // stages have ranks with steps; the stage that computes longest, and by
  // how much more than the one that computes least (the others wait for it
  // in the pipeline's bubbles).
  std::vector<StageMeans> stages;
  int slow_stage = -1;
  int64_t stage_imbalance_ns = 0;
};

// Ranks without a usable row are left out; fewer than two ranks give no slow rank.
ReportedStepRanks CompareReportedSteps(const std::vector<StepRankInput>& inputs);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_MULTIRANK_H_
