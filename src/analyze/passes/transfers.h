// Analysis pass "transfers": How much device time goes into memory copies, by direction, and at
// what bandwidth.
#ifndef OPSCOPE_ANALYZE_PASSES_TRANSFERS_H_
#define OPSCOPE_ANALYZE_PASSES_TRANSFERS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct TransferStats {
  std::string direction;  // "HtoD", "DtoH", "DtoD", "PtoP", "HtoH", "other"
  int64_t count = 0, bytes = -1, total_ns = 0;
  // The host end's memory, as the trace records it (CopyInfo): the copies
  // from or to pinned and pageable memory; "pinned", "pageable", "mixed",
  // "managed" or "" (not recorded, or not a host copy).
  int64_t pinned = 0, pageable = 0;
  // Of them, unified (managed) memory the driver migrated: page faults and
  // prefetches, not copies the program made; pinning is no lever for them.
  int64_t managed = 0;
  std::string host_memory;
  double share_of_device_pct = 0;
  double gbps = 0;  // bytes / time, when bytes are known
  // Copies that ended before the device computed anything (its first compute
  // kernel): a one-off upload (weights, the first batch), not step work.
  int64_t before_compute = 0, before_compute_ns = 0;
  // The wall time during which at least one of the other copies runs (copies
  // on several engines or devices overlap: their summed time can exceed it).
  int64_t steady_wall_ns = 0;
};

std::vector<TransferStats> ComputeTransfers(const TraceModel& model);

// Whether pinning host memory is advice for copies of which `pageable` use
// pageable and `pinned` pinned memory: where pageable ones are more than a
// tenth of them (4 pageable of 450 leave pinning no lever).
inline bool PinningHelps(int64_t pinned, int64_t pageable) {
  return pageable > 0 && 10 * pageable > pinned + pageable;
}

// Whether `managed` of `count` copies make them unified memory's migrations
// (more than half), to be prefetched rather than pinned.
inline bool MostlyMigrations(int64_t managed, int64_t count) {
  return managed > 0 && 2 * managed > count;
}

// The advice for unified memory's migrations, after "; ".
inline constexpr const char* kPrefetchAdvice =
    "unified memory (cudaMallocManaged) that the driver migrates where it is touched: "
    "prefetch it to where the kernels use it before they run (cudaMemPrefetchAsync, "
    "cudaMemAdvise) or allocate it on the device and copy it once";

// Its entry in the pass table (with its table and rule); its result, the
// copies by direction, is its slot of Analysis::results.
inline constexpr std::string_view kTransfersPass = "transfers";
Pass TransfersPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_TRANSFERS_H_
