// Analysis pass "layout": How much time goes into layout conversions (TransData, contiguous,
// permute, copies and format casts), on the host and on the device.
#ifndef OPSCOPE_ANALYZE_PASSES_LAYOUT_H_
#define OPSCOPE_ANALYZE_PASSES_LAYOUT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct LayoutShare {
  int64_t host_ns = 0, device_ns = 0;                // time in layout conversions
  double host_pct = 0, device_pct = 0;               // of host operator time / device time
  std::vector<std::pair<std::string, int64_t>> top;  // operator and its time
};

// TransData, contiguous, permute/transpose, copy_/clone and format casts.
LayoutShare ComputeLayoutShare(const TraceModel& model);

// Its entry in the pass table.
Pass LayoutPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_LAYOUT_H_
