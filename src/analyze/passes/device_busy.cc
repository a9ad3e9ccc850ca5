#include "analyze/passes/device_busy.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "analyze/names.h"

namespace opscope::analyze {
namespace {

// Exact products of times (a window can span 8e18 ns, times a slice index).
__extension__ typedef __int128 Int128;

}  // namespace

DeviceBusy ComputeDeviceBusy(const TraceModel& model, int64_t min_gap_ns, size_t max_gaps,
                             int slices) {
  DeviceBusy out;
  std::vector<Interval> device, host;
  std::vector<size_t> host_events;
  for (size_t e = 0; e < model.size(); ++e) {
    const Interval i{model.start_ns[e], model.start_ns[e] + model.duration_ns[e]};
    if (IsDevice(model.cls[e])) {
      device.push_back(i);
    } else if (model.cls[e] == EventClass::kHostOp || model.cls[e] == EventClass::kRuntime ||
               model.cls[e] == EventClass::kAnnotation || model.cls[e] == EventClass::kPython ||
               model.cls[e] == EventClass::kSync) {
      host_events.push_back(e);
    }
  }
  const auto merged = Union(device);
  if (merged.empty()) return out;  // no device events, or none that lasts: no device time
  out.has_device = true;
  out.window_begin_ns = merged.front().begin;
  out.window_end_ns = merged.back().end;
  for (const Interval& i : merged) out.busy_ns += i.end - i.begin;
  const int64_t window = out.window_end_ns - out.window_begin_ns;
  out.busy_pct =
      window > 0 ? 100.0 * static_cast<double>(out.busy_ns) / static_cast<double>(window) : 100;
  // Gaps between device activity, with what the host did meanwhile.
  // The longest gaps first; only those listed are explained (each explanation
  // scans the host events, so explaining every gap would be quadratic).
  std::vector<Interval> idle;
  for (size_t k = 1; k < merged.size(); ++k) {
    if (merged[k].begin - merged[k - 1].end >= min_gap_ns)
      idle.push_back({merged[k - 1].end, merged[k].begin});
  }
  std::stable_sort(idle.begin(), idle.end(), [](const Interval& a, const Interval& b) {
    return a.end - a.begin > b.end - b.begin;
  });
  if (idle.size() > max_gaps) idle.resize(max_gaps);
  std::vector<IdleGap> gaps;
  for (const Interval& span : idle) {
    const int64_t begin = span.begin, end = span.end;
    IdleGap gap{begin, end - begin, "no host activity", ""};
    int64_t host_busy = 0, sync_ns = 0, data_ns = 0;
    std::string sync_name, data_name, busiest;
    int64_t busiest_ns = 0;
    bool busiest_inside = false;
    std::vector<Interval> host_in_gap;
    for (const size_t e : host_events) {
      const int64_t b = std::max(begin, model.start_ns[e]);
      const int64_t f = std::min(end, model.start_ns[e] + model.duration_ns[e]);
      if (f <= b) continue;
      const std::string lower = Lower(model.String(model.name[e]));
      if (IsDataName(lower) && f - b > data_ns)
        data_ns = f - b, data_name = std::string(model.String(model.name[e]));
      // Annotations enclose whole phases: they tell what runs, not that the host works.
      if (model.cls[e] == EventClass::kAnnotation) continue;
      host_in_gap.push_back({b, f});
      if (IsSyncName(lower) && f - b > sync_ns)
        sync_ns = f - b, sync_name = std::string(model.String(model.name[e]));
      // Name the longest host event that starts inside the gap, else the longest overlapping one.
      const bool inside = model.start_ns[e] >= begin;
      if ((inside && !busiest_inside) || (inside == busiest_inside && f - b > busiest_ns)) {
        busiest_ns = f - b, busiest = std::string(model.String(model.name[e])),
        busiest_inside = inside;
      }
    }
    for (const Interval& i : Union(host_in_gap)) host_busy += i.end - i.begin;
    const double share = static_cast<double>(host_busy) / static_cast<double>(end - begin);
    if (data_ns * 2 >= end - begin) {
      gap.cause = "data loading";
      gap.evidence =
          fmt::format("'{}' covers {:.0f}% of the gap", data_name, 100.0 * data_ns / (end - begin));
    } else if (sync_ns * 2 >= end - begin) {
      gap.cause = "synchronization wait";
      gap.evidence =
          fmt::format("'{}' covers {:.0f}% of the gap", sync_name, 100.0 * sync_ns / (end - begin));
    } else if (share >= 0.5) {
      gap.cause = "host-bound";
      gap.evidence =
          fmt::format("the host was busy {:.0f}% of the gap; longest: '{}'", 100 * share, busiest);
    } else if (host_events.empty()) {
      gap.cause = "unknown";
      gap.evidence = "this trace records no host events (a device-only file)";
    } else {
      gap.evidence = fmt::format("the host was busy {:.0f}% of the gap", 100 * share);
    }
    gaps.push_back(std::move(gap));
  }
  out.gaps = std::move(gaps);
  for (int s = 0; s < slices && window > 0; ++s) {
    const int64_t b =
        out.window_begin_ns + static_cast<int64_t>(static_cast<Int128>(window) * s / slices);
    const int64_t f =
        out.window_begin_ns + static_cast<int64_t>(static_cast<Int128>(window) * (s + 1) / slices);
    out.timeline_pct.push_back(f > b ? 100.0 * static_cast<double>(Covered(merged, b, f)) /
                                           static_cast<double>(f - b)
                                     : 0);
  }
  return out;
}

Pass DeviceBusyPass() {
  return {"device_busy",
          "Is the device busy, and what fills its idle gaps?",
          {},
          [](const TraceModel& model, Analysis& a) { a.busy = ComputeDeviceBusy(model); }};
}

}  // namespace opscope::analyze
