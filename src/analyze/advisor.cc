// The advisor: every registered rule applied to a trace's analysis. Rules live
// with the analysis they read (Pass::rules, passes/pass.h) or, when they read
// what a producer reported, in a file of their own in rules/, registered in
// the list below with one line.
#include "analyze/advisor.h"

#include <algorithm>

#include "analyze/passes/attribution.h"
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

// By severity, then by what fixing each would save (those that project no
// saving last), then the step-time diagnosis, then in the rules' order.
void SortFindings(std::vector<Finding>& findings) {
  // Of findings as severe that save as much, the step-time diagnosis first:
  // it says what decided the window the others are parts of.
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& x, const Finding& y) {
    if (x.severity != y.severity) return x.severity > y.severity;
    if (x.saving_ns != y.saving_ns) return x.saving_ns > y.saving_ns;
    return x.id.starts_with("step_") && !y.id.starts_with("step_");
  });
}

// The rules in files of their own (rules/), one line each.
Rule AiCoreBoundRule();           // rules/ai_core_bound.cc
Rule AiCoreShapesRule();          // rules/ai_core_bound.cc
Rule OnlineCompilationRule();     // rules/online_compilation.cc
Rule ExposedCommunicationRule();  // rules/exposed_communication.cc
Rule SmallPacketsRule();          // rules/small_packets.cc
Rule RdmaRetransmissionRule();    // rules/rdma_retransmission.cc
Rule EnvironmentRule();           // rules/environment.cc
Rule BlockDimRule();              // rules/block_dim.cc
Rule MemoryOomRule();             // rules/memory_oom.cc
Rule FusibleOperatorsRule();      // rules/fusible_operators.cc

const std::vector<Rule>& Rules() {
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> all;
    for (const Pass& pass : Passes()) all.insert(all.end(), pass.rules.begin(), pass.rules.end());
    for (Rule (*rule)() : {AiCoreBoundRule, AiCoreShapesRule, OnlineCompilationRule,
                           ExposedCommunicationRule, SmallPacketsRule, RdmaRetransmissionRule,
                           EnvironmentRule, BlockDimRule, MemoryOomRule, FusibleOperatorsRule}) {
      all.push_back(rule());
    }
    return all;
  }();
  return rules;
}

std::vector<Finding> Advise(const RuleContext& context) {
  std::vector<Finding> out;
  // A rule whose passes did not run (AnalysisOptions::passes) has no input.
  const auto ran = [&](std::string_view pass) { return context.analysis.Ran(pass); };
  for (const Rule& rule : Rules()) {
    if (std::all_of(rule.needs.begin(), rule.needs.end(), ran)) rule.apply(context, out);
  }
  // A trace that is not a run (a graph capture, a counter profiler's replay):
  // its times judge nothing, so only the diagnosis that says what it is and
  // the findings about the trace itself remain.
  if (NotARun(context.analysis)) {
    std::erase_if(out, [](const Finding& f) {
      return !f.id.starts_with("step_") && f.id != "unclassified_events";
    });
  }
  SortFindings(out);
  return out;
}

std::vector<Finding> Advise(const Analysis& analysis, const Thresholds& thresholds) {
  return Advise(RuleContext{analysis, thresholds});
}

}  // namespace opscope::analyze
