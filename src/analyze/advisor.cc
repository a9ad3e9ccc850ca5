#include "analyze/advisor.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace opscope::analyze {

const char* Name(Severity severity) {
  switch (severity) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kCritical: return "critical";
  }
  return "?";
}

namespace {

double Pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * part / whole : 0; }

}  // namespace

std::vector<Finding> Advise(const Analysis& a, const Thresholds& t) {
  std::vector<Finding> out;
  // 1. Is the device busy? If not, why: the causes of its idle gaps.
  if (a.busy.has_device && a.busy.busy_pct < t.busy_warning_pct) {
    std::map<std::string, int64_t> by_cause;
    for (const auto& g : a.busy.gaps) by_cause[g.cause] += g.duration_ns;
    std::string dominant = "host-bound";
    int64_t dominant_ns = -1;
    for (const auto& [cause, ns] : by_cause) {
      if (ns > dominant_ns) dominant = cause, dominant_ns = ns;
    }
    std::string action;
    if (dominant == "data loading") {
      action =
          "Feed the device faster: more DataLoader workers, pin_memory=True, prefetching, and "
          "preprocessing off the training loop.";
    } else if (dominant == "unknown") {
      action =
          "This file has no host events: analyze the matching host trace (trace_view.json or the "
          "Kineto trace) to see what the host did while the device waited.";
    } else if (dominant == "no host activity") {
      action =
          "The traced host threads were idle while the device waited: the work is elsewhere "
          "(DataLoader worker processes, other ranks in a collective, threads not traced). "
          "Profile those too, and compare ranks for a slow one.";
    } else if (dominant == "synchronization wait") {
      action =
          "Remove host-device synchronizations from the loop: .item(), .cpu(), printing tensors, "
          "explicit synchronize calls; log metrics every N steps instead.";
    } else {
      action =
          "Cut host overhead per step: a larger batch, fewer and larger operators (fusion, graph "
          "compilation with torch.compile or CUDA Graphs / graph mode on Ascend), and less Python "
          "work between launches.";
    }
    Finding f{
        "low_device_utilization",
        a.busy.busy_pct < t.busy_critical_pct ? Severity::kCritical : Severity::kWarning,
        fmt::format("The device is busy only {:.1f}% of the time", a.busy.busy_pct),
        fmt::format("{} idle gaps listed; most idle time is {}", a.busy.gaps.size(), dominant),
        action};
    if (!a.busy.gaps.empty()) {
      f.evidence += fmt::format("; the longest gap, {:.3f} ms: {}",
                                a.busy.gaps[0].duration_ns / 1e6, a.busy.gaps[0].evidence);
    }
    out.push_back(std::move(f));
  }
  // 2. Launch-bound: many tiny kernels.
  if (a.launch.launch_bound) {
    out.push_back(
        {"launch_bound", Severity::kWarning,
         fmt::format("Launch-bound: {} kernels with a median of {:.1f} us", a.launch.kernels,
                     a.launch.median_kernel_ns / 1e3),
         fmt::format(
             "device busy {:.1f}%{}", a.launch.busy_pct,
             a.launch.launch_delay_p50_ns >= 0
                 ? fmt::format(", launch delay p50 {:.1f} us", a.launch.launch_delay_p50_ns / 1e3)
                 : std::string()),
         "Launch fewer, larger kernels: operator fusion, graph compilation (torch.compile, CUDA "
         "Graphs, graph mode on Ascend), or a larger batch."});
  }
  // 3. Layout conversions.
  if (a.layout.device_pct >= t.layout_device_pct || a.layout.host_pct >= t.layout_host_pct) {
    std::string top;
    for (const auto& [name, ns] : a.layout.top)
      top += fmt::format("{}{} {:.3f} ms", top.empty() ? "" : ", ", name, ns / 1e6);
    out.push_back(
        {"layout_conversions",
         a.layout.device_pct >= 2 * t.layout_device_pct ? Severity::kCritical : Severity::kWarning,
         fmt::format(
             "Layout conversions take {:.1f}% of device time ({:.1f}% of host operator time)",
             a.layout.device_pct, a.layout.host_pct),
         "largest: " + top,
         "Keep one layout end to end: channels_last for convolutions, no .contiguous()/permute in "
         "the hot loop; on Ascend, keep tensors in the operators' private formats to avoid "
         "TransData."});
  }
  // 4. Memory copies.
  for (const auto& tr : a.transfers) {
    if (tr.share_of_device_pct >= t.transfer_device_pct) {
      const bool pageable = (tr.direction == "HtoD" || tr.direction == "DtoH") && tr.bytes > 0 &&
                            tr.gbps < t.pageable_gbps;
      out.push_back(
          {"transfers_" + tr.direction, Severity::kWarning,
           fmt::format("{} copies take {:.1f}% of device time", tr.direction,
                       tr.share_of_device_pct),
           fmt::format("{} copies, {:.3f} ms{}", tr.count, tr.total_ns / 1e6,
                       tr.bytes > 0 ? fmt::format(", {:.2f} GB/s", tr.gbps) : std::string()),
           std::string("Keep data on the device between steps and overlap copies with compute "
                       "(non_blocking=True)") +
               (pageable ? "; this bandwidth suggests pageable memory: use pin_memory=True."
                         : ".")});
    }
  }
  // 5. CPU fallback.
  if (a.fallback.ai_cpu_share_pct >= t.ai_cpu_pct) {
    std::string top;
    for (const auto& [name, ns] : a.fallback.ai_cpu_top)
      top += fmt::format("{}{} {:.3f} ms", top.empty() ? "" : ", ", name, ns / 1e6);
    out.push_back(
        {"cpu_fallback", Severity::kWarning,
         fmt::format("{} operators run on the AI CPU: {:.1f}% of device time",
                     a.fallback.ai_cpu_count, a.fallback.ai_cpu_share_pct),
         top,
         "Check CPU fallback: these operators lack an AI Core kernel for their data type or shape "
         "(often int64 casts); change the dtype or use a supported operator."});
  }
  if (!a.fallback.host_only_ops.empty()) {
    out.push_back(
        {"host_only_operators", Severity::kInfo,
         fmt::format("'{}' ran {:.3f} ms on the CPU without launching device work",
                     a.fallback.host_only_ops[0].first, a.fallback.host_only_ops[0].second / 1e6),
         fmt::format("{} such operators of 1 ms or more", a.fallback.host_only_ops.size()),
         "Check whether this work belongs on the device, or runs once outside the step."});
  }
  // 6. Synchronizing operators with a long tail.
  for (const auto& lt : a.long_tail) {
    const bool sync = lt.name.find("item") != std::string::npos ||
                      lt.name.find("_local_scalar_dense") != std::string::npos ||
                      lt.name.find("synchronize") != std::string::npos ||
                      lt.name.find("Synchronize") != std::string::npos;
    if (sync && lt.ratio >= t.sync_tail_ratio) {
      out.push_back(
          {"synchronizations", Severity::kWarning,
           fmt::format("'{}' waits for the device: p99 {:.3f} ms vs median {:.3f} ms", lt.name,
                       lt.p99_ns / 1e6, lt.p50_ns / 1e6),
           fmt::format("{} calls", lt.count),
           "Fewer .item()/.cpu() synchronizations: keep values on the device and read them every "
           "N steps."});
      break;
    }
  }
  // 7. Fusion.
  int64_t fusible = 0;
  for (const auto& f : a.fusion) fusible += f.consumer_ns;
  if (!a.fusion.empty() && Pct(fusible, a.device_ns) >= t.fusion_consumer_pct) {
    out.push_back(
        {"fusion", Severity::kInfo,
         fmt::format("Elementwise operators right after matmul/conv take {:.1f}% of device time",
                     Pct(fusible, a.device_ns)),
         fmt::format("most: {} -> {} ({} times)", a.fusion[0].producer, a.fusion[0].consumer,
                     a.fusion[0].count),
         "Fuse the epilogue into the matmul/conv (torch.compile, fused kernels), saving a round "
         "trip through memory."});
  }
  // 8. fp32 GEMMs: mixed precision.
  if (Pct(a.fp32_gemm_ns, a.device_ns) >= t.fp32_gemm_pct) {
    out.push_back({"mixed_precision", Severity::kInfo,
                   fmt::format("fp32 GEMM kernels take {:.1f}% of device time",
                               Pct(a.fp32_gemm_ns, a.device_ns)),
                   "kernels named *sgemm* run without tensor cores",
                   "Use automatic mixed precision (bf16 or fp16) so matmuls run on tensor cores."});
  }
  // 9. Communication inside steps.
  int64_t step_ns = 0, comm_ns = 0;
  for (const auto& s : a.steps) step_ns += s.duration_ns, comm_ns += s.communication_ns;
  if (Pct(comm_ns, step_ns) >= t.communication_pct) {
    out.push_back(
        {"communication", Severity::kWarning,
         fmt::format("Communication kernels cover {:.1f}% of step time", Pct(comm_ns, step_ns)),
         fmt::format("{} steps", a.steps.size()),
         "Overlap communication with computation (gradient bucketing, DDP overlap) or reduce its "
         "volume (larger buckets, compression)."});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Finding& x, const Finding& y) { return x.severity > y.severity; });
  return out;
}

}  // namespace opscope::analyze
