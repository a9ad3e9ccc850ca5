#include "analyze/passes/launch.h"

#include <algorithm>

#include "analyze/analysis.h"
#include "analyze/flat_map.h"

namespace opscope::analyze {

LaunchBound ComputeLaunchBound(const TraceModel& model, double busy_pct) {
  LaunchBound out;
  out.busy_pct = busy_pct;
  std::vector<int64_t> durations, delays;
  Int64Map<int64_t> launch_start;  // correlation -> launch call start
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] == EventClass::kRuntime && model.correlation[e] >= 0) {
      launch_start[model.correlation[e]] = model.start_ns[e];
    }
  }
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kKernel) continue;
    durations.push_back(model.duration_ns[e]);
    const int64_t* start =
        model.correlation[e] >= 0 ? launch_start.Find(model.correlation[e]) : nullptr;
    if (start != nullptr && model.start_ns[e] >= *start)
      delays.push_back(model.start_ns[e] - *start);
  }
  out.kernels = static_cast<int64_t>(durations.size());
  if (durations.empty()) return out;
  const auto median = durations.begin() + static_cast<ptrdiff_t>(durations.size() / 2);
  std::nth_element(durations.begin(), median, durations.end());
  out.median_kernel_ns = *median;
  if (!delays.empty()) {
    const auto p50 = delays.begin() + static_cast<ptrdiff_t>(delays.size() / 2);
    const auto p90 = delays.begin() +
                     static_cast<ptrdiff_t>(std::min(
                         delays.size() - 1, static_cast<size_t>(0.9 * (delays.size() - 1) + 0.5)));
    std::nth_element(delays.begin(), p90, delays.end());
    out.launch_delay_p90_ns = *p90;
    std::nth_element(delays.begin(), p50, p90 + 1);
    out.launch_delay_p50_ns = *p50;
  }
  out.launch_bound = out.kernels >= 100 && out.median_kernel_ns < 10000 && busy_pct < 50;
  return out;
}

Pass LaunchPass() {
  return {"launch",
          "Is the device waiting on kernel launches?",
          {"device_busy"},
          [](const TraceModel& model, Analysis& a) {
            a.launch = ComputeLaunchBound(model, a.busy.busy_pct);
          }};
}

}  // namespace opscope::analyze
