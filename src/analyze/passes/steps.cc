#include "analyze/passes/steps.h"

#include <algorithm>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "analyze/names.h"

namespace opscope::analyze {

std::vector<StepBreakdown> ComputeSteps(const TraceModel& model) {
  const std::vector<bool> comm = ClassifyNames(model, IsCommunication);
  std::vector<Interval> compute, communication, memory, all;
  for (size_t e = 0; e < model.size(); ++e) {
    const Interval i{model.start_ns[e], model.start_ns[e] + model.duration_ns[e]};
    switch (model.cls[e]) {
      case EventClass::kKernel:
        (comm[model.name[e]] ? communication : compute).push_back(i);
        all.push_back(i);
        break;
      case EventClass::kMemcpy:
      case EventClass::kMemset:
        memory.push_back(i);
        all.push_back(i);
        break;
      default: break;
    }
  }
  const auto c = Union(compute), m = Union(communication), mem = Union(memory), any = Union(all);
  std::vector<StepBreakdown> steps;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kStep) continue;
    StepBreakdown s;
    s.name = std::string(model.String(model.name[e]));
    s.begin_ns = model.start_ns[e];
    s.duration_ns = model.duration_ns[e];
    const int64_t end = s.begin_ns + s.duration_ns;
    s.compute_ns = Covered(c, s.begin_ns, end);
    s.communication_ns = Covered(m, s.begin_ns, end);
    s.memory_ns = Covered(mem, s.begin_ns, end);
    s.idle_ns = s.duration_ns - Covered(any, s.begin_ns, end);
    steps.push_back(std::move(s));
  }
  std::sort(steps.begin(), steps.end(),
            [](const auto& a, const auto& b) { return a.begin_ns < b.begin_ns; });
  return steps;
}

Pass StepsPass() {
  return {"steps",
          "What fills each step: compute, communication, copies, idle?",
          {},
          [](const TraceModel& model, Analysis& a) { a.steps = ComputeSteps(model); }};
}

}  // namespace opscope::analyze
