// The rank whose late arrival at collectives kept the others waiting, and
// which segment of its own step made it late (issue 36, build 2): across the
// ranks of one job, calls matched by (group, seq) as the scale-out merge
// matches them (scaleout/merge.h: a call ends on every rank at once, so the
// rank that arrived last has the shortest call; clocks are never compared
// across ranks). For each rank the merge names a straggler, its lead-in to
// each call it was late to (from the end of the group's previous call to
// this call's start, on its own clock) against the other ranks' lead-ins to
// the same calls: how much longer, and how much of that its compute kernels
// filled (its own work was slower) or did not (its device idled: its host,
// data loading, a pause).
#ifndef OPSCOPE_ANALYZE_LATE_ARRIVALS_H_
#define OPSCOPE_ANALYZE_LATE_ARRIVALS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analyze/scaleout/merge.h"
#include "analyze/scaleout/summary.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct LeadIn {
  int64_t lead_ns = 0;     // from the group's previous call's end to this call's start
  int64_t compute_ns = 0;  // compute kernels' time (their union) inside it
};
using LeadIns = std::map<std::pair<std::string, int64_t>, LeadIn>;  // (group, seq) ->

// Each collective call of the summary (but each group's first, which has no
// previous call) with its lead-in on this rank's model.
LeadIns LeadInsOf(const TraceModel& model, const RankTraceSummary& summary);

struct LateRank {
  int rank = -1;
  int64_t late_calls = 0, calls = 0;  // calls it arrived last at, late; the job's calls
  int64_t caused_wait_ns = 0, median_gap_ns = 0;
  double share_pct = 0;  // of all the ranks' collective wait
  // Means over its late calls with a lead-in: its own, and the other ranks'.
  int64_t lead_ns = 0, others_lead_ns = 0, compute_ns = 0, others_compute_ns = 0;
  int64_t measured = 0;  // late calls with a lead-in on it and another rank
  // Its lead-in beyond the others' was mostly compute: its own work is slower.
  bool compute_made_late = false;
};

struct LateArrivals {
  std::vector<LateRank> ranks;  // the merge's stragglers, most caused wait first
  int64_t threshold_ns = 0;     // the gap from which a call counts as late
};

// `leads`: each rank's LeadInsOf. Empty where the merge names no straggler.
LateArrivals FindLateArrivals(const ScaleOutResult& merged, const std::map<int, LeadIns>& leads);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_LATE_ARRIVALS_H_
