#include "analyze/passes/layout.h"

#include <algorithm>
#include <map>

#include "analyze/analysis.h"
#include "analyze/names.h"

namespace opscope::analyze {

LayoutShare ComputeLayoutShare(const TraceModel& model) {
  LayoutShare out;
  const std::vector<bool> layout = ClassifyNames(model, IsLayoutConversion);
  int64_t host_total = 0, device_total = 0;
  std::map<std::string, int64_t> by_name;
  // Host operators nest; only top-level time would be exact, so conversions are
  // compared with all host operator time of their own kind (inclusive times).
  for (size_t e = 0; e < model.size(); ++e) {
    const bool device = IsDevice(model.cls[e]);
    if (!device && model.cls[e] != EventClass::kHostOp) continue;
    (device ? device_total : host_total) += model.duration_ns[e];
    if (!layout[model.name[e]]) continue;
    (device ? out.device_ns : out.host_ns) += model.duration_ns[e];
    by_name[std::string(model.String(model.name[e]))] += model.duration_ns[e];
  }
  out.host_pct = host_total > 0
                     ? 100.0 * static_cast<double>(out.host_ns) / static_cast<double>(host_total)
                     : 0;
  out.device_pct = device_total > 0 ? 100.0 * static_cast<double>(out.device_ns) /
                                          static_cast<double>(device_total)
                                    : 0;
  out.top.assign(by_name.begin(), by_name.end());
  std::sort(out.top.begin(), out.top.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  if (out.top.size() > 5) out.top.resize(5);
  return out;
}

Pass LayoutPass() {
  return {"layout",
          "How much time goes into layout conversions?",
          {},
          [](const TraceModel& model, Analysis& a) { a.layout = ComputeLayoutShare(model); }};
}

}  // namespace opscope::analyze
