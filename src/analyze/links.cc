#include "analyze/links.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "analyze/flat_map.h"

namespace opscope::analyze {

EventLinks LinkEvents(const TraceModel& model) {
  EventLinks links;
  links.parent.assign(model.size(), -1);
  links.launcher.assign(model.size(), -1);
  TrackGroups by_track = GroupByTrack(model, [&](size_t e) {
    const EventClass cls = model.cls[e];
    return !(IsDevice(cls) || cls == EventClass::kDeviceAnnotation || cls == EventClass::kDerived ||
             cls == EventClass::kOther);
  });
  SortByOpening(model, by_track);
  const auto end_of = [&](uint32_t e) { return model.start_ns[e] + model.duration_ns[e]; };
  std::vector<uint32_t> open;
  for (size_t t = 0; t + 1 < by_track.begin.size(); ++t) {
    const auto first = by_track.events.begin() + static_cast<std::ptrdiff_t>(by_track.begin[t]),
               last = by_track.events.begin() + static_cast<std::ptrdiff_t>(by_track.begin[t + 1]);
    open.clear();
    for (auto it = first; it != last; ++it) {
      const uint32_t e = *it;
      while (!open.empty() && end_of(open.back()) <= model.start_ns[e]) open.pop_back();
      if (!open.empty() && end_of(e) - end_of(open.back()) > kUnevenNs) {
        ++links.uneven;
        links.uneven_max_ns = std::max(links.uneven_max_ns, end_of(e) - end_of(open.back()));
        if (links.uneven_example < 0) links.uneven_example = static_cast<int32_t>(e);
      }
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
  // Launchers: the operator enclosing the launch call of the same correlation
  // id, else (no such call: torch_npu's flows) the operator of the same
  // External id.
  // Ids to events (the last in model order that carries each).
  SortedIdMap<uint32_t> op_of_external, runtime_of_correlation;
  size_t ops = 0, calls = 0;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] == EventClass::kHostOp && model.external_id[e] >= 0) {
      ++ops;
    } else if (model.cls[e] == EventClass::kRuntime && model.correlation[e] >= 0) {
      ++calls;
    }
  }
  op_of_external.Reserve(ops);
  runtime_of_correlation.Reserve(calls);
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] == EventClass::kHostOp && model.external_id[e] >= 0) {
      op_of_external.Add(model.external_id[e], static_cast<uint32_t>(e));
    } else if (model.cls[e] == EventClass::kRuntime && model.correlation[e] >= 0) {
      runtime_of_correlation.Add(model.correlation[e], static_cast<uint32_t>(e));
    }
  }
  op_of_external.Sort();
  runtime_of_correlation.Sort();
  for (size_t e = 0; e < model.size(); ++e) {
    if (!IsDevice(model.cls[e])) continue;
    // The launch call of the same correlation id is the exact record. A
    // device event's External id is not always an operator's: older Kineto
    // (the HTA alexnet sample) writes the correlation id there, which is also
    // the External id of some unrelated operator.
    if (model.correlation[e] >= 0) {
      if (const uint32_t* call = runtime_of_correlation.Find(model.correlation[e])) {
        ForEachAncestor(links, links.parent[*call], [&](int32_t p) {
          if (model.cls[static_cast<size_t>(p)] != EventClass::kHostOp) return true;
          links.launcher[e] = p;
          return false;
        });
        continue;
      }
    }
    if (model.external_id[e] >= 0) {
      if (const uint32_t* op = op_of_external.Find(model.external_id[e])) {
        links.launcher[e] = static_cast<int32_t>(*op);
      }
    }
  }
  return links;
}

}  // namespace opscope::analyze
