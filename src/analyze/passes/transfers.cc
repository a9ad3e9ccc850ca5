#include "analyze/passes/transfers.h"

#include <algorithm>
#include <map>

#include "analyze/analysis.h"

namespace opscope::analyze {

std::vector<TransferStats> ComputeTransfers(const TraceModel& model) {
  std::map<std::string, TransferStats> by_direction;
  int64_t device_total = 0;
  for (size_t e = 0; e < model.size(); ++e) {
    if (!IsDevice(model.cls[e])) continue;
    device_total += model.duration_ns[e];
    if (model.cls[e] != EventClass::kMemcpy) continue;
    const CopyInfo copy = model.Copy(e);
    const std::string direction = Name(copy.direction);
    TransferStats& t = by_direction[direction];
    t.direction = direction;
    ++t.count;
    t.pinned += copy.host_memory == HostMemory::kPinned;
    t.pageable += copy.host_memory == HostMemory::kPageable;
    if (copy.host_memory == HostMemory::kManaged) t.host_memory = "managed";
    t.total_ns += model.duration_ns[e];
    if (model.bytes[e] >= 0) t.bytes = std::max<int64_t>(t.bytes, 0) + model.bytes[e];
  }
  std::vector<TransferStats> out;
  for (auto& [direction, t] : by_direction) {
    if (t.pinned > 0 || t.pageable > 0) {
      t.host_memory = t.pageable == 0 ? "pinned" : t.pinned == 0 ? "pageable" : "mixed";
    }
    t.share_of_device_pct = device_total > 0 ? 100.0 * static_cast<double>(t.total_ns) /
                                                   static_cast<double>(device_total)
                                             : 0;
    t.gbps = t.bytes > 0 && t.total_ns > 0
                 ? static_cast<double>(t.bytes) / static_cast<double>(t.total_ns)
                 : 0;
    out.push_back(t);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  return out;
}

Pass TransfersPass() {
  return {"transfers",
          "How much device time goes into memory copies, and how fast are they?",
          {},
          [](const TraceModel& model, Analysis& a) { a.transfers = ComputeTransfers(model); }};
}

}  // namespace opscope::analyze
