// The kernels a CUDA or HIP graph replays, charged to the framework operators
// that captured them (issue 37). A graph launch (cudaGraphLaunch,
// hipGraphLaunch, cuGraphLaunch) replays its nodes under the launch's one
// correlation id: the trace of the replay says nothing of the operators that
// recorded them. The trace of the capture does: between a stream's
// BeginCapture and EndCapture calls, each kernel launch call, inside the
// operator that made it, records one node. Given both traces, a replay whose
// kernels are as many as the launches of a capture takes that capture's
// launches in time order: the i-th kernel the replay ran (by start) is the
// i-th launch captured. The match is made only where that order is the
// nodes' order: the replay's kernels ran on one stream, one after the other.
#ifndef OPSCOPE_ANALYZE_GRAPH_CAPTURE_H_
#define OPSCOPE_ANALYZE_GRAPH_CAPTURE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/trace_model.h"

namespace opscope::analyze {

struct GraphKernels {
  std::string capture;                 // the capture trace, as given
  int64_t launches = 0;                // graph launches in the replay
  int64_t matched = 0;                 // of them, charged to a capture
  int64_t kernels = 0;                 // kernels of the matched launches
  int64_t kernel_ns = 0;               // their device time
  int64_t captures = 0;                // capture windows in the capture trace
  std::vector<std::string> unmatched;  // why each launch not charged was not ("" none)
  struct Operator {
    std::string name;  // the innermost framework operator around the launch; "(no operator)"
    int64_t kernels = 0, ns = 0;
  };
  std::vector<Operator> operators;  // the most device time first
};

// Graph launches of `replay` charged by `capture`'s capture windows; `name`
// is the capture trace as the user named it. A replay without graph launches
// gives launches == 0.
GraphKernels ChargeGraphKernels(const TraceModel& replay, const TraceModel& capture,
                                const std::string& name);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_GRAPH_CAPTURE_H_
