// Analysis pass "device_time": all device event time, and the share of it in
// fp32 GEMM kernels (sgemm), for the advisor's mixed-precision rule.
#ifndef OPSCOPE_ANALYZE_PASSES_DEVICE_TIME_H_
#define OPSCOPE_ANALYZE_PASSES_DEVICE_TIME_H_

#include "analyze/passes/pass.h"

namespace opscope::analyze {

Pass DeviceTimePass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_DEVICE_TIME_H_
