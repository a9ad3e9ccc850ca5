#include "analyze/advisor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "analyze/names.h"
#include "analyze/passes/pass.h"

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

namespace {

// What to do about idle time, by its dominant cause.
std::string IdleAction(const std::string& cause, const Analysis& a) {
  if (cause == "data loading") {
    return "Feed the device faster: more DataLoader workers, pin_memory=True, prefetching, and "
           "preprocessing off the training loop.";
  }
  if (cause == "compilation/warm-up") {
    return "Compilation and first-use set-up, not steady-state work: see the 'compilation' "
           "finding; profile steps after warm-up (a schedule with warmup steps) to see the "
           "steady state.";
  }
  if (cause == "unknown") {
    return "This file has no host events: analyze the matching host trace (trace_view.json or the "
           "Kineto trace) to see what the host did while the device waited.";
  }
  if (cause == "no host activity") {
    return "The traced host threads were idle while the device waited: the work is elsewhere "
           "(DataLoader worker processes, other ranks in a collective, threads not traced). "
           "Profile those too, and compare ranks for a slow one.";
  }
  if (cause == "host partly busy") {
    return "The traced threads explain only part of the wait: trace the rest (Python with "
           "with_stack, DataLoader workers, other threads) before cutting host work; then "
           "reduce what the traced threads do between launches.";
  }
  if (cause == "synchronization wait") {
    return "Remove host-device synchronizations from the loop: .item(), .cpu(), printing tensors, "
           "explicit synchronize calls; log metrics every N steps instead.";
  }
  if (cause == "outside operators") {
    return "The CPU spends this time between operators (Python and framework code): batch more "
           "work per operator (a larger batch), remove Python work from the loop, or compile the "
           "model (torch.compile, TorchScript) so fewer, larger operators run.";
  }
  (void)a;
  return "Cut host overhead per step: a larger batch, fewer and larger operators (fusion, graph "
         "compilation with torch.compile or CUDA Graphs / graph mode on Ascend), and less Python "
         "work between launches.";
}

std::string CompileAction(const std::string& kind) {
  if (kind == "ACL operator compilation") {
    return "Operators are compiled online by CANN: call torch_npu.npu.set_compile_mode("
           "jit_compile=False) to use the prebuilt binary kernels, keep input shapes static "
           "(pad to buckets) so compiled operators are reused, and keep the operator cache "
           "(ACL_OP_COMPILER_CACHE_MODE / _DIR) between runs.";
  }
  if (kind == "torch.compile") {
    return "torch.compile compiles on the first calls and on every recompilation: exclude "
           "warm-up steps from measurements, avoid recompiles (torch._dynamo.config / "
           "TORCH_LOGS=recompiles; mark dynamic shapes), and cache compiled artefacts between "
           "runs (the inductor FX graph cache).";
  }
  if (kind == "module load") {
    return "Kernel modules are loaded on first use: warm up before measuring; CUDA_MODULE_LOADING="
           "LAZY (the default since CUDA 12) loads only the kernels used.";
  }
  return "Device memory is allocated and freed in the measured window: keep PyTorch's caching "
         "allocator warm (do not call torch.cuda.empty_cache() in the loop), preallocate, and "
         "exclude the first steps from measurements.";
}

// A framework operator's family, for a share no single operator reaches; "" none.
std::string OperatorFamily(std::string_view op) {
  const std::string fn = Lower(FunctionOf(op));
  const auto any = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), fn) != names.end();
  };
  if (NamespaceOf(op) != "aten") return "";
  if (any({"mm", "bmm", "addmm", "matmul", "linear", "baddbmm", "addbmm", "addmv", "mv", "dot"}))
    return "Matrix multiplies";
  if (fn.find("conv") != std::string::npos) return "Convolutions";
  if (any({"copy_", "clone", "contiguous", "to", "_to_copy", "cat", "stack", "index_select",
           "gather", "scatter", "index", "embedding"}))
    return "Data movement (copies, cat, gather)";
  if (fn.find("norm") != std::string::npos) return "Normalisations";
  if (any({"bernoulli_", "dropout", "native_dropout", "rand", "randn", "uniform_", "normal_"}))
    return "Random number generation (dropout)";
  return "";
}

}  // namespace

namespace {

void RuleLowUtilization(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  // 1. Is the compute device busy? If not, why: the causes of its idle gaps.
  if (a.busy.has_device && a.busy.busy_pct < t.busy_warning_pct) {
    std::map<std::string, int64_t> by_cause;
    for (const auto& g : a.busy.gaps) by_cause[g.cause] += g.duration_ns;
    std::string dominant = cpu ? "outside operators" : "host-bound";
    int64_t dominant_ns = -1;
    for (const auto& [cause, ns] : by_cause) {
      if (ns > dominant_ns) dominant = cause, dominant_ns = ns;
    }
    std::string causes;
    for (const auto& [cause, ns] : by_cause) {
      causes += fmt::format("{}{} {:.3f} ms", causes.empty() ? "" : ", ", cause, ns / 1e6);
    }
    Finding f{
        "low_device_utilization",
        a.busy.busy_pct < t.busy_critical_pct ? Severity::kCritical : Severity::kWarning,
        cpu ? fmt::format("The CPU runs operators only {:.1f}% of the time", a.busy.busy_pct)
            : fmt::format("The device is busy only {:.1f}% of the time", a.busy.busy_pct),
        fmt::format("{} busy {:.3f} ms of a {:.3f} ms window; the {} longest gaps: {}", unit,
                    a.busy.busy_ns / 1e6, (a.busy.window_end_ns - a.busy.window_begin_ns) / 1e6,
                    a.busy.gaps.size(), causes.empty() ? std::string("none listed") : causes),
        IdleAction(dominant, a)};
    if (!a.busy.gaps.empty()) {
      f.evidence +=
          fmt::format("; the longest gap, {:.3f} ms ({}): {}", a.busy.gaps[0].duration_ns / 1e6,
                      a.busy.gaps[0].cause, a.busy.gaps[0].evidence);
    }
    out.push_back(std::move(f));
  }
}

void RuleCompilation(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  // 1b. Compilation and first-use set-up in the measured window.
  if (!a.busy.compile_ns.empty()) {
    int64_t total = 0;
    std::string kinds;
    for (const auto& [kind, ns] : a.busy.compile_ns) {
      total += ns;
      kinds += fmt::format("{}{} {:.3f} ms", kinds.empty() ? "" : ", ", kind, ns / 1e6);
    }
    const int64_t window = a.busy.window_end_ns - a.busy.window_begin_ns;
    if (total >= t.compile_min_ns && (window <= 0 || Pct(total, window) >= t.compile_pct)) {
      out.push_back({"compilation", Pct(total, window) >= 20 ? Severity::kWarning : Severity::kInfo,
                     fmt::format("Compilation and first-use set-up take {:.3f} ms{}", total / 1e6,
                                 window > 0 ? fmt::format(" ({:.1f}% of the {} window)",
                                                          Pct(total, window), unit)
                                            : std::string()),
                     "host time in: " + kinds, CompileAction(a.busy.compile_ns[0].first)});
    }
  }
}

void RuleLaunchBound(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  // 2. Launch-bound: many tiny kernels, launched as fast as the host can, on an idle device.
  if (a.launch.launch_bound) {
    out.push_back(
        {"launch_bound", Severity::kWarning,
         fmt::format("Launch-bound: {} kernels with a median of {:.1f} us", a.launch.kernels,
                     a.launch.median_kernel_ns / 1e3),
         a.launch.reason,
         "Launch fewer, larger kernels: operator fusion, graph compilation (torch.compile, CUDA "
         "Graphs, graph mode on Ascend), or a larger batch."});
  }
}

void RuleLayout(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  // 3. Layout conversions.
  if (a.layout.device_pct >= t.layout_device_pct || a.layout.host_pct >= t.layout_host_pct) {
    std::string top;
    std::map<std::string, int64_t> families;
    for (const auto& item : a.layout.top) {
      top += fmt::format(
          "{}{} ({}) {:.3f} ms{}{}", top.empty() ? "" : "; ", item.name, item.how,
          item.total_ns / 1e6, item.formats.empty() ? std::string() : ": " + item.formats,
          item.caused_by.empty() ? std::string() : ", launched from " + item.caused_by);
      families[item.family] += item.total_ns;
    }
    std::string action;
    if (families.count("TransData") || families.count("format cast")) {
      action +=
          "On Ascend, keep tensors in the operators' private formats (NZ/5HD) between "
          "operators instead of casting back to ND (torch_npu.npu_format_cast once, outside "
          "the loop), so TransData does not run around each operator. ";
    }
    if (families.count("NCHW<->NHWC")) {
      action +=
          "cuDNN converts between NCHW and NHWC around convolutions: run the model in "
          "channels_last (model.to(memory_format=torch.channels_last) and the inputs too), "
          "so no conversion is needed. ";
    }
    if (families.count("oneDNN reorder")) {
      action +=
          "oneDNN reorders between plain and blocked layouts: keep activations in the "
          "blocked layout between layers (to_mkldnn / channels_last on CPU). ";
    }
    if (families.count("contiguous") || families.count("Transpose")) {
      action +=
          "Tensors are made contiguous (or transposed) in the hot loop: avoid .contiguous() "
          "after permute/transpose where the next operator accepts strided input, or keep "
          "the layout the consumer wants from the start. ";
    }
    if (!action.empty()) action.pop_back();
    out.push_back(
        {"layout_conversions",
         a.layout.device_pct >= 2 * t.layout_device_pct ? Severity::kCritical : Severity::kWarning,
         fmt::format(
             "Layout conversions take {:.1f}% of device time ({:.1f}% of host operator time)",
             a.layout.device_pct, a.layout.host_pct),
         "largest: " + top, action});
  }
}

void RuleTransfers(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  // 4. Memory copies.
  for (const auto& tr : a.transfers) {
    if (tr.share_of_device_pct >= t.transfer_device_pct) {
      // Pageable memory as the trace records it; where it does not say, a
      // host copy's bandwidth suggests it.
      const bool host = tr.direction == "HtoD" || tr.direction == "DtoH";
      const bool recorded = tr.pinned + tr.pageable > 0;
      const bool slow = host && tr.bytes > 0 && tr.gbps < t.pageable_gbps;
      out.push_back(
          {"transfers_" + tr.direction, Severity::kWarning,
           fmt::format("{} copies take {:.1f}% of device time", tr.direction,
                       tr.share_of_device_pct),
           fmt::format("{} copies, {:.3f} ms{}{}", tr.count, tr.total_ns / 1e6,
                       tr.bytes > 0 ? fmt::format(", {:.2f} GB/s", tr.gbps) : std::string(),
                       recorded ? fmt::format(", {} from or to pageable memory, {} pinned",
                                              tr.pageable, tr.pinned)
                                : std::string()),
           std::string("Keep data on the device between steps and overlap copies with compute "
                       "(non_blocking=True)") +
               (recorded && tr.pageable > 0
                    ? "; pageable host memory makes each copy synchronous and slower: use "
                      "pin_memory=True (DataLoader) or tensor.pin_memory()."
                : !recorded && slow
                    ? "; this bandwidth suggests pageable memory: use pin_memory=True."
                    : ".")});
    }
  }
}

void RuleCpuFallback(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  // 5. CPU fallback.
  if (a.fallback.ai_cpu_share_pct >= t.ai_cpu_pct) {
    std::string top;
    for (size_t i = 0; i < a.fallback.ai_cpu_top.size(); ++i) {
      const auto& [name, ns] = a.fallback.ai_cpu_top[i];
      const std::string why = i < a.fallback.ai_cpu_why.size() ? a.fallback.ai_cpu_why[i] : "";
      top += fmt::format("{}{} {:.3f} ms{}", top.empty() ? "" : "; ", name, ns / 1e6,
                         why.empty() ? std::string() : " (" + why + ")");
    }
    out.push_back(
        {"cpu_fallback", Severity::kWarning,
         fmt::format("{} operators run on the AI CPU: {:.1f}% of device time",
                     a.fallback.ai_cpu_count, a.fallback.ai_cpu_share_pct),
         top,
         "Check CPU fallback: these operators lack an AI Core kernel for their data type or shape "
         "(often int64 casts); change the dtype or use a supported operator."});
  }
}

void RuleHostOnly(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  if (!a.fallback.host_only_ops.empty()) {
    out.push_back(
        {"host_only_operators", Severity::kInfo,
         fmt::format("'{}' ran {:.3f} ms on the CPU without launching device work",
                     a.fallback.host_only_ops[0].first, a.fallback.host_only_ops[0].second / 1e6),
         fmt::format("{} such operators of 1 ms or more", a.fallback.host_only_ops.size()),
         "Check whether this work belongs on the device, or runs once outside the step."});
  }
}

void RuleSynchronizations(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  // 6. Synchronizing operators with a long tail.
  for (const auto& lt : a.long_tail) {
    // Host calls that block on the device (device-side waits are not .item()).
    const bool sync = !IsDevice(lt.cls) && IsSyncCall(lt.name);
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
}

void RuleFusion(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  // 7. Fusion.
  int64_t fusible = 0;
  for (const auto& f : a.fusion) fusible += f.consumer_ns;
  if (!a.fusion.empty() &&
      Pct(fusible, cpu ? a.busy.busy_ns : a.device_ns) >= t.fusion_consumer_pct) {
    out.push_back(
        {"fusion", Severity::kInfo,
         fmt::format("Elementwise operators that consume a matmul/conv output take {:.1f}% of "
                     "{} time",
                     Pct(fusible, cpu ? a.busy.busy_ns : a.device_ns), unit),
         fmt::format("most: {} -> {} ({} times; the consumer reads the producer's output, "
                     "shape {})",
                     a.fusion[0].producer, a.fusion[0].consumer, a.fusion[0].count,
                     a.fusion[0].shape),
         "Fuse the epilogue into the matmul/conv (torch.compile, fused kernels), saving a round "
         "trip through memory."});
  }
}

void RuleMixedPrecision(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  // 8. fp32 GEMMs: mixed precision, in the types this device supports.
  if (Pct(a.fp32_gemm_ns, a.device_ns) >= t.fp32_gemm_pct) {
    std::string action;
    if (a.compute_major >= 8) {
      action =
          "Use automatic mixed precision (bf16 or fp16) so matmuls run on tensor cores; for "
          "fp32 accuracy, allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True).";
    } else if (a.compute_major == 7) {
      action =
          "Use automatic mixed precision with fp16 (this GPU, compute capability 7.x, has "
          "fp16 tensor cores but no bf16 or TF32), with a gradient scaler.";
    } else if (a.compute_major >= 0) {
      action = "This GPU (compute capability " + std::to_string(a.compute_major) +
               ".x) has no tensor cores: reduce the work instead, or move to newer hardware.";
    } else {
      action =
          "Use automatic mixed precision in a type the device supports (bf16 or fp16 on "
          "tensor cores) so matmuls run faster.";
    }
    out.push_back({"mixed_precision", Severity::kInfo,
                   fmt::format("fp32 GEMM kernels take {:.1f}% of device time",
                               Pct(a.fp32_gemm_ns, a.device_ns)),
                   "kernels named *sgemm* run in plain fp32 without tensor cores" +
                       (a.device.empty() ? std::string() : " on " + a.device),
                   action});
  }
}

void RuleCommunication(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  // 9. Communication inside (complete) steps.
  int64_t step_ns = 0, comm_ns = 0, complete = 0;
  for (const auto& s : a.steps) {
    if (s.status != "complete") continue;
    step_ns += s.duration_ns, comm_ns += s.communication_ns, ++complete;
  }
  if (Pct(comm_ns, step_ns) >= t.communication_pct) {
    out.push_back(
        {"communication", Severity::kWarning,
         fmt::format("Communication kernels cover {:.1f}% of step time", Pct(comm_ns, step_ns)),
         fmt::format("{} complete steps, {:.3f} ms of communication in {:.3f} ms", complete,
                     comm_ns / 1e6, step_ns / 1e6),
         "Overlap communication with computation (gradient bucketing, DDP overlap) or reduce its "
         "volume (larger buckets, compression)."});
  }
}

void RuleDominantOperator(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  // 10. One operator dominating the compute device.
  {
    const OpStats* top = nullptr;
    int64_t whole = 0;
    int names = 0;  // one operator alone is trivially "dominant"
    for (const OpStats& s : a.operators) {
      const bool on_device = cpu ? s.cls == EventClass::kHostOp : IsDevice(s.cls);
      if (!on_device) continue;
      ++names;
      whole += cpu ? s.self_ns : s.total_ns;
      // Copies and collectives have their own findings.
      // (On the CPU, collectives are framework operators known by name.)
      if (s.cls != EventClass::kKernel && s.cls != EventClass::kHostOp) continue;
      if (s.cls == EventClass::kHostOp && IsCommunication(s.name)) continue;
      if (top == nullptr || (cpu ? s.self_ns > top->self_ns : s.total_ns > top->total_ns)) top = &s;
    }
    const int64_t top_ns = top == nullptr ? 0 : cpu ? top->self_ns : top->total_ns;
    if (top != nullptr && names >= 2 && whole > 0 && Pct(top_ns, whole) >= t.dominant_op_pct) {
      const std::string n = Lower(top->name);
      const bool heavy = Contains(n, "conv") || Contains(n, "gemm") || Contains(n, "mm") ||
                         Contains(n, "matmul") || Contains(n, "linear");
      std::string action =
          heavy ? (cpu ? "It is a matmul/convolution: check its roofline row; on the CPU use "
                         "oneDNN-backed layouts (channels_last), bf16 autocast where the CPU "
                         "supports it (AVX-512 BF16, AMX), and enough intra-op threads "
                         "(torch.set_num_threads)."
                       : "It is a matmul/convolution: check its roofline row for how close it is "
                         "to the device's peak, and its dtype (tensor cores need fp16/bf16/tf32).")
                : fmt::format(
                      "Find why it takes this long: {} calls, mean {:.3f} ms, p99 {:.3f} "
                      "ms; avoid repeated calls or fuse it with its neighbours.",
                      top->count, top->mean_ns / 1e6, top->p99_ns / 1e6);
      out.push_back({"dominant_operator", Severity::kInfo,
                     fmt::format("'{}' takes {:.1f}% of {} {} time", top->name, Pct(top_ns, whole),
                                 cpu ? "operator self" : "device", cpu ? "CPU" : "kernel"),
                     fmt::format("{} calls, {:.3f} ms {}, of {:.3f} ms", top->count, top_ns / 1e6,
                                 cpu ? "self time" : "on the device", whole / 1e6),
                     action});
    } else if (cpu && whole > 0) {
      // No single operator dominates: does one family of framework operators?
      std::map<std::string, std::pair<int64_t, std::string>> families;  // -> self ns, members
      for (const OpStats& s : a.operators) {
        if (s.cls != EventClass::kHostOp) continue;
        const std::string family = OperatorFamily(s.name);
        if (family.empty()) continue;
        auto& [ns, members] = families[family];
        ns += s.self_ns;
        if (s.self_ns * 100 >= whole) {  // name the members of 1% or more
          members += fmt::format("{}{} {:.1f}%", members.empty() ? "" : ", ", s.name,
                                 Pct(s.self_ns, whole));
        }
      }
      const auto best = std::max_element(
          families.begin(), families.end(),
          [](const auto& x, const auto& y) { return x.second.first < y.second.first; });
      if (best != families.end() && Pct(best->second.first, whole) >= t.dominant_op_pct) {
        out.push_back(
            {"dominant_operator", Severity::kInfo,
             fmt::format("{} take {:.1f}% of operator self CPU time", best->first,
                         Pct(best->second.first, whole)),
             fmt::format("{:.3f} ms of {:.3f} ms: {}", best->second.first / 1e6, whole / 1e6,
                         best->second.second),
             best->first == "Matrix multiplies" || best->first == "Convolutions"
                 ? "Check their achieved FLOP/s in the roofline table; on the CPU use oneDNN "
                   "(channels_last for convolutions), bf16 autocast where the CPU supports it "
                   "(AVX-512 BF16, AMX), and enough intra-op threads (torch.set_num_threads)."
                 : "Look for calls that can be avoided or fused (torch.compile fuses "
                   "elementwise and data-movement operators)."});
      }
    }
  }
}

void RuleStepsExcluded(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  // 11. Steps left out of means.
  {
    std::string left_out;
    int excluded = 0;
    for (const auto& s : a.steps) {
      if (s.status == "complete") continue;
      ++excluded;
      if (excluded <= 3) {
        left_out += fmt::format("{}{} ({}: {})", left_out.empty() ? "" : "; ", s.name, s.status,
                                s.status_reason);
      }
    }
    if (excluded > 0) {
      out.push_back(
          {"steps_excluded", Severity::kInfo,
           fmt::format("{} of {} steps are left out of step means", excluded, a.steps.size()),
           left_out + (excluded > 3 ? "; ..." : ""),
           "Nothing to fix: step means, diffs and rank comparisons use the complete "
           "steps only. Record more steps after warm-up for steadier figures."});
    }
  }
}

void RuleRooflineInconsistent(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  // 12. Rooflines above 100%.
  for (const auto& r : a.roofline) {
    if (!r.inconsistent) continue;
    out.push_back(
        {"roofline_inconsistent", Severity::kWarning,
         fmt::format("'{}' measures {:.0f}% of its roofline", r.name, r.pct_of_attainable), r.note,
         "Do not trust this operator's roofline figures until the ceilings match the "
         "device and dtype and the FLOP count is confirmed."});
    break;
  }
}

void RuleUnclassified(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  [[maybe_unused]] const Thresholds& t = c.thresholds;
  [[maybe_unused]] const bool cpu = a.compute_on == ComputeOn::kCpu;
  [[maybe_unused]] const std::string unit = cpu ? "CPU" : "device";
  // 13. Events not understood.
  if (!a.busy.unclassified.empty()) {
    int64_t events = 0;
    std::string cats;
    for (const auto& [category, n] : a.busy.unclassified) {
      events += n;
      cats += fmt::format("{}'{}' {}", cats.empty() ? "" : ", ", category, n);
    }
    out.push_back({"unclassified_events", Severity::kInfo,
                   fmt::format("{} events in categories opscope does not understand", events),
                   "by category: " + cats,
                   "These events are in no figure above (not device work, not host work). If "
                   "they are device work, the busy and idle figures miss them: report the "
                   "category so opscope learns it."});
  }
}

}  // namespace

std::vector<Finding> AdviseSummaries(const ReportedSummaries& summaries, const Analysis& a,
                                     const Thresholds& t) {
  std::vector<Finding> out;
  const bool in_timeline =
      std::any_of(a.busy.compile_ns.begin(), a.busy.compile_ns.end(),
                  [](const auto& k) { return k.first == "ACL operator compilation"; });
  if (!summaries.apis.empty() && !in_timeline) {
    int64_t total = 0, calls = 0, longest = 0;
    std::string apis;
    for (const ReportedApiStat& api : summaries.apis) {
      std::string lower(api.api);
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (!lower.starts_with("aclopcompile") || api.total_ns <= 0) continue;
      total += api.total_ns;
      calls += std::max<int64_t>(0, api.count);
      longest = std::max(longest, api.max_ns);
      apis +=
          fmt::format("{}{} x{} {:.3f} ms (longest {:.3f} ms)", apis.empty() ? "" : ", ", api.api,
                      api.count, api.total_ns / 1e6, std::max<int64_t>(0, api.max_ns) / 1e6);
    }
    const int64_t window = a.busy.window_end_ns - a.busy.window_begin_ns;
    if (total >= t.compile_min_ns && (window <= 0 || Pct(total, window) >= t.compile_pct)) {
      out.push_back(
          {"online_compilation", Pct(total, window) >= 20 ? Severity::kWarning : Severity::kInfo,
           fmt::format(
               "CANN compiles operators online: {:.3f} ms in {} calls{}", total / 1e6, calls,
               window > 0 ? fmt::format(" ({:.1f}% of the device window)", Pct(total, window))
                          : std::string()),
           summaries.apis_source + ": " + apis,
           "Online compilation belongs to warm-up: leave those steps out of what you measure "
           "(schedule warmup/skip_first). If it recurs in steady state: " +
               CompileAction("ACL operator compilation")});
    }
  }
  return out;
}

void SortFindings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& x, const Finding& y) { return x.severity > y.severity; });
}

namespace {

// What to do about operators of one bound: the CANN tuning guides' remedies.
const char* PipelineAction(const std::string& bound) {
  if (bound == "memory-bound (MTE2)") {
    return "They wait on data moved from global memory (HBM) into the AI Core: fuse them with "
           "their neighbours so data stays on chip (fused or foreach kernels for elementwise "
           "chains), remove the format conversions around them, and check their tiling for data "
           "reuse in L1/UB.";
  }
  if (bound.rfind("memory-bound", 0) == 0) {
    return "On-chip data movement (MTE1: L1 to L0A/L0B; MTE3: UB to global memory; fixpipe: L0C "
           "out) limits them: their tiling moves more than it computes; larger tiles, or a kernel "
           "made for these shapes.";
  }
  if (bound == "scalar-bound") {
    return "Scalar instructions (address arithmetic, loop control) dominate: usually dynamic "
           "shapes or tiles too small; use static shapes where the model allows, or a kernel "
           "tiled for these shapes.";
  }
  if (bound == "vector-bound") {
    return "The vector unit is saturated: less vector work (fusion that removes passes over the "
           "data, lower precision), or work moved to the cube unit (expressed as a matmul).";
  }
  if (bound == "cube-bound") {
    return "The cube unit is near its limit, which is efficient; what remains is less work or "
           "lower precision (bf16/fp16, HF32 for fp32 matmuls).";
  }
  return "No pipe is busy: the cores wait on synchronisation between pipes or on dependencies, "
         "or the operator uses too few cores (compare its blocks with the chip's AI Cores); "
         "tiling that overlaps copies with compute (double buffering) and more blocks help.";
}

}  // namespace

std::vector<Finding> AdvisePipeline(const PipeTable& table, const Thresholds& t) {
  std::vector<Finding> out;
  int64_t measured_ns = 0;
  std::map<std::string, std::vector<const OpPipes*>> by_bound;
  for (const OpPipes& op : table.ops) {
    if (op.measured == 0) continue;
    measured_ns += op.total_ns;
    if (!op.bound.empty()) by_bound[op.bound].push_back(&op);  // ops are by time, descending
  }
  if (measured_ns <= 0) return out;
  std::vector<std::pair<double, Finding>> found;
  for (const auto& [bound, ops] : by_bound) {
    int64_t ns = 0;
    for (const OpPipes* op : ops) ns += op->total_ns;
    const double pct = Pct(ns, measured_ns);
    if (pct < t.ai_core_bound_pct) continue;
    std::string evidence;
    for (size_t i = 0; i < ops.size() && i < 3; ++i) {
      evidence += fmt::format("{}{} ({}, {:.3f} ms: {})", i == 0 ? "" : "; ", ops[i]->name,
                              ops[i]->type.empty() ? ops[i]->core : ops[i]->type,
                              ops[i]->total_ns / 1e6, ops[i]->evidence);
    }
    found.push_back(
        {pct,
         {"ai_core_" + bound, bound == "cube-bound" ? Severity::kInfo : Severity::kWarning,
          fmt::format("AI Core, {}: {} operator{}, {:.1f}% of the time of tasks with PMU ratios",
                      bound, ops.size(), ops.size() == 1 ? "" : "s", pct),
          evidence, PipelineAction(bound)}});
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [pct, finding] : found) out.push_back(std::move(finding));
  SortFindings(out);
  return out;
}

namespace {

void RulePipeline(const RuleContext& c, std::vector<Finding>& out) {
  if (c.reported == nullptr || !c.reported->pipes) return;
  for (Finding& f : AdvisePipeline(*c.reported->pipes, c.thresholds)) out.push_back(std::move(f));
}

void RuleOnlineCompilation(const RuleContext& c, std::vector<Finding>& out) {
  if (c.reported == nullptr) return;
  for (Finding& f : AdviseSummaries(c.reported->summaries, c.analysis, c.thresholds)) {
    out.push_back(std::move(f));
  }
}

}  // namespace

namespace {}  // namespace

// Rules in files of their own (rules/), declared here beside their entry.
Rule ExposedCommunicationRule();  // rules/exposed_communication.cc

namespace {

// The advisor's own rules, over the results of analysis.h's passes and the
// reported tables.
std::vector<Rule> AdvisorRules() {
  return {
      {"low_device_utilization",
       {"device_busy"},
       [](const Thresholds& t) {
         return fmt::format(
             "the compute device (the CPU threads that run operators, when the trace has no "
             "device work) is busy under {:g}% of its window (critical under {:g}%); the action "
             "follows the cause that holds most of the longest idle gaps",
             t.busy_warning_pct, t.busy_critical_pct);
       },
       RuleLowUtilization},
      {"compilation",
       {"device_busy"},
       [](const Thresholds& t) {
         return fmt::format(
             "host calls of compilation or first-use set-up (torch.compile, ACL operator "
             "compilation, module loads, allocations) take at least {:g} ms and {:g}% of the "
             "compute window (a warning from 20%)",
             t.compile_min_ns / 1e6, t.compile_pct);
       },
       RuleCompilation},
      {"launch_bound",
       {"launch"},
       [](const Thresholds&) {
         return std::string(
             "the launch pass's preconditions all hold (see passes/launch.h): many short "
             "kernels, a mostly idle device, launch calls filling the idle time");
       },
       RuleLaunchBound},
      {"layout_conversions",
       {"layout"},
       [](const Thresholds& t) {
         return fmt::format(
             "layout conversions (TransData, NCHW<->NHWC, oneDNN reorders, contiguous) take "
             "{:g}% or more of device time or {:g}% of host operator time (critical from {:g}% "
             "of device time)",
             t.layout_device_pct, t.layout_host_pct, 2 * t.layout_device_pct);
       },
       RuleLayout},
      {"transfers_<direction>",
       {"transfers"},
       [](const Thresholds& t) {
         return fmt::format(
             "copies of one direction take {:g}% or more of device time; host-device copies "
             "under {:g} GB/s are said to suggest pageable memory",
             t.transfer_device_pct, t.pageable_gbps);
       },
       RuleTransfers},
      {"cpu_fallback",
       {"cpu_fallback"},
       [](const Thresholds& t) {
         return fmt::format("AI CPU tasks take {:g}% or more of device time", t.ai_cpu_pct);
       },
       RuleCpuFallback},
      {"host_only_operators",
       {"cpu_fallback"},
       [](const Thresholds&) {
         return std::string(
             "framework operators of 1 ms or more (waits for the device aside) during which no "
             "launch call ran, in a trace with device work and launch calls");
       },
       RuleHostOnly},
      {"synchronizations",
       {"long_tail"},
       [](const Thresholds& t) {
         return fmt::format(
             "a host call that waits for the device (.item(), synchronize, blocking copies) "
             "has a p99 {:g}x its median or more (10+ calls)",
             t.sync_tail_ratio);
       },
       RuleSynchronizations},
      {"fusion",
       {"fusion", "device_busy", "device_time"},
       [](const Thresholds& t) {
         return fmt::format(
             "elementwise operators that read a matmul/convolution output (matched by shape) "
             "take {:g}% or more of the compute device's time",
             t.fusion_consumer_pct);
       },
       RuleFusion},
      {"mixed_precision",
       {"device_time"},
       [](const Thresholds& t) {
         return fmt::format(
             "fp32 GEMM kernels (*sgemm*) take {:g}% or more of device time; the advice follows "
             "the GPU's compute capability",
             t.fp32_gemm_pct);
       },
       RuleMixedPrecision},
      {"communication",
       {"steps"},
       [](const Thresholds& t) {
         return fmt::format("communication kernels cover {:g}% or more of complete steps' time",
                            t.communication_pct);
       },
       RuleCommunication},
      {"dominant_operator",
       {"op_stats"},
       [](const Thresholds& t) {
         return fmt::format(
             "one operator (copies, sets and collectives aside; two or more operators present) "
             "takes {:g}% or more of the compute device's time; on the CPU, else one family of "
             "framework operators (matrix multiplies, convolutions, data movement, ...)",
             t.dominant_op_pct);
       },
       RuleDominantOperator},
      {"steps_excluded",
       {"steps"},
       [](const Thresholds&) {
         return std::string("steps are left out of step means (warm-up, partial or empty)");
       },
       RuleStepsExcluded},
      {"roofline_inconsistent",
       {"roofline"},
       [](const Thresholds&) {
         return std::string("an operator measures more than 100% of its roofline");
       },
       RuleRooflineInconsistent},
      {"unclassified_events",
       {"device_busy"},
       [](const Thresholds&) {
         return std::string("events of categories opscope does not understand are present");
       },
       RuleUnclassified},
      {"ai_core_<bound>",
       {},
       [](const Thresholds& t) {
         return fmt::format(
             "the rank has an AI Core pipeline (PMU ratios per task) and the operators of one "
             "bound take {:g}% or more of the time of the tasks with ratios",
             t.ai_core_bound_pct);
       },
       RulePipeline},
      {"online_compilation",
       {"device_busy"},
       [](const Thresholds& t) {
         return fmt::format(
             "the rank's host API statistics hold aclopCompile* calls of at least {:g} ms and "
             "{:g}% of the device window, and the timeline does not already show them",
             t.compile_min_ns / 1e6, t.compile_pct);
       },
       RuleOnlineCompilation},
      ExposedCommunicationRule(),
  };
}

}  // namespace

const std::vector<Rule>& Rules() {
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> all = AdvisorRules();
    for (const Pass& pass : Passes()) all.insert(all.end(), pass.rules.begin(), pass.rules.end());
    return all;
  }();
  return rules;
}

std::vector<Finding> Advise(const RuleContext& context) {
  std::vector<Finding> out;
  // A rule whose passes did not run (AnalysisOptions::passes) has no input.
  const auto ran = [&](std::string_view pass) {
    const auto& ms = context.analysis.pass_ms;
    return ms.empty() ||
           std::any_of(ms.begin(), ms.end(), [&](const auto& p) { return p.first == pass; });
  };
  for (const Rule& rule : Rules()) {
    if (std::all_of(rule.needs.begin(), rule.needs.end(), ran)) rule.apply(context, out);
  }
  SortFindings(out);
  return out;
}

std::vector<Finding> Advise(const Analysis& analysis, const Thresholds& thresholds) {
  return Advise(RuleContext{analysis, thresholds});
}

}  // namespace opscope::analyze
