// Comparing two traces of the same program: did it get faster, and where.
#ifndef OPSCOPE_ANALYZE_DIFF_H_
#define OPSCOPE_ANALYZE_DIFF_H_

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

struct TraceDiff {
  std::string basis;  // what "time" means: "mean step" or "trace span"
  int64_t before_ns = 0, after_ns = 0;
  double change_pct = 0;  // positive: slower
  int64_t before_steps = 0, after_steps = 0;
  std::vector<OpDelta> operators;  // the largest absolute change first
};

// Time is the mean ProfilerStep duration when both traces have steps, else the
// span from the first to the last event.
TraceDiff DiffTraces(const TraceModel& before, const TraceModel& after);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_DIFF_H_
