// Analysis pass "launch": Kernel launches: how short the kernels are and how long each waits after
// its launch call (launch-bound when many are short and the device mostly idles).
#ifndef OPSCOPE_ANALYZE_PASSES_LAUNCH_H_
#define OPSCOPE_ANALYZE_PASSES_LAUNCH_H_

#include <cstdint>

#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct LaunchBound {
  int64_t kernels = 0;
  int64_t median_kernel_ns = 0;
  double busy_pct = 0;
  int64_t launch_delay_p50_ns = -1, launch_delay_p90_ns = -1;  // launch call to kernel start
  bool launch_bound = false;  // many short kernels and a mostly idle device
};

LaunchBound ComputeLaunchBound(const TraceModel& model, double busy_pct);

// Its entry in the pass table.
Pass LaunchPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_LAUNCH_H_
