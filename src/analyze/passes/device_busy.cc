#include "analyze/passes/device_busy.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "analyze/mapped.h"
#include "analyze/names.h"

namespace opscope::analyze {
namespace {

// Exact products of times (a window can span 8e18 ns, times a slice index).
__extension__ typedef __int128 Int128;

bool IsHostWork(EventClass cls) {
  return cls == EventClass::kHostOp || cls == EventClass::kRuntime ||
         cls == EventClass::kAnnotation || cls == EventClass::kPython || cls == EventClass::kSync ||
         cls == EventClass::kDataLoading;
}

// Categories that are known and deliberately not analysed as work.
bool IsKnownOther(std::string_view category) {
  return category == "Trace" || category == "overhead" || category == "cpu_instant_event" ||
         category == "external_correlation";
}

}  // namespace

DeviceBusy ComputeDeviceBusy(const TraceModel& model, int64_t min_gap_ns, size_t max_gaps,
                             int slices) {
  return ComputeDeviceBusyOn(model, ComputeDeviceOf(model), min_gap_ns, max_gaps, slices);
}

DeviceBusy ComputeDeviceBusyOn(const TraceModel& model, ComputeOn on, int64_t min_gap_ns,
                               size_t max_gaps, int slices) {
  DeviceBusy out;
  out.compute_on = Name(on);
  out.scopes_are_work = on == ComputeOn::kCpu && ScopesAreTheWork(model);
  // Each distinct name's meaning, once.
  std::vector<int8_t> meaning(model.string_count(), -1);  // 0 none, 1 data, 2 sync, 3 compile
  std::vector<std::string_view> compile_kind(model.string_count());
  const auto meaning_of = [&](uint32_t name) {
    if (meaning[name] < 0) {
      const std::string_view n = model.String(name);
      compile_kind[name] = CompileKind(n);
      meaning[name] = IsDataLoading(n)              ? 1
                      : !compile_kind[name].empty() ? 3
                      : IsSyncCall(n)               ? 2
                                                    : 0;
    }
    return meaning[name];
  };
  const std::vector<Work> work = ComputeWork(model, on);
  // Sized by a count: one allocation each of what is needed (millions of events).
  Intervals busy;
  busy.reserve(static_cast<size_t>(
      std::count_if(work.begin(), work.end(), [](Work w) { return w != Work::kNone; })));
  MappedVector<uint32_t> host_events;
  host_events.reserve(
      static_cast<size_t>(std::count_if(model.cls.begin(), model.cls.end(), [](EventClass c) {
        return c != EventClass::kOther && IsHostWork(c);
      })));
  std::map<std::string, int64_t> unclassified, compile;
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    const Interval i{model.start_ns[e], model.start_ns[e] + model.duration_ns[e]};
    if (cls == EventClass::kOther) {
      const std::string_view category = model.String(model.category[e]);
      if (!IsKnownOther(category))
        ++unclassified[category.empty() ? "(none)" : std::string(category)];
      continue;
    }
    if (work[e] != Work::kNone) busy.push_back(i);
    if (IsHostWork(cls)) {
      host_events.push_back(static_cast<uint32_t>(e));
      meaning_of(model.name[e]);
    }
  }
  // Compilation time by kind, counted once where calls nest.
  {
    std::map<std::string_view, Intervals> by_kind;
    for (const uint32_t e : host_events) {
      if (meaning[model.name[e]] == 3) {
        by_kind[compile_kind[model.name[e]]].push_back(
            {model.start_ns[e], model.start_ns[e] + model.duration_ns[e]});
      }
    }
    for (auto& [kind, spans] : by_kind) {
      int64_t ns = 0;
      for (const Interval& i : Union(std::move(spans))) ns += i.end - i.begin;
      out.compile_ns.emplace_back(std::string(kind), ns);
    }
    std::sort(out.compile_ns.begin(), out.compile_ns.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
  }
  out.unclassified.assign(unclassified.begin(), unclassified.end());
  std::sort(out.unclassified.begin(), out.unclassified.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  const auto merged = Union(std::move(busy));  // in place, not a copy
  if (merged.empty()) return out;              // no compute events, or none that lasts
  out.has_device = true;
  out.window_begin_ns = merged.front().begin;
  out.window_end_ns = merged.back().end;
  for (const Interval& i : merged) out.busy_ns += i.end - i.begin;
  const int64_t window = out.window_end_ns - out.window_begin_ns;
  out.busy_pct =
      window > 0 ? 100.0 * static_cast<double>(out.busy_ns) / static_cast<double>(window) : 100;
  // Gaps between compute activity, with what the host did meanwhile. The
  // longest gaps first; only those listed are explained (each explanation scans
  // the host events, so explaining every gap would be quadratic).
  Intervals idle;
  for (size_t k = 1; k < merged.size(); ++k) {
    if (merged[k].begin - merged[k - 1].end >= min_gap_ns) {
      idle.push_back({merged[k - 1].end, merged[k].begin});
      out.gap_ns += merged[k].begin - merged[k - 1].end;
    }
  }
  std::stable_sort(idle.begin(), idle.end(), [](const Interval& a, const Interval& b) {
    return a.end - a.begin > b.end - b.begin;
  });
  if (idle.size() > max_gaps) idle.resize(max_gaps);
  const bool cpu = on == ComputeOn::kCpu;
  for (const Interval& span : idle) {
    const int64_t begin = span.begin, end = span.end, length = end - begin;
    IdleGap gap{begin, length, "", "", 0};
    Intervals host_in_gap, data, sync, comp, python;
    std::map<std::string_view, int64_t> longest;  // name -> its longest overlap, per meaning
    std::string busiest;
    int64_t busiest_ns = 0;
    bool busiest_inside = false;
    std::string_view data_name, sync_name, compile_name;
    int64_t data_max = 0, sync_max = 0, compile_max = 0;
    for (const uint32_t e : host_events) {
      const int64_t b = std::max(begin, model.start_ns[e]);
      const int64_t f = std::min(end, model.start_ns[e] + model.duration_ns[e]);
      if (f <= b) continue;
      const std::string_view name = model.String(model.name[e]);
      switch (meaning[model.name[e]]) {
        case 1:
          data.push_back({b, f});
          if (f - b > data_max) data_max = f - b, data_name = name;
          break;
        case 2:
          sync.push_back({b, f});
          if (f - b > sync_max) sync_max = f - b, sync_name = name;
          break;
        case 3:
          comp.push_back({b, f});
          if (f - b > compile_max) compile_max = f - b, compile_name = name;
          break;
        default: break;
      }
      if (model.cls[e] == EventClass::kPython) python.push_back({b, f});
      // Annotations enclose whole phases: they tell what runs, not that the host works.
      if (model.cls[e] == EventClass::kAnnotation) continue;
      host_in_gap.push_back({b, f});
      // Name the longest host event that starts inside the gap, else the longest overlapping one.
      const bool inside = model.start_ns[e] >= begin;
      if ((inside && !busiest_inside) || (inside == busiest_inside && f - b > busiest_ns)) {
        busiest_ns = f - b, busiest = std::string(name), busiest_inside = inside;
      }
    }
    const auto covered = [&](Intervals spans) {
      int64_t ns = 0;
      for (const Interval& i : Union(std::move(spans))) ns += i.end - i.begin;
      return ns;
    };
    const int64_t data_ns = covered(data), sync_ns = covered(sync), compile_ns = covered(comp),
                  host_busy = covered(host_in_gap), python_ns = covered(python);
    const double share = static_cast<double>(host_busy) / static_cast<double>(length);
    const auto pct = [&](int64_t ns) { return 100.0 * static_cast<double>(ns) / length; };
    gap.host_busy_pct = 100 * share;
    if (data_ns * 2 >= length) {
      gap.cause = "data loading";
      gap.evidence = fmt::format("data loading covers {:.0f}% of the gap; longest: '{}'",
                                 pct(data_ns), data_name);
    } else if (compile_ns * 2 >= length) {
      gap.cause = "compilation/warm-up";
      gap.evidence = fmt::format("{} covers {:.0f}% of the gap; longest: '{}'",
                                 CompileKind(compile_name), pct(compile_ns), compile_name);
    } else if (sync_ns * 2 >= length) {
      gap.cause = "synchronization wait";
      gap.evidence = fmt::format("waiting calls cover {:.0f}% of the gap; longest: '{}'",
                                 pct(sync_ns), sync_name);
    } else if (cpu) {
      gap.cause = "outside operators";
      gap.evidence =
          python_ns > 0
              ? fmt::format("no operator ran; Python functions cover {:.0f}% of the gap",
                            pct(python_ns))
              : fmt::format("no operator ran; other traced host events cover {:.0f}% of the gap",
                            100 * share);
    } else if (host_events.empty()) {
      gap.cause = "unknown";
      gap.evidence = "this trace records no host events (a device-only file)";
    } else if (share >= 0.5) {
      gap.cause = "host-bound";
      gap.evidence =
          fmt::format("the host was busy {:.0f}% of the gap; longest: '{}'", 100 * share, busiest);
    } else if (share >= 0.1) {
      gap.cause = "host partly busy";
      gap.evidence = fmt::format(
          "the traced host threads were busy {:.0f}% of the gap (longest: '{}'); the rest is "
          "untraced",
          100 * share, busiest);
    } else {
      gap.cause = "no host activity";
      gap.evidence =
          fmt::format("the traced host threads were busy {:.0f}% of the gap", 100 * share);
    }
    out.gaps.push_back(std::move(gap));
  }
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
          "Is the compute device busy, and what fills its idle gaps?",
          {},
          [](const TraceModel& model, Analysis& a) {
            a.busy = ComputeDeviceBusyOn(model, a.compute_on);
          }};
}

}  // namespace opscope::analyze
