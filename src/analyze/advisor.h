// The advisor: the method of the field guides as explicit rules. Every
// threshold is in Thresholds; every finding carries its severity, the evidence
// (numbers and the events behind them) and the action recommended.
#ifndef OPSCOPE_ANALYZE_ADVISOR_H_
#define OPSCOPE_ANALYZE_ADVISOR_H_

#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/reported.h"

namespace opscope::analyze {

struct Thresholds {
  double busy_critical_pct = 50;     // device busy below this: critical
  double busy_warning_pct = 80;      // below this: warning
  double layout_device_pct = 10;     // layout conversions, share of device time
  double layout_host_pct = 15;       // share of host operator time
  double transfer_device_pct = 10;   // memory copies, share of device time
  double pageable_gbps = 8;          // host-device copies slower than this: pageable memory
  double ai_cpu_pct = 5;             // AI CPU tasks, share of device time
  double sync_tail_ratio = 10;       // .item()-like operators with p99/p50 above this
  double fusion_consumer_pct = 5;    // elementwise consumers' share of device time
  double fp32_gemm_pct = 20;         // fp32 GEMM share of device time: consider AMP
  double communication_pct = 20;     // communication share of step time
  double compile_pct = 5;            // compilation share of the compute window
  int64_t compile_min_ns = 1000000;  // ... and at least this long
  double dominant_op_pct = 30;       // one operator's share of compute time
  double ai_core_bound_pct = 10;     // operators of one bound, share of AI Core task time
};

enum class Severity { kInfo, kWarning, kCritical };
const char* Name(Severity severity);

struct Finding {
  std::string id;  // stable: "low_device_utilization"
  Severity severity;
  std::string title;
  std::string evidence;
  std::string action;
};

// What a rule reads: a trace's analysis, the thresholds, and what the
// producer reported beside the timeline (reported.h; null: nothing).
struct RuleContext {
  const Analysis& analysis;
  const Thresholds& thresholds;
  const ReportedTables* reported = nullptr;
};

// An advisor rule: the finding it makes (its id; "<...>" stands for a part
// the finding fills in), the passes whose results it reads (it is not applied
// when one did not run), when it fires (its preconditions in words, with the
// thresholds' values), and the rule itself, which appends its findings.
struct Rule {
  std::string_view id;
  std::vector<std::string_view> needs;
  std::string (*when)(const Thresholds& thresholds);
  void (*apply)(const RuleContext& context, std::vector<Finding>& out);
};

// Every rule, in the order they are applied: the only place a rule is
// registered (`opscope analyze --list-rules` and docs/rules.md list them).
const std::vector<Rule>& Rules();

// Every rule applied to a trace, the findings most severe first.
std::vector<Finding> Advise(const RuleContext& context);
// The same without side tables.
std::vector<Finding> Advise(const Analysis& analysis, const Thresholds& thresholds = {});

// The pipes of the compute cores (reported.h: PipeTable): one finding per kind of
// bound whose operators take at least ai_core_bound_pct of the time of the
// tasks with PMU ratios, naming the largest operators and their ratios.
std::vector<Finding> AdvisePipeline(const PipeTable& table, const Thresholds& thresholds = {});

// The producer's summaries (reported.h): online operator compilation from
// the host API statistics' aclopCompile* rows, when the timeline did
// not already show it (a Level0 timeline has no CANN layer), at least
// compile_min_ns long and, where the timeline gives a window, compile_pct of it.
std::vector<Finding> AdviseSummaries(const ReportedSummaries& summaries, const Analysis& analysis,
                                     const Thresholds& thresholds = {});

// Most severe first, the order within a severity kept.
void SortFindings(std::vector<Finding>& findings);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_ADVISOR_H_
