// The compute cores' pipes, from the per-task PMU ratios the producer
// reported (reported.h: PipeTable; the AI Core pipe ratios of msprof's and
// torch_npu's kernel_details / op_summary): one finding per kind of bound
// whose operators take a large share of the measured time. A rule in a file
// of its own, registered with one line in advisor.cc's list (docs/seams.md).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyze/advisor.h"
#include "analyze/analysis.h"
#include "analyze/passes/attribution.h"
#include "analyze/reported.h"
#include "analyze/rule.h"

namespace opscope::analyze {
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

std::vector<Finding> AdvisePipeline(const PipeTable& table, const Thresholds& t,
                                    int64_t window_ns) {
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
    // On a device that mostly does other things (communication, waiting),
    // these operators are a small part of the run: said, not warned about.
    const bool small = SmallInWindow(ns, window_ns);
    if (small) {
      evidence += fmt::format(
          ". They take {:.3f} ms, {:.1f}% of the diagnosed window: speeding them up would save "
          "little of the run",
          ns / 1e6, Pct(ns, window_ns));
    }
    found.push_back(
        {pct,
         {"ai_core_" + bound, bound == "cube-bound" || small ? Severity::kInfo : Severity::kWarning,
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

// Shapes the AI Core handles poorly, as msprof-analyze's advisor checks them
// (reported.h: FamilyVerdict): matmuls whose inner axes are not multiples of
// 256, FlashAttention whose head dim or sequence is not a multiple of 128.
void ApplyAffinity(const RuleContext& c, std::vector<Finding>& out) {
  if (c.reported == nullptr || !c.reported->pipes) return;
  const PipeTable& p = *c.reported->pipes;
  int64_t ns = 0, shapes = 0;
  std::string evidence;
  bool cube = false, attention = false;
  for (const FamilyVerdict& v : p.families) {
    if (v.verdict != "not affine") continue;
    ns += v.total_ns, ++shapes;
    cube = cube || v.family == "cube", attention = attention || v.family != "cube";
    if (shapes <= 3) {
      evidence += fmt::format("{}{} '{}' x{} ({:.3f} ms, shapes {}): {}", shapes == 1 ? "" : "; ",
                              v.family, v.name, v.count, v.total_ns / 1e6, v.shapes, v.detail);
    }
  }
  if (shapes == 0 || p.task_ns <= 0) return;
  if (shapes > 3) evidence += fmt::format("; {} more (the ai_core_families table)", shapes - 3);
  const double pct = Pct(ns, p.task_ns);
  const auto* at = c.analysis.results.Get<Attribution>(kAttributionPass);
  const bool small = at != nullptr && SmallInWindow(ns, at->window_ns);
  if (small) {
    evidence += fmt::format(
        ". They take {:.1f}% of the diagnosed window: reshaping them would save little of the run",
        Pct(ns, at->window_ns));
  }
  std::string action;
  if (cube) {
    action +=
        "Pad or choose matmul dimensions so both inner axes are multiples of 256 (hidden sizes, "
        "vocabulary, the batch times sequence of a reshaped input): the cube then tiles them "
        "without remainder loops. ";
  }
  if (attention) {
    action +=
        "Keep FlashAttention's head dim and sequence length multiples of 128 (pad the sequence, "
        "or bucket variable lengths to multiples of 128). ";
  }
  action += "msprof-analyze's advisor gives the same shape checks (AI Core performance analysis).";
  out.push_back(
      {"ai_core_shapes",
       pct >= c.thresholds.ai_core_bound_pct && !small ? Severity::kWarning : Severity::kInfo,
       fmt::format("AI Core operators with shapes the cores handle poorly: {} shape{}, "
                   "{:.1f}% of the task time",
                   shapes, shapes == 1 ? "" : "s", pct),
       evidence, action});
}

void Apply(const RuleContext& c, std::vector<Finding>& out) {
  if (c.reported == nullptr || !c.reported->pipes) return;
  const auto* at = c.analysis.results.Get<Attribution>(kAttributionPass);
  for (Finding& f : AdvisePipeline(*c.reported->pipes, c.thresholds, at ? at->window_ns : 0)) {
    out.push_back(std::move(f));
  }
}

}  // namespace

Rule AiCoreBoundRule() {
  return {"ai_core_<bound>",
          {},
          [](const Thresholds& t) {
            return fmt::format(
                "the rank has an AI Core pipeline (PMU ratios per task) and the operators of one "
                "bound take {:g}% or more of the time of the tasks with ratios (info where they "
                "take under {:g}% of the diagnosed window, or are cube-bound)",
                t.ai_core_bound_pct, kPipeWindowPct);
          },
          Apply};
}

Rule AiCoreShapesRule() {
  return {"ai_core_shapes",
          {},
          [](const Thresholds& t) {
            return fmt::format(
                "the rank's kernel_details has PMU ratios and shapes, and operators of the "
                "families msprof-analyze's advisor checks have shapes it calls not affine "
                "(matmuls moving 100 MB or more whose inner axes are not multiples of 256; "
                "FlashAttention whose head dim or sequence is not a multiple of 128); a warning "
                "from {:g}% of the task time and {:g}% of the diagnosed window",
                t.ai_core_bound_pct, kPipeWindowPct);
          },
          ApplyAffinity};
}

}  // namespace opscope::analyze
