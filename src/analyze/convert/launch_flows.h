// The arrows from host launches to the device work they launched, as the
// converters write them (chrome_trace.h, report/sqlite_export.h): each device
// task with the launch call that shares its correlation id, then torch_npu's
// host-to-device flows (TraceModel::launch_flows), which name no events.
#ifndef OPSCOPE_ANALYZE_CONVERT_LAUNCH_FLOWS_H_
#define OPSCOPE_ANALYZE_CONVERT_LAUNCH_FLOWS_H_

#include <cstddef>
#include <cstdint>

#include "analyze/runtime_calls.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct LaunchArrow {
  uint32_t from_track = 0, to_track = 0;
  int64_t from_ns = 0, to_ns = 0;
  int64_t from_event = -1, to_event = -1;  // -1: the flow names no event
};

// Calls `f(const LaunchArrow&)` for each arrow, in the model's event order.
template <typename F>
void ForEachLaunchArrow(const TraceModel& model, F&& f) {
  const CorrelationIndex launches(model,
                                  [&](size_t e) { return model.cls[e] == EventClass::kRuntime; });
  for (size_t e = 0; e < model.size(); ++e) {
    if (!IsDevice(model.cls[e]) || model.correlation[e] < 0) continue;
    const size_t launch = launches.Find(model.correlation[e]);
    if (launch == SIZE_MAX) continue;
    f(LaunchArrow{model.track[launch], model.track[e], model.start_ns[launch], model.start_ns[e],
                  static_cast<int64_t>(launch), static_cast<int64_t>(e)});
  }
  for (const TraceModel::LaunchFlow& flow : model.launch_flows) {
    if (flow.host_track >= model.tracks.size() || flow.device_track >= model.tracks.size()) {
      continue;
    }
    f(LaunchArrow{flow.host_track, flow.device_track, flow.host_ns, flow.device_ns});
  }
}

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_CONVERT_LAUNCH_FLOWS_H_
