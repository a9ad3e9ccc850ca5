// Runs of operators worth fusing, sought over an Ascend rank's device tasks as
// msprof-analyze's advisor seeks them (reported.h: FusibleSequence says what
// a run is and how it is judged): the accumulation behind
// PipeTable::fusible.
//
// Where opscope differs from msprof-analyze's FusibleOperatorChecker, on
// purpose:
//  - a run is host-bound where, for more than 60% of its span, the AI Cores
//    compute nothing (no compute task of any stream) and the next operator
//    waits for no other task (none ends within 50 us before it starts), and
//    only in single-operator mode: the gaps inside a graph model (a Model ID
//    other than 4294967295) are the graph's own, not the host's;
//    msprof-analyze compares the run's own tasks with the span, so a run
//    whose operator waits for a collective (an all-reduce that holds the
//    step for 65 ms in the real level-1 rank) or that other streams' work
//    interleaves is "host-bound" there;
//  - runs of 2 operators count (its rule file says 2 to 10; its loop starts
//    recording at 3);
//  - the MTE share is over the larger of the cube and vector cores' times
//    (aicore_time, aiv_time); msprof-analyze divides by aicore_time alone,
//    which is 0 on a vector-core task, so a run of vector operators, the
//    commonest chain to fuse, is never MTE-bound there;
//  - host-bound and MTE-bound are judged on a run's occurrences summed, each
//    occurrence once (no task in two reported runs), where msprof-analyze
//    keeps the flags of the last occurrence and sums overlapping runs;
//  - the span is in one unit: msprof-analyze's op_summary reader scales Task
//    Start Time(us) to ns and leaves Task Duration(us) in us, so its
//    host-bound share divides microseconds by nanoseconds.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_FUSIBLE_SEQUENCES_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_FUSIBLE_SEQUENCES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyze/flat_map.h"
#include "analyze/reported.h"

namespace opscope::analyze {

class FusibleSequenceFinder {
 public:
  // One device task, in file order: tasks with the same name and shapes
  // ("in->out"; "" not recorded) are the same operator. `breaks`: a
  // communication or AI CPU task, which no run crosses. `mte` and `core`:
  // its data-movement and core times in any one unit, NaN where not
  // recorded. `name_id` and `shapes_id`: the caller's ids of the two texts
  // where it interns them (a trace model's), UINT32_MAX where not: the same
  // ids are then the same operator without comparing the texts. `in_graph`:
  // a task of a graph model, which the host did not launch itself: the time
  // before it is no wait for the host.
  void Add(std::string_view name, std::string_view shapes, int64_t start_ns, int64_t dur_ns,
           double mte, double core, bool breaks, uint32_t name_id = UINT32_MAX,
           uint32_t shapes_id = UINT32_MAX, bool in_graph = false);
  // Whether the form records MTE and core times (the MTE-bound test), before
  // the first Add.
  void SetMteColumns(bool present) { mte_columns_ = present; }
  // The runs and the span they were sought in, into `table`, counted on
  // `threads` threads (0: one under 65,536 tasks, else the machine's cores,
  // up to 4); the result does not depend on how many.
  void Finish(PipeTable& table, size_t threads = 0);

 private:
  struct Task {
    uint32_t key;  // kBreak: a task no run crosses
    int64_t start_ns, end_ns;
    float mte, core;  // NaN where not recorded
    uint32_t row;     // its order of arrival
    bool in_graph;    // a graph model's task (Add)
  };
  static constexpr uint32_t kBreak = UINT32_MAX;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> key_of_;
  Int64Map<uint32_t> key_of_ids_;  // name id << 32 | shapes id -> key + 1
  std::string scratch_;
  std::vector<const std::string*> labels_;  // by key: the map's own keys
  std::vector<Task> tasks_;
  bool mte_columns_ = false;
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_FUSIBLE_SEQUENCES_H_
