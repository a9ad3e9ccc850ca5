// How a trace's events relate: which host event encloses which on the same
// thread, and which framework operator launched each piece of device work (by
// "correlation" through the launch call, else by an "External id" shared with
// the operator: torch_npu's flows).
#ifndef OPSCOPE_ANALYZE_LINKS_H_
#define OPSCOPE_ANALYZE_LINKS_H_

#include <cstdint>
#include <vector>

#include "analyze/mapped.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct EventLinks {
  // The innermost host event enclosing each host event on its track (opened
  // before it, by start then the longer first, and still open), -1 at top level
  // and for device events.
  MappedVector<int32_t> parent;
  // For device events: the innermost framework operator (kHostOp) that
  // launched it, -1 unknown; for other events -1.
  MappedVector<int32_t> launcher;
  // Host events that start inside another on their thread and end more than
  // kUnevenNs after it (a producer's clocks or a lost end: the Chrome trace
  // format wants them nested): read as beside it. How many, the longest
  // excess, and the first such event in track order.
  int64_t uneven = 0, uneven_max_ns = 0;
  int32_t uneven_example = -1;
};
inline constexpr int64_t kUnevenNs = 1000;

EventLinks LinkEvents(const TraceModel& model);

// e and its enclosing events, innermost first, while `visit` returns true.
template <typename F>
void ForEachAncestor(const EventLinks& links, int32_t e, F&& visit) {
  for (int guard = 0; e >= 0 && guard < 4096; ++guard, e = links.parent[static_cast<size_t>(e)]) {
    if (!visit(e)) return;
  }
}

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_LINKS_H_
