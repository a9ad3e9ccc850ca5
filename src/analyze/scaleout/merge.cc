#include "analyze/scaleout/merge.h"

#include <algorithm>

#include "analyze/median.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr const char* kFolded = "(other operators)";

}  // namespace

void SummaryMerger::Add(RankTraceSummary s) {
  auto [at, added] = ranks_.try_emplace(s.rank);
  if (!added) {
    throw Error(ErrorCode::kInvalidInput, "rank " + std::to_string(s.rank) +
                                              " twice: " + at->second.row.path + " and " + s.path +
                                              " (each rank's summary once)");
  }
  RankRecords& r = at->second;
  MergedRank& row = r.row;
  row.rank = s.rank;
  row.path = s.path;
  row.format = s.format;
  row.device = s.device;
  row.events = s.events;
  row.compute_ns = s.compute_ns;
  row.communication_ns = s.communication_ns;
  row.overlap_ns = s.overlap_ns;
  row.steps_complete = s.steps_complete;
  row.mean_step_ns = s.mean_step_ns;
  int64_t complete = 0, compute = 0, comm = 0, memory = 0, idle = 0;
  for (const SummaryStep& t : s.steps) {
    if (t.status != "complete") continue;
    ++complete;
    compute += t.compute_ns, comm += t.communication_ns, memory += t.memory_ns, idle += t.idle_ns;
  }
  if (complete > 0) {
    row.step_compute_ns = compute / complete;
    row.step_communication_ns = comm / complete;
    row.step_memory_ns = memory / complete;
    row.step_idle_ns = idle / complete;
  }
  r.steps = std::move(s.steps);
  if (!s.seq_from_trace && !s.collectives.empty()) seq_positional_ = true;
  std::vector<uint32_t> op_ids(s.ops.size());
  for (size_t i = 0; i < s.ops.size(); ++i) {
    op_ids[i] =
        op_index_.try_emplace(s.ops[i], static_cast<uint32_t>(op_index_.size())).first->second;
  }
  r.calls.reserve(s.collectives.size());
  for (const SummaryCollective& c : s.collectives) {
    const auto [key, fresh] = collective_index_.try_emplace(
        std::pair(s.groups[c.group], c.seq), static_cast<uint32_t>(collective_index_.size()));
    r.calls.push_back({key->second, op_ids[c.op], c.duration_ns, c.bytes});
    ++row.collectives;
    row.collective_ns += c.duration_ns;
  }
  for (SummaryOperator& o : s.operators) {
    const bool folded = o.folded > 0;
    MergedOperator& m = operators_[{folded ? std::string(kFolded) : o.name, o.cls}];
    if (m.ranks == 0) {
      m.name = folded ? std::string(kFolded) : std::move(o.name);
      m.cls = o.cls;
    }
    ++m.ranks;
    m.count += o.count;
    m.total_ns += o.total_ns;
    m.self_ns += o.self_ns;
    m.folded += o.folded;
    m.durations.Merge(o.durations);
  }
}

ScaleOutResult SummaryMerger::Finish() {
  ScaleOutResult out;
  std::vector<std::string> op_names(op_index_.size());
  for (const auto& [name, id] : op_index_) op_names[id] = name;

  // Collectives in (group, seq) order.
  std::vector<uint32_t> position(collective_index_.size());
  out.collectives.resize(collective_index_.size());
  {
    uint32_t p = 0;
    for (const auto& [key, id] : collective_index_) {
      position[id] = p;
      out.collectives[p].group = key.first;
      out.collectives[p].seq = key.second;
      ++p;
    }
  }
  for (const auto& [rank, r] : ranks_) {  // ascending rank: ties go to the lowest
    for (const RankRecords::Call& call : r.calls) {
      MergedCollective& c = out.collectives[position[call.collective]];
      const int64_t d = call.duration_ns;
      if (c.ranks == 0) {
        c.op = op_names[call.op];
        c.min_ns = c.max_ns = d;
        c.last_rank = rank;
      } else {
        if (op_names[call.op] != c.op) c.op_differs = true;
        if (d < c.min_ns) {
          c.second_ns = c.min_ns;
          c.min_ns = d;
          c.last_rank = rank;
        } else if (c.second_ns < 0 || d < c.second_ns) {
          c.second_ns = d;
        }
        c.max_ns = std::max(c.max_ns, d);
      }
      if (c.bytes < 0) c.bytes = call.bytes;
      c.sum_ns += call.duration_ns;
      ++c.ranks;
    }
  }
  int max_ranks = 0;
  int64_t differing = 0;
  for (MergedCollective& c : out.collectives) {
    c.wait_ns = c.sum_ns - c.ranks * c.min_ns;
    c.skew_ns = c.max_ns - c.min_ns;
    c.gap_ns = c.second_ns < 0 ? 0 : c.second_ns - c.min_ns;
    out.total_wait_ns += c.wait_ns;
    max_ranks = std::max(max_ranks, c.ranks);
    differing += c.op_differs;
  }
  std::vector<int64_t> spreads;
  for (const MergedCollective& c : out.collectives) {
    if (c.ranks >= 2) spreads.push_back(c.max_ns - c.second_ns);
  }
  out.late_threshold_ns = std::max(kLateNs, kLateOverMedian * IntegerMedian(std::move(spreads)));
  const auto late = [&](const MergedCollective& c) {
    return c.ranks >= 2 && c.gap_ns >= out.late_threshold_ns;
  };

  // Per rank: its wait, and the calls it was last to.
  std::map<int, std::vector<std::pair<size_t, int64_t>>> late_calls;  // rank -> (call, skew)
  for (auto& [rank, r] : ranks_) {
    for (const RankRecords::Call& call : r.calls) {
      const size_t p = position[call.collective];
      r.row.wait_ns += call.duration_ns - out.collectives[p].min_ns;
    }
  }
  for (size_t p = 0; p < out.collectives.size(); ++p) {
    const MergedCollective& c = out.collectives[p];
    if (!late(c)) continue;
    RankRecords& r = ranks_.at(c.last_rank);
    ++r.row.last_arrivals;
    r.row.caused_wait_ns += (c.ranks - 1) * c.gap_ns;
    late_calls[c.last_rank].push_back({p, c.gap_ns});
  }
  for (auto& [rank, r] : ranks_) out.ranks.push_back(r.row);

  // Stragglers: ranks whose late arrivals cause a large share of all waiting,
  // at least twice an even share, on at least three calls.
  const double n = static_cast<double>(out.ranks.size());
  for (const MergedRank& row : out.ranks) {
    if (out.total_wait_ns <= 0 || row.last_arrivals < 3) continue;
    const double share =
        100.0 * static_cast<double>(row.caused_wait_ns) / static_cast<double>(out.total_wait_ns);
    if (share < 10 || share < 2 * 100.0 / n) continue;
    Straggler s;
    s.rank = row.rank;
    s.late_calls = row.last_arrivals;
    s.caused_wait_ns = row.caused_wait_ns;
    s.share_pct = share;
    std::vector<int64_t> delays;
    for (const auto& [p, skew] : late_calls[row.rank]) {
      delays.push_back(skew);
      if (s.calls.size() < 5) s.calls.push_back({out.collectives[p].group, out.collectives[p].seq});
    }
    s.median_delay_ns = IntegerMedian(std::move(delays));
    for (const auto& [rank, r] : ranks_) {
      s.calls_total = std::max<int64_t>(s.calls_total, static_cast<int64_t>(r.calls.size()));
    }
    out.stragglers.push_back(std::move(s));
  }
  std::sort(out.stragglers.begin(), out.stragglers.end(), [](const auto& a, const auto& b) {
    return a.caused_wait_ns != b.caused_wait_ns ? a.caused_wait_ns > b.caused_wait_ns
                                                : a.rank < b.rank;
  });
  if (out.stragglers.size() > 3) out.stragglers.resize(3);

  // Steps: the rank x step grid.
  for (const auto& [rank, r] : ranks_) {
    for (const SummaryStep& t : r.steps) {
      if (t.number >= 0) out.step_numbers.push_back(t.number);
    }
  }
  std::sort(out.step_numbers.begin(), out.step_numbers.end());
  out.step_numbers.erase(std::unique(out.step_numbers.begin(), out.step_numbers.end()),
                         out.step_numbers.end());
  for (const auto& [rank, r] : ranks_) {
    std::vector<int64_t> row(out.step_numbers.size(), -1);
    std::vector<std::string> status(out.step_numbers.size());
    for (const SummaryStep& t : r.steps) {
      if (t.number < 0) continue;
      const size_t i = static_cast<size_t>(
          std::lower_bound(out.step_numbers.begin(), out.step_numbers.end(), t.number) -
          out.step_numbers.begin());
      row[i] = t.duration_ns;
      status[i] = t.status;
    }
    out.step_ns.push_back(std::move(row));
    out.step_status.push_back(std::move(status));
  }

  // The slow rank and the component that makes it slow.
  std::vector<const MergedRank*> stepped;
  for (const MergedRank& row : out.ranks) {
    if (row.steps_complete > 0) stepped.push_back(&row);
  }
  if (stepped.size() >= 2) {
    std::vector<int64_t> means;
    const MergedRank* slow = stepped.front();
    for (const MergedRank* row : stepped) {
      means.push_back(row->mean_step_ns);
      if (row->mean_step_ns > slow->mean_step_ns) slow = row;
    }
    const int64_t median = IntegerMedian(means);
    out.slow_rank = slow->rank;
    out.slow_pct = median > 0 ? 100.0 * static_cast<double>(slow->mean_step_ns - median) /
                                    static_cast<double>(median)
                              : 0;
    const std::pair<const char*, int64_t MergedRank::*> components[] = {
        {"compute", &MergedRank::step_compute_ns},
        {"communication", &MergedRank::step_communication_ns},
        {"memory", &MergedRank::step_memory_ns},
        {"idle", &MergedRank::step_idle_ns}};
    for (const auto& [name, field] : components) {
      std::vector<int64_t> values;
      for (const MergedRank* row : stepped) values.push_back(row->*field);
      const int64_t excess = slow->*field - IntegerMedian(values);
      if (excess > out.slow_component_excess_ns) {
        out.slow_component_excess_ns = excess;
        out.slow_component = name;
      }
    }
  }

  for (auto& [key, m] : operators_) out.operators.push_back(std::move(m));
  std::sort(out.operators.begin(), out.operators.end(), [](const auto& a, const auto& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.name != b.name) return a.name < b.name;
    return a.cls < b.cls;
  });

  if (seq_positional_) {
    out.notes.push_back(
        "The traces record no collective sequence numbers: calls are matched by their position "
        "in each rank's trace, which holds when every rank traced the same iterations.");
  }
  if (differing > 0) {
    out.notes.push_back(std::to_string(differing) +
                        " calls have different operations on different ranks at the same "
                        "position: the traces do not line up there, and their waits are doubtful.");
  }
  int64_t partial = 0;
  for (const MergedCollective& c : out.collectives) partial += c.ranks < max_ranks;
  if (partial > 0) {
    out.notes.push_back(std::to_string(partial) + " of " + std::to_string(out.collectives.size()) +
                        " calls were seen on fewer than " + std::to_string(max_ranks) +
                        " ranks (subgroups, or traces covering different iterations).");
  }
  return out;
}

}  // namespace opscope::analyze
