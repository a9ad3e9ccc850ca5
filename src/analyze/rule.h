// An advisor rule and what it reads and makes: the thresholds, a finding,
// the rule's context. Rules live with the analysis they read (a pass's file,
// passes/pass.h), or, when they read what a producer reported, a file of
// their own in rules/; advisor.h applies them all.
#ifndef OPSCOPE_ANALYZE_RULE_H_
#define OPSCOPE_ANALYZE_RULE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::analyze {

struct Analysis;
struct ReportedTables;

struct Thresholds {
  double busy_critical_pct = 50;    // device busy below this: critical
  double busy_warning_pct = 80;     // below this: warning
  double layout_device_pct = 10;    // layout conversions, share of device time
  double layout_host_pct = 15;      // share of host operator time
  double transfer_device_pct = 10;  // memory copies, share of device time
  // The least time a rule's subject (copies of one direction, a dominant
  // operator, fp32 GEMMs) must take to be judged: less cannot matter.
  int64_t min_judged_ns = 1000000;
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
  // What fixing it would save, projected on the window the finding is about
  // (the attribution's states are exclusive, so savings of different states
  // never count the same instant twice); -1: the finding projects none.
  int64_t saving_ns = -1;
};

// What a rule reads: a trace's analysis, the thresholds, and what the
// producer reported beside the timeline (reported.h; null: nothing).
struct RuleContext {
  const Analysis& analysis;
  const Thresholds& thresholds;
  const ReportedTables* reported = nullptr;
};

// Whether compute that does not already overlap communication could hide the
// exposed communication: the advice to overlap it stands only where there is
// at least half as much such compute (the steps' rule, the producer's
// breakdown and the step-time diagnosis judge it alike).
inline bool ComputeCanHide(int64_t free_compute_ns, int64_t exposed_ns) {
  return 2 * free_compute_ns >= exposed_ns;
}

// `part` as a percentage of `whole`; 0 when `whole` is not positive.
inline double Pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

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

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_RULE_H_
