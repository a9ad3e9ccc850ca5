// All device event time, and the share of it in fp32 GEMM kernels: the pass
// and its mixed-precision rule.
#include "analyze/passes/device_time.h"

#include <fmt/format.h>

#include "analyze/analysis.h"

namespace opscope::analyze {
namespace {

// fp32 GEMMs: mixed precision, in the types this device supports.
void MixedPrecisionRule(const RuleContext& c, std::vector<Finding>& out) {
  const Analysis& a = c.analysis;
  if (Pct(a.fp32_gemm_ns, a.device_ns) < c.thresholds.fp32_gemm_pct ||
      a.fp32_gemm_ns < c.thresholds.min_judged_ns) {
    return;
  }
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

}  // namespace

Pass DeviceTimePass() {
  return {
      "device_time",
      "How much device time is there, and how much of it is fp32 GEMM?",
      {},
      [](const TraceModel& model, Analysis& a) {
        for (size_t e = 0; e < model.size(); ++e) {
          if (!IsDevice(model.cls[e])) continue;
          a.device_ns += model.duration_ns[e];
          const std::string_view name = model.String(model.name[e]);
          if (model.cls[e] == EventClass::kKernel && name.find("sgemm") != std::string_view::npos) {
            a.fp32_gemm_ns += model.duration_ns[e];
          }
        }
      },
      nullptr,
      {{"mixed_precision",
        {"device_time"},
        [](const Thresholds& t) {
          return fmt::format(
              "fp32 GEMM kernels (*sgemm*) take {:g}% or more of device time and {:g} ms; the "
              "advice follows the GPU's compute capability",
              t.fp32_gemm_pct, t.min_judged_ns / 1e6);
        },
        MixedPrecisionRule}}};
}

}  // namespace opscope::analyze
