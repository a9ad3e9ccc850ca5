#include "analyze/multirank.h"

#include <algorithm>
#include <map>

#include "analyze/compute_device.h"
#include "analyze/intervals.h"
#include "analyze/median.h"
#include "analyze/names.h"
#include "analyze/passes/steps.h"

namespace opscope::analyze {

int DistributedRank(const TraceModel& model) {
  const auto info = model.metadata.find("distributedInfo");
  if (info == model.metadata.end()) return -1;
  const auto at = info->second.find("\"rank\"");
  if (at == std::string::npos) return -1;
  const auto colon = info->second.find(':', at);
  return colon == std::string::npos ? -1 : std::atoi(info->second.c_str() + colon + 1);
}

RankSummary SummarizeRank(const TraceModel& model, int fallback_rank, const StepSummary* steps) {
  RankSummary r;
  r.path = model.source;
  const int rank = DistributedRank(model);
  r.rank = rank >= 0 ? rank : fallback_rank;
  r.timeline = model.size() > 0;
  // Compute kernels and communication (its kernels, and the DMA and waits of
  // the collectives: compute_device.h) on the device.
  const std::vector<Work> work = ComputeWork(model, ComputeOn::kDevice);
  Intervals compute, communication;
  // Counted first: one allocation each, at its size.
  compute.reserve(static_cast<size_t>(std::count(work.begin(), work.end(), Work::kCompute)));
  communication.reserve(
      static_cast<size_t>(std::count(work.begin(), work.end(), Work::kCommunication)));
  for (size_t e = 0; e < model.size(); ++e) {
    const Interval i{model.start_ns[e], model.start_ns[e] + model.duration_ns[e]};
    if (work[e] == Work::kCompute) compute.push_back(i);
    if (work[e] == Work::kCommunication) communication.push_back(i);
  }
  // Complete steps only (passes/steps.h: no warm-up, partial, empty, queue-filling or
  // overrun step).
  const StepSummary computed =
      steps != nullptr ? StepSummary{} : SummarizeSteps(ComputeSteps(model));
  const StepSummary& s = steps != nullptr ? *steps : computed;
  r.steps = s.complete;
  r.all_steps = s.steps;
  r.mean_step_ns = s.mean_ns;
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
  const double median = Median(steps);
  int64_t slowest = -1;
  for (const auto& r : out.ranks) {
    if (r.steps > 0 && r.mean_step_ns > slowest) slowest = r.mean_step_ns, out.slow_rank = r.rank;
  }
  out.slow_pct = median > 0 ? 100.0 * (static_cast<double>(slowest) - median) / median : 0;
  return out;
}

namespace {

// Each rank's pipeline stage: its position in the sorted ranks of a
// pipeline-parallel group (role "pp") that any rank recorded; the stages'
// means over their ranks' step means. Empty where no rank recorded one.
std::vector<StageMeans> StagesOf(const std::vector<StepRankInput>& inputs,
                                 const std::vector<StepRankMeans>& ranks) {
  std::map<int, int> stage_of;  // global rank -> stage
  for (const StepRankInput& in : inputs) {
    if (in.groups == nullptr) continue;
    for (const ReportedGroup& g : *in.groups) {
      if (g.role != "pp") continue;
      for (size_t i = 0; i < g.global_ranks.size(); ++i) {
        stage_of.try_emplace(g.global_ranks[i], static_cast<int>(i));
      }
    }
  }
  std::map<int, StageMeans> stages;
  std::map<int, int64_t> with_bubble;
  for (const StepRankMeans& r : ranks) {
    const auto it = stage_of.find(r.rank);
    if (it == stage_of.end()) continue;
    StageMeans& s = stages[it->second];
    s.stage = it->second;
    s.ranks.push_back(r.rank);
    s.step_ns += r.step_ns, s.computing_ns += r.computing_ns;
    s.comm_not_overlapped_ns += r.comm_not_overlapped_ns, s.free_ns += r.free_ns;
    if (r.bubble_ns >= 0) s.bubble_ns = std::max<int64_t>(s.bubble_ns, 0) + r.bubble_ns;
    if (r.bubble_ns >= 0) ++with_bubble[s.stage];
  }
  std::vector<StageMeans> out;
  for (auto& [stage, s] : stages) {
    const auto n = static_cast<int64_t>(s.ranks.size());
    s.step_ns /= n, s.computing_ns /= n, s.comm_not_overlapped_ns /= n, s.free_ns /= n;
    if (s.bubble_ns >= 0) s.bubble_ns /= with_bubble[stage];
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

ReportedStepRanks CompareReportedSteps(const std::vector<StepRankInput>& inputs) {
  ReportedStepRanks out;
  for (const StepRankInput& in : inputs) {
    if (in.steps == nullptr) continue;
    StepRankMeans m{.rank = in.rank, .path = in.path};
    int64_t bubble = 0, preparing = 0, with_bubble = 0, with_preparing = 0;
    for (const ReportedStep& s : *in.steps) {
      if (s.StepNs() < 0) continue;
      ++m.steps;
      m.step_ns += s.StepNs();
      m.computing_ns += s.computing_ns;
      m.comm_not_overlapped_ns += s.comm_not_overlapped_ns;
      m.free_ns += s.free_ns;
      if (s.bubble_ns >= 0) bubble += s.bubble_ns, ++with_bubble;
      if (s.preparing_ns >= 0) preparing += s.preparing_ns, ++with_preparing;
    }
    if (m.steps == 0) continue;
    m.step_ns /= m.steps;
    m.computing_ns /= m.steps;
    m.comm_not_overlapped_ns /= m.steps;
    m.free_ns /= m.steps;
    if (with_bubble > 0) m.bubble_ns = bubble / with_bubble;
    if (with_preparing > 0) m.preparing_ns = preparing / with_preparing;
    out.ranks.push_back(std::move(m));
  }
  std::stable_sort(out.ranks.begin(), out.ranks.end(),
                   [](const auto& a, const auto& b) { return a.rank < b.rank; });
  if (out.ranks.size() < 2) return out;
  const auto median = [&](int64_t StepRankMeans::*member) {
    std::vector<int64_t> values;
    for (const auto& r : out.ranks) values.push_back(r.*member);
    return Median(values);
  };
  const StepRankMeans* slow = &out.ranks.front();
  for (const auto& r : out.ranks) {
    if (r.step_ns > slow->step_ns) slow = &r;
  }
  const double step_median = median(&StepRankMeans::step_ns);
  out.slow_rank = slow->rank;
  out.slow_pct = step_median > 0
                     ? 100.0 * (static_cast<double>(slow->step_ns) - step_median) / step_median
                     : 0;
  double worst = 0;
  for (const auto& [name, member] :
       {std::pair{"computing time", &StepRankMeans::computing_ns},
        {"communication not overlapped", &StepRankMeans::comm_not_overlapped_ns},
        {"free time", &StepRankMeans::free_ns}}) {
    const double excess = static_cast<double>(slow->*member) - median(member);
    if (excess > worst) {
      worst = excess;
      out.slow_component = name;
      out.slow_component_excess_ns = static_cast<int64_t>(excess);
    }
  }
  out.stages = StagesOf(inputs, out.ranks);
  if (out.stages.size() >= 2) {
    const auto [least, most] = std::minmax_element(
        out.stages.begin(), out.stages.end(),
        [](const StageMeans& a, const StageMeans& b) { return a.computing_ns < b.computing_ns; });
    out.slow_stage = most->stage;
    out.stage_imbalance_ns = most->computing_ns - least->computing_ns;
  }
  return out;
}

}  // namespace opscope::analyze
