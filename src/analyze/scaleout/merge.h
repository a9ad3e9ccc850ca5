// Stage 2 of scale-out analysis: rank summaries (summary.h) reduced to the
// job's picture: per-rank and per-step tables, the slow rank and the step
// component that makes it slow, per-collective arrival skew (who arrives last
// and how long the others wait for it), communication/computation overlap per
// rank, and operator statistics merged across ranks.
//
// Waits are measured without comparing clocks across machines: a collective
// ends on every rank at about the same time (no rank can finish before the
// last one has contributed), so a rank that arrived early runs the call for
// longer. At each call the fastest rank's duration is the transfer itself;
// every other rank's duration beyond it is time spent waiting, and the rank
// with the fastest call is the one that arrived last. Per-rank clock offsets
// do not enter.
//
// Every figure is integer arithmetic over the summaries, folded in rank
// order, so the result is the same whether the summaries were made on one
// thread, on many, in several processes or by hand.
#ifndef OPSCOPE_ANALYZE_SCALEOUT_MERGE_H_
#define OPSCOPE_ANALYZE_SCALEOUT_MERGE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analyze/scaleout/summary.h"

namespace opscope::analyze {

struct MergedRank {
  int rank = -1;
  std::string path, format, device;
  int64_t events = 0;
  int64_t compute_ns = 0, communication_ns = 0, overlap_ns = 0;
  int64_t steps_complete = 0, mean_step_ns = 0;
  // Means over its complete steps (-1 when it has none).
  int64_t step_compute_ns = -1, step_communication_ns = -1, step_memory_ns = -1, step_idle_ns = -1;
  int64_t collectives = 0, collective_ns = 0;
  int64_t wait_ns = 0;         // its calls' time beyond each call's fastest rank
  int64_t last_arrivals = 0;   // calls at which it arrived last, with others waiting
  int64_t caused_wait_ns = 0;  // the others' wait for it at those calls
};

struct MergedCollective {
  std::string group, op;
  int64_t seq = 0, bytes = -1;
  int ranks = 0;
  int64_t min_ns = 0, max_ns = 0, sum_ns = 0;
  int64_t second_ns = -1;  // the second-shortest call (-1 with one rank)
  int last_rank = -1;      // the rank with the fastest call: it arrived last (lowest on ties)
  // How much later the last rank arrived than the one before it
  // (second_ns - min_ns): the wait it alone caused each other rank.
  int64_t gap_ns = 0;
  int64_t wait_ns = 0;      // sum over ranks of (duration - min_ns)
  int64_t skew_ns = 0;      // max_ns - min_ns: how much later the last arrived than the first
  bool op_differs = false;  // ranks disagree on the op at this (group, seq)
};

struct MergedOperator {
  std::string name;  // "(other operators)" for folded rows
  EventClass cls = EventClass::kOther;
  int ranks = 0;
  int64_t count = 0, total_ns = 0, self_ns = 0, folded = 0;
  QuantileSketch durations;
};

struct Straggler {
  int rank = -1;
  int64_t late_calls = 0;       // calls it arrived last at, late by >= the threshold
  int64_t caused_wait_ns = 0;   // the others' wait for it at those calls
  int64_t median_delay_ns = 0;  // median gap of those calls
  double share_pct = 0;         // of all ranks' collective wait
  std::vector<std::pair<std::string, int64_t>> calls;  // (group, seq) of the first few
  int64_t calls_total = 0;                             // calls of the job (max over ranks)
};

struct ScaleOutResult {
  std::vector<MergedRank> ranks;      // by rank
  std::vector<int64_t> step_numbers;  // every step number seen, ascending
  // step_ns[rank index][step index]: the step's duration on that rank, -1 absent.
  std::vector<std::vector<int64_t>> step_ns;
  std::vector<std::vector<std::string>> step_status;
  std::vector<MergedCollective> collectives;  // by (group, seq)
  std::vector<MergedOperator> operators;      // most total time first
  int slow_rank = -1;
  double slow_pct = 0;         // its mean step above the median rank's
  std::string slow_component;  // "compute", "communication", "memory" or "idle"
  int64_t slow_component_excess_ns = 0;
  std::vector<Straggler> stragglers;  // at most a few, most caused wait first
  int64_t total_wait_ns = 0;
  int64_t late_threshold_ns = 0;   // the gap from which a call counts as a late arrival
  std::vector<std::string> notes;  // what limits the figures
};

// A call counts as a late arrival when its last rank arrived at least
// kLateNs after the rank before it (gap_ns), and at least kLateOverMedian
// times the median spread of the other ranks' arrivals (max_ns - second_ns,
// over the job's calls): above the jitter every call has, even when the same
// rank is late to every call. Its caused wait is (ranks - 1) * gap_ns: what
// the others waited for it alone.
inline constexpr int64_t kLateNs = 20'000;
inline constexpr int64_t kLateOverMedian = 3;

class SummaryMerger {
 public:
  // Folds one rank's summary in; ranks may come in any order. Throws
  // Error(kInvalidInput) when the rank was already added.
  void Add(RankTraceSummary summary);
  ScaleOutResult Finish();

 private:
  struct RankRecords {
    MergedRank row;
    std::vector<SummaryStep> steps;
    struct Call {
      uint32_t collective = 0, op = 0;  // into collective_index_'s order of insertion, ops_
      int64_t duration_ns = 0, bytes = -1;
    };
    std::vector<Call> calls;
  };
  std::map<int, RankRecords> ranks_;
  std::map<std::pair<std::string, int64_t>, uint32_t> collective_index_;
  std::map<std::string, uint32_t> op_index_;
  std::vector<std::string> ops_;
  std::map<std::pair<std::string, EventClass>, MergedOperator> operators_;
  bool seq_positional_ = false;
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_SCALEOUT_MERGE_H_
