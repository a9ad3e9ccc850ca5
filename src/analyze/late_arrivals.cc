#include "analyze/late_arrivals.h"

#include <algorithm>

#include "analyze/intervals.h"

namespace opscope::analyze {

LeadIns LeadInsOf(const TraceModel& model, const RankTraceSummary& summary) {
  LeadIns out;
  if (summary.collectives.empty()) return out;
  UnionBuilder compute;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] == EventClass::kKernel && model.duration_ns[e] > 0) {
      compute.Add({model.start_ns[e], model.start_ns[e] + model.duration_ns[e]});
    }
  }
  const Intervals busy = compute.Take();
  // Each group's calls in the order they started on this rank.
  std::map<uint32_t, std::vector<const SummaryCollective*>> by_group;
  for (const SummaryCollective& c : summary.collectives) by_group[c.group].push_back(&c);
  for (auto& [group, calls] : by_group) {
    std::stable_sort(calls.begin(), calls.end(),
                     [](const auto* a, const auto* b) { return a->start_ns < b->start_ns; });
    const std::string& name = group < summary.groups.size() ? summary.groups[group] : "";
    for (size_t i = 1; i < calls.size(); ++i) {
      const int64_t from = calls[i - 1]->start_ns + calls[i - 1]->duration_ns;
      const int64_t to = calls[i]->start_ns;
      LeadIn lead;
      if (to > from) lead.lead_ns = to - from, lead.compute_ns = Covered(busy, from, to);
      out[{name, calls[i]->seq}] = lead;
    }
  }
  return out;
}

LateArrivals FindLateArrivals(const ScaleOutResult& merged, const std::map<int, LeadIns>& leads) {
  LateArrivals out;
  out.threshold_ns = merged.late_threshold_ns;
  for (const Straggler& s : merged.stragglers) {
    LateRank r;
    r.rank = s.rank, r.late_calls = s.late_calls, r.calls = s.calls_total;
    r.caused_wait_ns = s.caused_wait_ns, r.median_gap_ns = s.median_delay_ns;
    r.share_pct = s.share_pct;
    const auto own = leads.find(s.rank);
    for (const MergedCollective& c : merged.collectives) {
      if (c.last_rank != s.rank || c.ranks < 2 || c.gap_ns < merged.late_threshold_ns) continue;
      if (own == leads.end()) break;
      const auto mine = own->second.find({c.group, c.seq});
      if (mine == own->second.end()) continue;
      int64_t lead = 0, compute = 0, others = 0;
      for (const auto& [rank, calls] : leads) {
        if (rank == s.rank) continue;
        const auto theirs = calls.find({c.group, c.seq});
        if (theirs == calls.end()) continue;
        lead += theirs->second.lead_ns, compute += theirs->second.compute_ns, ++others;
      }
      if (others == 0) continue;
      ++r.measured;
      r.lead_ns += mine->second.lead_ns, r.compute_ns += mine->second.compute_ns;
      r.others_lead_ns += lead / others, r.others_compute_ns += compute / others;
    }
    if (r.measured > 0) {
      r.lead_ns /= r.measured, r.compute_ns /= r.measured;
      r.others_lead_ns /= r.measured, r.others_compute_ns /= r.measured;
      const int64_t extra = r.lead_ns - r.others_lead_ns;
      r.compute_made_late = extra > 0 && 2 * (r.compute_ns - r.others_compute_ns) >= extra;
    }
    out.ranks.push_back(r);
  }
  return out;
}

}  // namespace opscope::analyze
