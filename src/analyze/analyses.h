// Analysis passes over the trace model, each answering one question of the
// method we follow: is the device busy, where do its idle gaps come from, what
// fills each step, how much time goes into transfers and layout conversions,
// which operators have a long tail.
#ifndef OPSCOPE_ANALYZE_ANALYSES_H_
#define OPSCOPE_ANALYZE_ANALYSES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/op_stats.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct Interval {
  int64_t begin, end;
};

// Sorted, non-overlapping union of intervals.
std::vector<Interval> Union(std::vector<Interval> intervals);
// Time the union covers within [begin, end).
int64_t Covered(const std::vector<Interval>& merged, int64_t begin, int64_t end);

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

struct StepBreakdown {
  std::string name;
  int64_t begin_ns, duration_ns;
  int64_t compute_ns, communication_ns, memory_ns, idle_ns;  // device time within the step
};

// One row per ProfilerStep#N span on the host.
std::vector<StepBreakdown> ComputeSteps(const TraceModel& model);

struct TransferStats {
  std::string direction;  // "HtoD", "DtoH", "DtoD", "PtoP", "other"
  int64_t count = 0, bytes = -1, total_ns = 0;
  double share_of_device_pct = 0;
  double gbps = 0;  // bytes / time, when bytes are known
};

std::vector<TransferStats> ComputeTransfers(const TraceModel& model);

struct LayoutShare {
  int64_t host_ns = 0, device_ns = 0;                // time in layout conversions
  double host_pct = 0, device_pct = 0;               // of host operator time / device time
  std::vector<std::pair<std::string, int64_t>> top;  // operator and its time
};

struct LongTail {
  std::string name;
  EventClass cls;
  int64_t count, p50_ns, p99_ns, max_ns;
  double ratio;  // p99 / p50
};

// Operators called at least 10 times whose p99 is at least 3x their median,
// from the operator statistics (steps left out).
std::vector<LongTail> ComputeLongTail(const std::vector<OpStats>& operators);

struct CpuFallback {
  int64_t ai_cpu_count = 0, ai_cpu_ns = 0;  // device tasks run by the AI CPU (Ascend)
  double ai_cpu_share_pct = 0;              // of device time
  std::vector<std::pair<std::string, int64_t>> ai_cpu_top;
  // Host operators of at least 1 ms that launched no device work (a trace with a device).
  std::vector<std::pair<std::string, int64_t>> host_only_ops;
};

CpuFallback ComputeCpuFallback(const TraceModel& model);

struct LaunchBound {
  int64_t kernels = 0;
  int64_t median_kernel_ns = 0;
  double busy_pct = 0;
  int64_t launch_delay_p50_ns = -1, launch_delay_p90_ns = -1;  // launch call to kernel start
  bool launch_bound = false;  // many short kernels and a mostly idle device
};

LaunchBound ComputeLaunchBound(const TraceModel& model, double busy_pct);

struct FusionCandidate {
  std::string producer, consumer;  // e.g. a GEMM kernel followed by an elementwise one
  int64_t count = 0;
  int64_t consumer_ns = 0;  // time the consumers take: what fusion could save at most
};

// Back-to-back (within 5 us, same track) matmul/conv kernels or operators
// followed by an elementwise one, seen at least 3 times.
std::vector<FusionCandidate> ComputeFusionCandidates(const TraceModel& model);

// TransData, contiguous, permute/transpose, copy_/clone and format casts.
LayoutShare ComputeLayoutShare(const TraceModel& model);
bool IsLayoutConversion(std::string_view name);
bool IsCommunication(std::string_view name);

// A name test evaluated once per distinct (interned) name of the model.
std::vector<bool> ClassifyNames(const TraceModel& model, bool (*test)(std::string_view));

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_ANALYSES_H_
