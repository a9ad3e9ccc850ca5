// Analysis pass "long_tail": Which operators have a long tail: p99 far above their median.
#ifndef OPSCOPE_ANALYZE_PASSES_LONG_TAIL_H_
#define OPSCOPE_ANALYZE_PASSES_LONG_TAIL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/passes/op_stats.h"
#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct LongTail {
  std::string name;
  EventClass cls;
  int64_t count, p50_ns, p99_ns, max_ns;
  double ratio;  // p99 / p50
  // A host call that waits for the device (IsSyncCall) on a device trace:
  // the union of its calls, and the part of it the device was working
  // (MeasureWaits), and of that the part a collective or point-to-point task
  // (EventClass::kCommunication) ran on it; -1 where not measured.
  int64_t wait_ns = -1, device_busy_ns = -1, device_comm_ns = -1;
};

// Each waiting call's union and the device's work during it, over `model`.
void MeasureWaits(const TraceModel& model, std::vector<LongTail>& tail);

// Operators called at least 10 times whose p99 is at least 3x their median,
// from the operator statistics (steps left out).
std::vector<LongTail> ComputeLongTail(const std::vector<OpStats>& operators);

// Its entry in the pass table (with its table and rule); its result is its
// slot of Analysis::results.
inline constexpr std::string_view kLongTailPass = "long_tail";
Pass LongTailPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_LONG_TAIL_H_
