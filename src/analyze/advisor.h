// The advisor: the method of the field guides as explicit rules. Every
// threshold is in Thresholds; every finding carries its severity, the evidence
// (numbers and the events behind them) and the action recommended.
#ifndef OPSCOPE_ANALYZE_ADVISOR_H_
#define OPSCOPE_ANALYZE_ADVISOR_H_

#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/reported.h"
#include "analyze/rule.h"

namespace opscope::analyze {

// Every rule, in the order they are applied: those of each analysis pass
// (Pass::rules, in the passes' order), then those in files of their own
// (rules/, registered in advisor.cc). `opscope analyze --list-rules` and
// docs/rules.md list them.
const std::vector<Rule>& Rules();

// Every rule applied to a trace, the findings most severe first.
std::vector<Finding> Advise(const RuleContext& context);
// The same without side tables.
std::vector<Finding> Advise(const Analysis& analysis, const Thresholds& thresholds = {});

// The pipes of the compute cores (reported.h: PipeTable; rules/ai_core_bound.cc): one finding per
// kind of bound whose operators take at least ai_core_bound_pct of the time of the tasks with PMU
// ratios, naming the largest operators and their ratios.
// `window_ns`: the diagnosed window (Attribution::window_ns), 0 unknown: a
// bound whose operators take under kPipeWindowPct% of it is said as info.
inline constexpr double kPipeWindowPct = 5;
// Whether operators of `ns` are that small a part of a diagnosed window of
// `window_ns` (0 unknown: not small).
inline bool SmallInWindow(int64_t ns, int64_t window_ns) {
  return window_ns > 0 && Pct(ns, window_ns) < kPipeWindowPct;
}
std::vector<Finding> AdvisePipeline(const PipeTable& table, const Thresholds& thresholds = {},
                                    int64_t window_ns = 0);

// The producer's summaries (reported.h; rules/online_compilation.cc): online operator compilation
// from the host API statistics' aclopCompile* rows, when the timeline did not already show it (a
// Level0 timeline has no CANN layer), at least compile_min_ns long and, where the timeline gives a
// window, compile_pct of it.
std::vector<Finding> AdviseSummaries(const ReportedSummaries& summaries, const Analysis& analysis,
                                     const Thresholds& thresholds = {});

// Most severe first, then the larger saving, then the step-time diagnosis
// (step_*), the order otherwise kept.
void SortFindings(std::vector<Finding>& findings);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_ADVISOR_H_
