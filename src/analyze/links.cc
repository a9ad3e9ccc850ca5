#include "analyze/links.h"

#include <algorithm>

#include "analyze/flat_map.h"

namespace opscope::analyze {

EventLinks LinkEvents(const TraceModel& model) {
  EventLinks links;
  links.parent.assign(model.size(), -1);
  links.launcher.assign(model.size(), -1);
  std::vector<std::vector<uint32_t>> by_track(model.tracks.size());
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    if (IsDevice(cls) || cls == EventClass::kDeviceAnnotation || cls == EventClass::kDerived ||
        cls == EventClass::kOther) {
      continue;
    }
    by_track[model.track[e]].push_back(static_cast<uint32_t>(e));
  }
  const auto end_of = [&](uint32_t e) { return model.start_ns[e] + model.duration_ns[e]; };
  std::vector<uint32_t> open;
  for (auto& events : by_track) {
    std::sort(events.begin(), events.end(), [&](uint32_t a, uint32_t b) {
      if (model.start_ns[a] != model.start_ns[b]) return model.start_ns[a] < model.start_ns[b];
      if (model.duration_ns[a] != model.duration_ns[b])
        return model.duration_ns[a] > model.duration_ns[b];
      return a < b;
    });
    open.clear();
    for (const uint32_t e : events) {
      while (!open.empty() && end_of(open.back()) <= model.start_ns[e]) open.pop_back();
      // The innermost open event that lasts at least as long as e encloses it
      // (one that ends earlier overlaps it unevenly: rounded timestamps).
      for (size_t k = open.size(); k-- > 0;) {
        if (end_of(open[k]) >= end_of(e)) {
          links.parent[e] = static_cast<int32_t>(open[k]);
          break;
        }
      }
      open.push_back(e);
    }
  }
  // Launchers: the operator of the same External id, else the operator
  // enclosing the launch call of the same correlation id.
  Int64Map<uint32_t> op_of_external, runtime_of_correlation;  // id -> event + 1
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] == EventClass::kHostOp && model.external_id[e] >= 0) {
      op_of_external[model.external_id[e]] = static_cast<uint32_t>(e + 1);
    } else if (model.cls[e] == EventClass::kRuntime && model.correlation[e] >= 0) {
      runtime_of_correlation[model.correlation[e]] = static_cast<uint32_t>(e + 1);
    }
  }
  for (size_t e = 0; e < model.size(); ++e) {
    if (!IsDevice(model.cls[e])) continue;
    if (model.external_id[e] >= 0) {
      if (const uint32_t* op = op_of_external.Find(model.external_id[e])) {
        links.launcher[e] = static_cast<int32_t>(*op - 1);
        continue;
      }
    }
    if (model.correlation[e] < 0) continue;
    const uint32_t* call = runtime_of_correlation.Find(model.correlation[e]);
    if (call == nullptr) continue;
    ForEachAncestor(links, links.parent[*call - 1], [&](int32_t p) {
      if (model.cls[static_cast<size_t>(p)] != EventClass::kHostOp) return true;
      links.launcher[e] = p;
      return false;
    });
  }
  return links;
}

}  // namespace opscope::analyze
