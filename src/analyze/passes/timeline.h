// Analysis pass "timeline": What happened when, on each stream and thread, in
// a form small enough to draw? A bounded summary of the trace for the report's
// timeline (report/timeline_html.h), never the whole trace:
//  - one lane per track (device stream, CPU thread) that has complete events,
//    device lanes first;
//  - per lane, its busy share in each of `bins` equal slices of the trace's
//    window (nested events count once: the union of the lane's events);
//  - per slice, how many events start in it (all lanes);
//  - per lane, its longest events, up to a budget shared fairly between lanes
//    (a lane with few events keeps them all; the rest share what is left), so
//    that everything too short to keep is still in the density strip.
#ifndef OPSCOPE_ANALYZE_PASSES_TIMELINE_H_
#define OPSCOPE_ANALYZE_PASSES_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct TimelineEvent {
  int64_t start_ns = 0, duration_ns = 0;
  uint32_t name = 0;  // index into TimelineSummary::strings
  uint32_t args = 0;  // index into strings: "category: ...; shapes: ..." ("" none)
  EventClass cls = EventClass::kOther;
};

struct TimelineLane {
  std::string process, thread;
  bool device = false;                // most of its events are device work
  int64_t events = 0;                 // complete events on the lane
  std::vector<uint16_t> busy_permil;  // per slice: busy share, 0..1000
  std::vector<TimelineEvent> kept;    // its longest events, the longest first
};

struct TimelineSummary {
  int64_t begin_ns = 0, end_ns = 0;  // the first start, the last end
  std::vector<TimelineLane> lanes;
  std::vector<uint32_t> starts;      // per slice: events starting in it, all lanes
  std::vector<std::string> strings;  // names and args of kept events; strings[0] == ""
  int64_t events = 0;                // complete events in the trace
};

// The summary with `bins` slices and at most `max_events` events kept.
TimelineSummary SummarizeTimeline(const TraceModel& model, int bins = 2048,
                                  size_t max_events = 40000);

// How many of each lane's kept events fit `budget`, shared fairly: lanes asking
// less than an equal share get all they ask, the rest split what is left.
std::vector<size_t> FairShares(const std::vector<size_t>& wanted, size_t budget);

// Adds `weight` times the overlap of [lo, hi) with each slice of `slices`:
// equal slices of `width`, the first starting at `begin`.
void AddOverlap(std::vector<double>& slices, double begin, double width, double lo, double hi,
                double weight);

// Its entry in the pass table.
Pass TimelinePass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_TIMELINE_H_
