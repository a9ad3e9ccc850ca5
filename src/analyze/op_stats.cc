#include "analyze/op_stats.h"

#include <algorithm>
#include <map>

namespace opscope::analyze {
namespace {

// Nearest-rank percentile of a sorted sample.
int64_t Rank(const std::vector<int64_t>& sorted, double q) {
  const size_t index = static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

}  // namespace

std::vector<OpStats> ComputeOpStats(const TraceModel& model) {
  std::map<std::pair<uint32_t, EventClass>, std::vector<size_t>> groups;
  std::map<EventClass, int64_t> class_total;
  int64_t device_total = 0;
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    if (cls == EventClass::kDerived || cls == EventClass::kOther) continue;
    groups[{model.name[e], cls}].push_back(e);
    if (IsDevice(cls)) {
      device_total += model.duration_ns[e];
    } else {
      class_total[cls] += model.duration_ns[e];
    }
  }
  std::vector<OpStats> out;
  std::vector<int64_t> durations;
  for (const auto& [key, events] : groups) {
    OpStats s;
    s.name = std::string(model.String(key.first));
    s.cls = key.second;
    s.count = static_cast<int64_t>(events.size());
    durations.clear();
    bool all_flops = true, all_bytes = true;
    int64_t flops = 0, bytes = 0;
    for (const size_t e : events) {
      durations.push_back(model.duration_ns[e]);
      s.total_ns += model.duration_ns[e];
      all_flops &= model.flops[e] >= 0;
      all_bytes &= model.bytes[e] >= 0;
      flops += std::max<int64_t>(model.flops[e], 0);
      bytes += std::max<int64_t>(model.bytes[e], 0);
    }
    std::sort(durations.begin(), durations.end());
    s.mean_ns = static_cast<double>(s.total_ns) / static_cast<double>(s.count);
    s.p50_ns = Rank(durations, 0.5);
    s.p99_ns = Rank(durations, 0.99);
    s.max_ns = durations.back();
    const int64_t domain = IsDevice(s.cls) ? device_total : class_total[s.cls];
    s.share_pct =
        domain > 0 ? 100.0 * static_cast<double>(s.total_ns) / static_cast<double>(domain) : 0;
    if (all_flops) s.flops = flops;
    if (all_bytes) s.bytes = bytes;
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const OpStats& a, const OpStats& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return out;
}

}  // namespace opscope::analyze
