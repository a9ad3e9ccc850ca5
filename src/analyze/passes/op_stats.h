// Operator statistics: per name and class, count, self and total time, mean,
// p50, p99, max, and a share with one denominator per kind of row: a framework
// operator's self time as a share of all framework operators' self time (the
// shares add up to 100%); a kernel's, copy's or set's time as a share of all
// device time; no share (-1) for steps, annotations, runtime calls and the
// rest, which are not operators.
#ifndef OPSCOPE_ANALYZE_PASSES_OP_STATS_H_
#define OPSCOPE_ANALYZE_PASSES_OP_STATS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/mapped.h"
#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct OpStats {
  std::string name;
  EventClass cls;
  int64_t count = 0;
  int64_t total_ns = 0, p50_ns = 0, p99_ns = 0, max_ns = 0;
  // Self time (SelfTimes): the total less the time of calls nested inside each
  // call on the same thread (device work does not nest: its self is its total).
  int64_t self_ns = 0;
  double mean_ns = 0;
  double share_pct = -1;           // see above; -1 not applicable
  int64_t flops = -1, bytes = -1;  // summed where every call reports them
};

// Device tasks grouped by operator type (TraceModel::op_type).
struct TypeStats {
  std::string type;
  int64_t count = 0, total_ns = 0;
  int64_t names = 0;     // distinct kernel names of the type
  double share_pct = 0;  // of all device time
};

// The device kernels by operator type where the trace records types
// (TraceModel::op_type), the longest first; empty where none has one.
std::vector<TypeStats> ComputeKernelTypes(const TraceModel& model);

// Sorted by self time, longest first, then by total time. Derived rows and
// spans of the whole trace (class kOther) are left out.
std::vector<OpStats> ComputeOpStats(const TraceModel& model);
// The same with each event's self time given (SelfTimes).
std::vector<OpStats> ComputeOpStats(const TraceModel& model, std::span<const int64_t> self);

// Each event's self time. A host event's (operator, annotation, step, runtime
// call, Python frame): the time during which it is the innermost event open on
// its track, the one opened last (by start, the longer first). For calls that
// nest properly this is the duration less the nested calls'; where timestamps
// overlap unevenly (rounded microseconds) every instant still goes to exactly
// one event, so a track's self times add up to its busy time. A device event's
// self time is its duration: device work does not nest.
MappedVector<int64_t> SelfTimes(const TraceModel& model);

// Nearest-rank p50 and p99 (the value of rank ceil(P/100 * n) among the n
// sorted values, 1-based), and the maximum, of `values` (reordered).
void Percentiles(std::span<int64_t> values, int64_t& p50, int64_t& p99, int64_t& max);

// Its entry in the pass table.
// The family of a framework operator ("aten::addmm": "Matrix multiplies",
// convolutions, data movement, normalisations, random number generation);
// "" for others and for operators outside aten.
std::string OperatorFamily(std::string_view op);
// OperatorFamily's data-movement family, and what to do where it leads a CPU
// trace (one sentence, ending with a stop).
inline constexpr std::string_view kDataMovementFamily = "Data movement (copies, cat, gather)";
inline constexpr std::string_view kCopyLessAdvice =
    "keep tensors in the dtype and layout their consumers want (no .contiguous() after a "
    "transpose, no .to(dtype) or .clone() in the loop where the consumer accepts the tensor as it "
    "is), write into preallocated buffers (out= arguments, in-place operators) instead of fresh "
    "copies, and move data once, outside the loop.";

Pass OpStatsPass();

// The pass that works out SelfTimes once for the passes that read it
// (op_stats, op_device): a scratch result, dropped when they have finished.
inline constexpr std::string_view kSelfTimesPass = "self_times";
Pass SelfTimesPass();
// Its result; throws Error(kInternal) when it has not run (a pass that reads
// it must name it in its needs).
std::span<const int64_t> SelfTimesOf(const Analysis& analysis);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_OP_STATS_H_
