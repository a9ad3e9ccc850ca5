#include "analyze/analyses.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "analyze/flat_map.h"
#include "analyze/op_stats.h"

namespace opscope::analyze {
namespace {

// Exact products of times (a window can span 8e18 ns, times a slice index).
__extension__ typedef __int128 Int128;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool Contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

bool IsSyncName(const std::string& lower) {
  return Contains(lower, "synchronize") || Contains(lower, "sync") || Contains(lower, "item") ||
         Contains(lower, "_local_scalar_dense") || Contains(lower, "dtoh") ||
         Contains(lower, "memcpy") || Contains(lower, "wait");
}

bool IsDataName(const std::string& lower) {
  return Contains(lower, "dataloader") || Contains(lower, "data_loader") ||
         Contains(lower, "next_data") || Contains(lower, "__next__");
}

}  // namespace

std::vector<Interval> Union(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<Interval> merged;
  for (const Interval& i : intervals) {
    if (i.end <= i.begin) continue;
    if (!merged.empty() && i.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, i.end);
    } else {
      merged.push_back(i);
    }
  }
  return merged;
}

int64_t Covered(const std::vector<Interval>& merged, int64_t begin, int64_t end) {
  int64_t total = 0;
  auto it = std::lower_bound(merged.begin(), merged.end(), begin,
                             [](const Interval& i, int64_t t) { return i.end <= t; });
  for (; it != merged.end() && it->begin < end; ++it) {
    total += std::min(end, it->end) - std::max(begin, it->begin);
  }
  return total;
}

bool IsLayoutConversion(std::string_view name) {
  const std::string n = Lower(name);
  return Contains(n, "transdata") || Contains(n, "contiguous") || Contains(n, "permute") ||
         Contains(n, "transpose") || n == "aten::copy_" || n == "aten::clone" ||
         Contains(n, "reorder") || Contains(n, "npu_format_cast") || Contains(n, "format_cast");
}

bool IsCommunication(std::string_view name) {
  const std::string n = Lower(name);
  return Contains(n, "nccl") || Contains(n, "hccl") || Contains(n, "hcom") || Contains(n, "rccl") ||
         Contains(n, "allreduce") || Contains(n, "all_reduce") || Contains(n, "allgather") ||
         Contains(n, "reducescatter") || Contains(n, "alltoall") || Contains(n, "broadcast");
}

std::vector<bool> ClassifyNames(const TraceModel& model, bool (*test)(std::string_view)) {
  std::vector<bool> out(model.string_count(), false);
  std::vector<bool> seen(model.string_count(), false);
  for (const uint32_t id : model.name) {
    if (seen[id]) continue;
    seen[id] = true;
    out[id] = test(model.String(id));
  }
  return out;
}

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

std::vector<StepBreakdown> ComputeSteps(const TraceModel& model) {
  const std::vector<bool> comm = ClassifyNames(model, IsCommunication);
  std::vector<Interval> compute, communication, memory, all;
  for (size_t e = 0; e < model.size(); ++e) {
    const Interval i{model.start_ns[e], model.start_ns[e] + model.duration_ns[e]};
    switch (model.cls[e]) {
      case EventClass::kKernel:
        (comm[model.name[e]] ? communication : compute).push_back(i);
        all.push_back(i);
        break;
      case EventClass::kMemcpy:
      case EventClass::kMemset:
        memory.push_back(i);
        all.push_back(i);
        break;
      default: break;
    }
  }
  const auto c = Union(compute), m = Union(communication), mem = Union(memory), any = Union(all);
  std::vector<StepBreakdown> steps;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kStep) continue;
    StepBreakdown s;
    s.name = std::string(model.String(model.name[e]));
    s.begin_ns = model.start_ns[e];
    s.duration_ns = model.duration_ns[e];
    const int64_t end = s.begin_ns + s.duration_ns;
    s.compute_ns = Covered(c, s.begin_ns, end);
    s.communication_ns = Covered(m, s.begin_ns, end);
    s.memory_ns = Covered(mem, s.begin_ns, end);
    s.idle_ns = s.duration_ns - Covered(any, s.begin_ns, end);
    steps.push_back(std::move(s));
  }
  std::sort(steps.begin(), steps.end(),
            [](const auto& a, const auto& b) { return a.begin_ns < b.begin_ns; });
  return steps;
}

std::vector<TransferStats> ComputeTransfers(const TraceModel& model) {
  std::map<std::string, TransferStats> by_direction;
  int64_t device_total = 0;
  for (size_t e = 0; e < model.size(); ++e) {
    if (!IsDevice(model.cls[e])) continue;
    device_total += model.duration_ns[e];
    if (model.cls[e] != EventClass::kMemcpy) continue;
    const std::string name = Lower(model.String(model.name[e]));
    const std::string direction = Contains(name, "htod")   ? "HtoD"
                                  : Contains(name, "dtoh") ? "DtoH"
                                  : Contains(name, "dtod") ? "DtoD"
                                  : Contains(name, "ptop") ? "PtoP"
                                                           : "other";
    TransferStats& t = by_direction[direction];
    t.direction = direction;
    ++t.count;
    t.total_ns += model.duration_ns[e];
    if (model.bytes[e] >= 0) t.bytes = std::max<int64_t>(t.bytes, 0) + model.bytes[e];
  }
  std::vector<TransferStats> out;
  for (auto& [direction, t] : by_direction) {
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

std::vector<LongTail> ComputeLongTail(const std::vector<OpStats>& operators) {
  std::vector<LongTail> out;
  for (const OpStats& g : operators) {
    if (g.cls == EventClass::kStep) continue;  // the steps' spread is the workload's
    if (g.count < 10 || g.p50_ns <= 0 || g.p99_ns < 3 * g.p50_ns) continue;
    out.push_back({g.name, g.cls, g.count, g.p50_ns, g.p99_ns, g.max_ns,
                   static_cast<double>(g.p99_ns) / static_cast<double>(g.p50_ns)});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.ratio != b.ratio) return a.ratio > b.ratio;
    return a.name != b.name ? a.name < b.name : a.cls < b.cls;
  });
  if (out.size() > 10) out.resize(10);
  return out;
}

CpuFallback ComputeCpuFallback(const TraceModel& model) {
  CpuFallback out;
  int64_t device_total = 0;
  std::map<std::string, int64_t> ai_cpu;
  std::vector<Interval> launches;  // host calls that put work on the device
  bool has_device = false;
  for (size_t e = 0; e < model.size(); ++e) {
    if (IsDevice(model.cls[e])) {
      has_device = true;
      device_total += model.duration_ns[e];
      if (model.String(model.kind[e]) == "AI_CPU") {
        ++out.ai_cpu_count;
        out.ai_cpu_ns += model.duration_ns[e];
        ai_cpu[std::string(model.String(model.name[e]))] += model.duration_ns[e];
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
  if (!has_device || launches.empty()) return out;
  const auto merged = Union(launches);
  std::map<std::string, int64_t> host_only;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kHostOp || model.duration_ns[e] < 1000000) continue;
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

std::vector<FusionCandidate> ComputeFusionCandidates(const TraceModel& model) {
  const auto heavy_name = [](std::string_view name) {
    const std::string n = Lower(name);
    return Contains(n, "gemm") || Contains(n, "matmul") || Contains(n, "conv") ||
           Contains(n, "aten::mm") || Contains(n, "aten::addmm") || Contains(n, "aten::linear") ||
           Contains(n, "aten::bmm");
  };
  const auto elementwise_name = [](std::string_view name) {
    const std::string n = Lower(name);
    return Contains(n, "relu") || Contains(n, "gelu") || Contains(n, "silu") ||
           Contains(n, "sigmoid") || Contains(n, "tanh") || Contains(n, "add") ||
           Contains(n, "mul") || Contains(n, "bias") || Contains(n, "batch_norm") ||
           Contains(n, "batchnorm") || Contains(n, "elementwise");
  };
  // Each distinct name is classified once.
  const std::vector<bool> heavy = ClassifyNames(model, +heavy_name);
  const std::vector<bool> elementwise = ClassifyNames(model, +elementwise_name);
  // Kernels per device track, and host operators per thread, in time order.
  std::map<std::pair<uint32_t, bool>, std::vector<size_t>> lanes;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] == EventClass::kKernel || model.cls[e] == EventClass::kHostOp) {
      lanes[{model.track[e], model.cls[e] == EventClass::kKernel}].push_back(e);
    }
  }
  std::map<std::pair<std::string, std::string>, FusionCandidate> found;
  for (auto& [lane, events] : lanes) {
    std::sort(events.begin(), events.end(),
              [&](size_t a, size_t b) { return model.start_ns[a] < model.start_ns[b]; });
    for (size_t k = 1; k < events.size(); ++k) {
      const size_t a = events[k - 1], b = events[k];
      const int64_t gap = model.start_ns[b] - (model.start_ns[a] + model.duration_ns[a]);
      if (gap < 0 || gap > 5000) continue;  // nested or not back to back
      if (!heavy[model.name[a]] || heavy[model.name[b]] || !elementwise[model.name[b]]) continue;
      auto& c = found[{std::string(model.String(model.name[a])),
                       std::string(model.String(model.name[b]))}];
      c.producer = std::string(model.String(model.name[a]));
      c.consumer = std::string(model.String(model.name[b]));
      ++c.count;
      c.consumer_ns += model.duration_ns[b];
    }
  }
  std::vector<FusionCandidate> out;
  for (auto& [key, c] : found) {
    if (c.count >= 3) out.push_back(c);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.consumer_ns > b.consumer_ns; });
  if (out.size() > 10) out.resize(10);
  return out;
}

}  // namespace opscope::analyze
