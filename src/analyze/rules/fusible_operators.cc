// Recurring runs of operators worth fusing, from the AI Core task list the
// producer reported (reported.h: PipeTable::fusible, FusibleSequence): the
// rule of msprof-analyze's advisor's FusibleOperatorChecker (its rules/en/
// fusible_operator.yaml), with the differences fusible_sequences.h lists. A
// run is host-bound where the device waits between its operators for the
// host to dispatch the next one, MTE-bound where its operators move data
// more than they compute; fusing either kind into one operator removes the
// waits between them or the round trips through global memory. A rule in a
// file of its own, registered with one line in advisor.cc's list
// (docs/seams.md).
#include <fmt/format.h>

#include "analyze/advisor.h"
#include "analyze/analysis.h"
#include "analyze/reported.h"
#include "analyze/rule.h"

namespace opscope::analyze {
namespace {

// The share of the tasks' span the runs put at stake (reported.h:
// FusibleStake) from which the rule warns:
// msprof-analyze's advisor calls the finding's priority low under it
// (FusibleOperatorChecker's _LOW_PRIORITY, 0.3).
constexpr double kWarningPct = 30;

void Apply(const RuleContext& c, std::vector<Finding>& out) {
  if (c.reported == nullptr || !c.reported->pipes || c.reported->pipes->fusible.empty()) return;
  const PipeTable& p = *c.reported->pipes;
  int64_t stake_ns = 0, idle_ns = 0, mte_device_ns = 0, host = 0, mte = 0;
  for (const FusibleSequence& f : p.fusible) {
    stake_ns += FusibleStake(f);
    if (f.host_bound) idle_ns += f.idle_ns, ++host;
    if (f.mte_bound) mte_device_ns += f.device_ns, ++mte;
  }
  std::string evidence;
  for (size_t i = 0; i < p.fusible.size() && i < 3; ++i) {
    const FusibleSequence& f = p.fusible[i];
    evidence += fmt::format(
        "{}'{}' x{} from row {}: spans {:.3f} ms, the device idle {:.1f}% of it, its operators "
        "{:.3f} ms{}",
        i == 0 ? "" : "; ", f.operators, f.count, f.first_row, f.wall_ns / 1e6,
        Pct(f.idle_ns, f.wall_ns), f.device_ns / 1e6,
        f.mte_share >= 0
            ? fmt::format(", data movement {:.1f}% of their cores' time", 100 * f.mte_share)
            : std::string());
  }
  if (p.fusible.size() > 3) {
    evidence += fmt::format("; {} more (the fusible_sequences table)", p.fusible.size() - 3);
  }
  evidence +=
      ". Fusing each run into one operator saves at most the idle time between its operators "
      "(host-bound runs) and part of its operators' time (MTE-bound: the round trips through "
      "global memory)";
  std::string kinds;
  if (host > 0) {
    kinds = fmt::format("{} host-bound, the device idle {:.3f} ms between their operators", host,
                        idle_ns / 1e6);
  }
  if (mte > 0) {
    kinds += fmt::format("{}{} bound by data movement, {:.3f} ms of device time",
                         kinds.empty() ? "" : "; ", mte, mte_device_ns / 1e6);
  }
  std::string action;
  if (host > 0) {
    action +=
        "The host issues these operators one by one and the device idles between them: fuse them "
        "(a fused operator or torch_npu's fused APIs, torch.compile or graph mode), or find the "
        "code that issues them (profile with with_stack=True; the rows locate them in the task "
        "list) and replace what the NPU runs poorly. ";
  }
  if (mte > 0) {
    action +=
        "Their operators move data between global memory and the cores more than they compute: "
        "one fused kernel keeps the intermediates on chip. ";
  }
  action += "msprof-analyze's advisor seeks the same runs (Fusible Operator Analysis).";
  const double pct = Pct(stake_ns, p.sequence_span_ns);
  out.push_back({"fusible_operators", pct >= kWarningPct ? Severity::kWarning : Severity::kInfo,
                 fmt::format("{} recurring run{} of operators worth fusing, {:.3f} ms at stake "
                             "({:.1f}% of the tasks' span, {:.3f} ms): {}",
                             p.fusible.size(), p.fusible.size() == 1 ? "" : "s", stake_ns / 1e6,
                             pct, p.sequence_span_ns / 1e6, kinds),
                 evidence, action});
}

}  // namespace

Rule FusibleOperatorsRule() {
  return {"fusible_operators",
          {},
          [](const Thresholds&) {
            return fmt::format(
                "the rank's task list (kernel_details, op_summary or the database's tasks) has "
                "start times, and a run of {} to {} consecutive compute tasks with the same "
                "names and shapes recurs {} times or more (no task counted in two runs), its "
                "operators waiting for the host for more than {:g}% of the run's span (no "
                "compute task runs, and no other task ends within {} us before the next "
                "operator starts, and no task of a graph model: host-bound; the runs take {:g}% "
                "or more of the tasks' span) or "
                "data movement over {:g}% of its cores' time "
                "(MTE-bound; needs the PMU's MTE times), as msprof-analyze's fusible-operator "
                "rule; a warning where what they put at stake (the host-bound runs' idle time, the "
                "MTE-bound runs' device time) is {:g}% or more of the tasks' span",
                kFusibleMinLength, kFusibleMaxLength, kFusibleMinCount,
                100 * (1 - kFusibleHostShare), kFusibleDependencyNs / 1000, 100 * kFusibleSpanShare,
                100 * kFusibleMteShare, kWarningPct);
          },
          Apply};
}

}  // namespace opscope::analyze
