// Analysis pass "device_busy": Is the device busy, and what fills its idle gaps (host-bound,
// synchronization, data loading)?
#ifndef OPSCOPE_ANALYZE_PASSES_DEVICE_BUSY_H_
#define OPSCOPE_ANALYZE_PASSES_DEVICE_BUSY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct IdleGap {
  int64_t begin_ns, duration_ns;
  std::string cause;     // "host-bound", "synchronization wait", "data loading", "no host activity"
  std::string evidence;  // the host events behind the cause
};

struct DeviceBusy {
  bool has_device = false;
  int64_t window_begin_ns = 0, window_end_ns = 0;  // from the first to the last device event
  int64_t busy_ns = 0;
  double busy_pct = 0;
  std::vector<IdleGap> gaps;         // the longest first
  std::vector<double> timeline_pct;  // busy % per equal slice of the window
};

// Gaps shorter than min_gap_ns are not listed; at most max_gaps are.
DeviceBusy ComputeDeviceBusy(const TraceModel& model, int64_t min_gap_ns = 50000,
                             size_t max_gaps = 10, int slices = 50);

// Its entry in the pass table.
Pass DeviceBusyPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_DEVICE_BUSY_H_
