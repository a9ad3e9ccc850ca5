// What a host runtime call does to the host and its device, for the passes
// that follow the host's waits (attribution, critical_path): its kind by name,
// whether a copy call blocks, and the device task each call launched (by the
// correlation id the two share).
#ifndef OPSCOPE_ANALYZE_RUNTIME_CALLS_H_
#define OPSCOPE_ANALYZE_RUNTIME_CALLS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analyze/flat_map.h"
#include "analyze/mapped.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

// What a runtime call is, by its name (the event may refine it: CopyBlocks).
enum class RuntimeKind : uint8_t { kUnknown, kLaunch, kBlocked, kAsyncCopy, kSetup, kCompile };
RuntimeKind RuntimeKindOf(std::string_view name);
// A call that enqueues on its stream a wait for an event recorded elsewhere
// (cudaStreamWaitEvent, hipStreamWaitEvent, aclrtStreamWaitEvent): a launch
// for RuntimeKindOf, the host goes on.
bool IsStreamWaitEvent(std::string_view name);

// Whether an asynchronous copy call blocks its host all the same: its copy is
// to or from pageable memory, or to host memory not known to be pinned (CUDA's
// "API synchronization behavior"). `task` is the copy it launched.
bool CopyBlocks(const TraceModel& model, size_t task);

// Correlation id -> the first of the kept events that carries it. The ids are
// a producer's counter, so where their range allows (at most four slots per
// event) a direct table, else a hash map.
class CorrelationIndex {
 public:
  template <typename Keep>
  CorrelationIndex(const TraceModel& model, Keep&& keep) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    size_t n = 0;
    for (size_t e = 0; e < model.size(); ++e) {
      if (model.correlation[e] < 0 || !keep(e)) continue;
      lo = std::min(lo, model.correlation[e]), hi = std::max(hi, model.correlation[e]);
      ++n;
    }
    if (n == 0) return;
    dense_ = static_cast<uint64_t>(hi - lo) < 4 * n + 1024;
    lo_ = lo;
    if (dense_) table_.assign(static_cast<size_t>(hi - lo) + 1, 0);
    for (size_t e = 0; e < model.size(); ++e) {
      if (model.correlation[e] < 0 || !keep(e)) continue;
      uint32_t& t = dense_ ? table_[static_cast<size_t>(model.correlation[e] - lo)]
                           : map_[model.correlation[e]];
      if (t == 0) t = static_cast<uint32_t>(e + 1);
    }
  }
  // The event, or SIZE_MAX.
  size_t Find(int64_t correlation) const;

 private:
  bool dense_ = false;
  int64_t lo_ = 0;
  MappedVector<uint32_t> table_;
  Int64Map<uint32_t> map_;
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_RUNTIME_CALLS_H_
