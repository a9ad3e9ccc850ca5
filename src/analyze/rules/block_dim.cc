// Operators whose blocks do not divide evenly over the chip's cores, from the
// AI Core pipeline the producer reported (reported.h: PipeTable, each
// operator's blocks per task) and the chip its run recorded (ReportedChip:
// info.json's ai_core_num and aiv_num). The rule is msprof-analyze's
// advisor's BlockDimChecker: a task on the AI Core, the AI Vector core or
// mixed (AI_CORE, AI_VECTOR_CORE, MIX_AIC) whose block dim is not a multiple
// of the cores it runs on (the AI Cores for AI_CORE, or where the vector
// cores are not recorded; else the vector cores) leaves cores idle in its
// last wave. Here per operator, with its blocks per task where every task
// has the same (a mean that is a whole number), among the operators with
// hardware counters. As msprof-analyze's checker, a MIX_AIC operator whose
// mix block dim (its vector blocks, kernel_details' Mix Block Dim or Mix
// Block Num) is a multiple of the vector cores is exempt: its vector part
// fills every vector core (the SQLite export's tasks carry no mix block dim,
// so there none is exempt). A rule in a file of its own, registered with one
// line in advisor.cc's list (docs/seams.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyze/advisor.h"
#include "analyze/analysis.h"
#include "analyze/passes/attribution.h"
#include "analyze/reported.h"
#include "analyze/rule.h"

namespace opscope::analyze {
namespace {

// The uneven operators' share of the counted task time from which the rule
// warns.
constexpr double kWarningPct = 20;

// A per-task mean of blocks that is a whole number (every task runs the same),
// else -1.
int64_t WholeBlocks(double mean) {
  if (!(mean >= 1) || std::fabs(mean - std::round(mean)) > 1e-9) return -1;
  return std::llround(mean);
}

// The cores an operator's blocks run on: the AI Cores for AI_CORE, or where
// the vector cores are not recorded; else the vector cores.
int CoresOf(const OpPipes& op, const ReportedChip& chip) {
  return op.core == "AI_CORE" || chip.vector_cores == 0 ? chip.cores : chip.vector_cores;
}

void Apply(const RuleContext& c, std::vector<Finding>& out) {
  if (c.reported == nullptr || !c.reported->chip || c.reported->chip->cores <= 0 ||
      !c.reported->pipes) {
    return;
  }
  const ReportedChip& chip = *c.reported->chip;
  int64_t total_ns = 0, uneven_ns = 0;
  std::vector<const OpPipes*> uneven;
  for (const OpPipes& op : c.reported->pipes->ops) {
    total_ns += op.total_ns;
    if (op.core != "AI_CORE" && op.core != "AI_VECTOR_CORE" && op.core != "MIX_AIC") continue;
    const int64_t blocks = WholeBlocks(op.mean_blocks);
    if (blocks < 0 || blocks % CoresOf(op, chip) == 0) continue;
    const int64_t mix = WholeBlocks(op.mean_mix_blocks);
    if (op.core == "MIX_AIC" && chip.vector_cores > 0 && mix > 0 && mix % chip.vector_cores == 0) {
      continue;
    }
    uneven.push_back(&op);
    uneven_ns += op.total_ns;
  }
  if (uneven.empty()) return;
  std::stable_sort(uneven.begin(), uneven.end(),
                   [](const OpPipes* a, const OpPipes* b) { return a->total_ns > b->total_ns; });
  std::string evidence;
  for (size_t i = 0; i < uneven.size() && i < 3; ++i) {
    const OpPipes& op = *uneven[i];
    evidence +=
        fmt::format("{}{} ({}, {:.3f} ms: {} blocks on {} cores)", i == 0 ? "" : "; ", op.name,
                    op.core, op.total_ns / 1e6, WholeBlocks(op.mean_blocks), CoresOf(op, chip));
  }
  if (uneven.size() > 3) evidence += fmt::format("; {} more", uneven.size() - 3);
  evidence += fmt::format(" (the chip from {})", chip.source);
  const double pct = Pct(uneven_ns, total_ns);
  // Judged by what they could cost the run, as the AI Core bounds are: under
  // kPipeWindowPct of the diagnosed window they are info.
  const auto* at = c.analysis.results.Get<Attribution>(kAttributionPass);
  const bool small = at != nullptr && SmallInWindow(uneven_ns, at->window_ns);
  if (small) {
    evidence += fmt::format(
        ". They take {:.1f}% of the diagnosed window: filling their last waves would save little "
        "of the run",
        Pct(uneven_ns, at->window_ns));
  }
  out.push_back(
      {"block_dim", pct >= kWarningPct && !small ? Severity::kWarning : Severity::kInfo,
       fmt::format("{} operator{} run a number of blocks that the chip's {} AI cores{} do not "
                   "divide: {:.1f}% of the time of tasks with counters",
                   uneven.size(), uneven.size() == 1 ? "" : "s", chip.cores,
                   chip.vector_cores > 0 ? fmt::format(" ({} vector cores)", chip.vector_cores)
                                         : std::string(),
                   pct),
       evidence,
       "In each operator's last wave some cores idle: tile it so that its blocks are a "
       "multiple of the cores (a shape that divides evenly, or the operator's tiling options), "
       "or, for small operators, fuse them so that one launch fills the chip."});
}

}  // namespace

Rule BlockDimRule() {
  return {"block_dim",
          {},
          [](const Thresholds&) {
            return fmt::format(
                "the run recorded the chip's AI cores (info.json) and an AI Core pipeline; an "
                "operator on the AI Core, vector or mixed cores runs the same whole number of "
                "blocks in each task and not a multiple of its cores (msprof-analyze's block dim "
                "check; a mixed operator whose mix block dim is a multiple of the vector cores "
                "is exempt); a warning where such operators take {:g}% of the time of tasks with "
                "counters and {:g}% of the diagnosed window",
                kWarningPct, kPipeWindowPct);
          },
          Apply};
}

}  // namespace opscope::analyze
