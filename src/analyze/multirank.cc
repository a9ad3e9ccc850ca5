#include "analyze/multirank.h"

#include <algorithm>

#include "analyze/intervals.h"
#include "analyze/names.h"
#include "analyze/passes/steps.h"

namespace opscope::analyze {

RankSummary SummarizeRank(const TraceModel& model, int fallback_rank) {
  RankSummary r;
  r.path = model.source;
  r.rank = fallback_rank;
  const auto info = model.metadata.find("distributedInfo");
  if (info != model.metadata.end()) {
    const auto at = info->second.find("\"rank\"");
    if (at != std::string::npos) {
      const auto colon = info->second.find(':', at);
      if (colon != std::string::npos) r.rank = std::atoi(info->second.c_str() + colon + 1);
    }
  }
  const std::vector<bool> comm = ClassifyNames(model, IsCommunication);
  std::vector<Interval> compute, communication;
  for (size_t e = 0; e < model.size(); ++e) {
    const Interval i{model.start_ns[e], model.start_ns[e] + model.duration_ns[e]};
    if (model.cls[e] == EventClass::kKernel) {
      (comm[model.name[e]] ? communication : compute).push_back(i);
    }
  }
  // Complete steps only (passes/steps.h): no warm-up, partial or empty step.
  const StepSummary steps = SummarizeSteps(ComputeSteps(model));
  r.steps = steps.complete;
  r.all_steps = steps.steps;
  r.mean_step_ns = steps.mean_ns;
  const auto c = Union(std::move(compute)), m = Union(std::move(communication));
  for (const auto& i : c) r.compute_ns += i.end - i.begin;
  for (const auto& i : m) {
    r.communication_ns += i.end - i.begin;
    r.overlap_ns += Covered(c, i.begin, i.end);
  }
  return r;
}

RankComparison CompareRanks(std::vector<RankSummary> ranks) {
  RankComparison out;
  std::sort(ranks.begin(), ranks.end(),
            [](const auto& a, const auto& b) { return a.rank < b.rank; });
  out.ranks = std::move(ranks);
  std::vector<int64_t> steps;
  for (const auto& r : out.ranks) {
    if (r.steps > 0) steps.push_back(r.mean_step_ns);
  }
  if (steps.size() < 2) return out;
  std::sort(steps.begin(), steps.end());
  const double median = steps.size() % 2
                            ? static_cast<double>(steps[steps.size() / 2])
                            : (steps[steps.size() / 2 - 1] + steps[steps.size() / 2]) / 2.0;
  int64_t slowest = -1;
  for (const auto& r : out.ranks) {
    if (r.steps > 0 && r.mean_step_ns > slowest) slowest = r.mean_step_ns, out.slow_rank = r.rank;
  }
  out.slow_pct = median > 0 ? 100.0 * (static_cast<double>(slowest) - median) / median : 0;
  return out;
}

}  // namespace opscope::analyze
