#include "analyze/communication_cluster.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

#include "analyze/median.h"

namespace opscope::analyze {

CommunicationCluster CompareCommunication(const std::vector<CommunicationInput>& inputs) {
  CommunicationCluster out;
  // Operations by (step, kind, op, group) -> (rank index, wait).
  std::map<std::tuple<std::string, std::string, std::string, std::string>,
           std::vector<std::pair<size_t, int64_t>>>
      shared;
  for (const CommunicationInput& in : inputs) {
    if (in.collectives == nullptr || in.collectives->empty()) continue;
    RankCommunication r{.rank = in.rank, .path = in.path};
    std::map<std::string, ReportedTransfer> transports;
    for (const ReportedCollective& c : *in.collectives) {
      ++r.collectives;
      // A time the file left out (-1) is absent: never summed as a value.
      bool missing = false;
      for (const auto& [sum, value] :
           {std::pair{&r.elapse_ns, c.elapse_ns}, std::pair{&r.transit_ns, c.transit_ns},
            std::pair{&r.wait_ns, c.wait_ns}, std::pair{&r.sync_ns, c.sync_ns},
            std::pair{&r.idle_ns, c.idle_ns}}) {
        if (value >= 0) {
          *sum += value;
        } else {
          missing = true;
        }
      }
      r.incomplete += missing;
      for (const ReportedTransfer& t : c.transfers) {
        ReportedTransfer& sum = transports[t.transport];
        sum.transport = t.transport;
        sum.bytes += t.bytes, sum.time_ns += t.time_ns;
      }
      if (c.wait_ns >= 0)
        shared[{c.step, c.kind, c.op, c.group}].push_back({out.ranks.size(), c.wait_ns});
    }
    for (auto& [name, t] : transports) r.transports.push_back(t);
    out.ranks.push_back(std::move(r));
  }
  // In an operation on several ranks, the one that waited least arrived last;
  // the others' mean wait is the time they spent waiting for it. Where the
  // two least waits tie (within kWaitTieNs), no rank arrived last.
  for (const auto& [key, waits] : shared) {
    if (waits.size() < 2) continue;
    size_t last = 0;
    int64_t total = 0;
    for (size_t i = 0; i < waits.size(); ++i) {
      total += waits[i].second;
      if (waits[i].second < waits[last].second) last = i;
      ++out.ranks[waits[i].first].shared;
    }
    int64_t second = INT64_MAX;
    for (size_t i = 0; i < waits.size(); ++i) {
      if (i != last) second = std::min(second, waits[i].second);
    }
    if (second - waits[last].second < kWaitTieNs) continue;
    RankCommunication& r = out.ranks[waits[last].first];
    ++r.arrived_last;
    r.others_waited_ns += (total - waits[last].second) / static_cast<int64_t>(waits.size() - 1);
  }
  int64_t most = 0;
  for (const auto& r : out.ranks) {
    if (r.others_waited_ns > most) most = r.others_waited_ns, out.waited_for_rank = r.rank;
  }
  std::stable_sort(out.ranks.begin(), out.ranks.end(),
                   [](const auto& a, const auto& b) { return a.rank < b.rank; });
  // Group-local ranks to global ones: from the run's communication groups (a
  // local rank indexes the sorted global ranks), else from each rank's own
  // LOCAL link k-k, which says it is local rank k.
  std::map<std::string, const ReportedGroup*> group_of;
  std::map<std::pair<std::string, int>, int> self_rank;  // (group, local) -> rank
  for (const CommunicationInput& in : inputs) {
    if (in.groups != nullptr) {
      for (const ReportedGroup& g : *in.groups) group_of.emplace(g.hash, &g);
    }
    if (in.links == nullptr || in.rank < 0) continue;
    for (const ReportedLink& l : *in.links) {
      if (l.transport == "LOCAL" && l.src == l.dst)
        self_rank.emplace(std::pair{l.group, l.src}, in.rank);
    }
  }
  const auto globalize = [&](ReportedLink& l) {
    if (const auto g = group_of.find(l.group); g != group_of.end()) {
      const std::vector<int>& ranks = g->second->global_ranks;
      const auto at = [&](int local) {
        return local >= 0 && static_cast<size_t>(local) < ranks.size() ? ranks[local] : -1;
      };
      l.global_src = at(l.src), l.global_dst = at(l.dst);
      l.group_role = g->second->role;
      l.ranks_from = std::filesystem::path(g->second->source).filename().string();
      return;
    }
    const auto self = [&](int local) {
      const auto it = self_rank.find({l.group, local});
      return it == self_rank.end() ? -1 : it->second;
    };
    l.global_src = self(l.src), l.global_dst = self(l.dst);
    if (l.global_src >= 0 || l.global_dst >= 0) l.ranks_from = "self-links";
  };
  // Links: one entry per (step, kind, type, group, source, destination), the
  // first rank's file that reports it; LOCAL copies and small links left out.
  std::map<std::tuple<std::string, std::string, std::string, std::string, int, int>, bool> seen;
  std::map<std::string, std::vector<SlowLink>> by_transport;
  for (const CommunicationInput& in : inputs) {
    if (in.links == nullptr) continue;
    for (const ReportedLink& l : *in.links) {
      if (l.transport == "LOCAL" || l.bytes < kMinLinkBytes || l.time_ns <= 0) continue;
      if (!seen.emplace(std::tuple{l.step, l.kind, l.op_type, l.group, l.src, l.dst}, true)
               .second) {
        continue;
      }
      SlowLink slow{in.rank, l, 0};
      globalize(slow.link);
      by_transport[l.transport].push_back(std::move(slow));
    }
  }
  for (auto& [transport, links] : by_transport) {
    if (links.size() < 3) continue;
    std::vector<double> gbps;
    for (const auto& l : links) gbps.push_back(l.link.Gbps());
    const double median = Median(gbps);
    for (auto& l : links) {
      l.median_gbps = median;
      out.links.push_back(std::move(l));
    }
  }
  const auto ratio = [](const SlowLink& l) {
    return l.median_gbps > 0 ? l.link.Gbps() / l.median_gbps : 1.0;
  };
  std::stable_sort(out.links.begin(), out.links.end(),
                   [&](const auto& a, const auto& b) { return ratio(a) < ratio(b); });
  for (const auto& l : out.links) out.slow_links += ratio(l) < kSlowLinkRatio ? 1 : 0;
  return out;
}

}  // namespace opscope::analyze
