#include "analyze/passes/cpu_fallback.h"

#include <algorithm>
#include <map>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "analyze/names.h"

namespace opscope::analyze {

CpuFallback ComputeCpuFallback(const TraceModel& model) {
  CpuFallback out;
  int64_t device_total = 0;
  std::map<std::string, int64_t> ai_cpu;
  std::map<std::string, std::map<std::string, int64_t>> ai_cpu_types;  // name -> why -> ns
  Intervals launches;  // host calls that put work on the device
  // Counted first: grown by doubling, the vector's last copy held 1.5-3x its
  // size (14 MB at the peak of a 1.4M-event trace's analysis).
  launches.reserve(
      static_cast<size_t>(std::count(model.cls.begin(), model.cls.end(), EventClass::kRuntime)));
  bool has_device = false;
  for (size_t e = 0; e < model.size(); ++e) {
    if (IsDevice(model.cls[e])) {
      has_device = true;
      device_total += model.duration_ns[e];
      if (model.String(model.kind[e]) == "AI_CPU") {
        ++out.ai_cpu_count;
        out.ai_cpu_ns += model.duration_ns[e];
        const std::string name(model.String(model.name[e]));
        ai_cpu[name] += model.duration_ns[e];
        std::string why(model.String(model.category[e]));
        if (why == "kernel") why.clear();
        if (model.dtype[e] != 0) {
          why += (why.empty() ? "" : "; ") + std::string(model.String(model.dtype[e]));
        }
        if (!why.empty()) ai_cpu_types[name][why] += model.duration_ns[e];
      }
    } else if (model.cls[e] == EventClass::kRuntime) {
      launches.push_back({model.start_ns[e], model.start_ns[e] + model.duration_ns[e]});
    }
  }
  out.ai_cpu_share_pct = device_total > 0 ? 100.0 * out.ai_cpu_ns / device_total : 0;
  out.ai_cpu_top.assign(ai_cpu.begin(), ai_cpu.end());
  std::sort(out.ai_cpu_top.begin(), out.ai_cpu_top.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  if (out.ai_cpu_top.size() > 5) out.ai_cpu_top.resize(5);
  for (const auto& [name, ns] : out.ai_cpu_top) {
    std::string why;
    if (const auto it = ai_cpu_types.find(name); it != ai_cpu_types.end()) {
      std::vector<std::pair<std::string, int64_t>> v(it->second.begin(), it->second.end());
      std::stable_sort(v.begin(), v.end(),
                       [](const auto& a, const auto& b) { return a.second > b.second; });
      for (size_t i = 0; i < v.size() && i < 3; ++i) why += (i == 0 ? "" : ", ") + v[i].first;
    }
    out.ai_cpu_why.push_back(std::move(why));
  }
  if (!has_device || launches.empty()) return out;
  const auto merged = Union(std::move(launches));  // in place, not a copy
  std::map<std::string, int64_t> host_only;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kHostOp || model.duration_ns[e] < 1000000) continue;
    // A call that waits for the device (.item()) is a synchronization, not host work.
    if (IsSyncCall(model.String(model.name[e]))) continue;
    const int64_t b = model.start_ns[e];
    if (Covered(merged, b, b + model.duration_ns[e]) == 0) {
      host_only[std::string(model.String(model.name[e]))] += model.duration_ns[e];
    }
  }
  out.host_only_ops.assign(host_only.begin(), host_only.end());
  std::sort(out.host_only_ops.begin(), out.host_only_ops.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  if (out.host_only_ops.size() > 5) out.host_only_ops.resize(5);
  return out;
}

Pass CpuFallbackPass() {
  return {"cpu_fallback",
          "What work fell back to a CPU?",
          {},
          [](const TraceModel& model, Analysis& a) { a.fallback = ComputeCpuFallback(model); }};
}

}  // namespace opscope::analyze
