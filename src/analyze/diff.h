// Comparing two traces of the same program as a measurement: did it get
// slower beyond the noise between steps, and where.
#ifndef OPSCOPE_ANALYZE_DIFF_H_
#define OPSCOPE_ANALYZE_DIFF_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/passes/op_stats.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct OpDelta {
  std::string name;
  EventClass cls;
  int64_t before_count = 0, after_count = 0;
  int64_t before_ns = 0, after_ns = 0;  // total time
  std::string change;     // "added", "removed", "faster", "slower", "same" (within 2%)
  double change_pct = 0;  // of the before total; 0 when added or removed
};

// Fewer complete steps than this on either side: no noise estimate.
inline constexpr int kMinStepsForInterval = 3;

struct TraceDiff {
  // What "time" means: "median complete step" when both traces have complete
  // steps (passes/steps.h: no warm-up, partial or empty steps), else "trace span".
  std::string basis;
  int64_t before_ns = 0, after_ns = 0;
  double change_pct = 0;                               // positive: slower
  int64_t before_steps = 0, after_steps = 0;           // complete steps compared
  int64_t before_all_steps = 0, after_all_steps = 0;   // every step span
  std::vector<int64_t> before_step_ns, after_step_ns;  // the complete steps, in order
  // With kMinStepsForInterval complete steps on each side: a 95% bootstrap
  // confidence interval of the change of the median (2000 resamples, fixed
  // seed) and the two-sided Mann-Whitney U test's p-value (normal approximation
  // with tie correction).
  bool has_interval = false;
  double ci_low_pct = 0, ci_high_pct = 0;
  double p_value = -1;
  std::string verdict;  // "slower", "faster", "no change beyond noise", "noise unknown: ..."
  std::vector<OpDelta> operators;  // the largest absolute change first
};

TraceDiff DiffTraces(const TraceModel& before, const TraceModel& after);

// The statistics alone, on two samples of step times.
void CompareSamples(const std::vector<int64_t>& before, const std::vector<int64_t>& after,
                    TraceDiff& d);
double MannWhitneyP(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// Whether the gate `--fail-if-slower threshold_pct` fails: the change is above
// the threshold and, when the noise is known, the whole confidence interval is
// above zero (a slowdown beyond noise).
bool Regressed(const TraceDiff& d, double threshold_pct);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_DIFF_H_
