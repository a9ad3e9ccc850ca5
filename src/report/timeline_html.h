// The report's timeline of a trace: a canvas the page's script draws from a
// bounded JSON block (the timeline pass's summary, cut further to a budget
// when a page holds many traces), and the script every report page inlines.
#ifndef OPSCOPE_REPORT_TIMELINE_HTML_H_
#define OPSCOPE_REPORT_TIMELINE_HTML_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/analysis.h"

namespace opscope::report {

// The reports' script (src/report/report_script.js): sortable tables
// (`table.sortable`) and timelines (`div.timeline`).
std::string_view ReportScript();

// The summary as the page's JSON: at most `max_events` kept events (shared
// fairly between lanes, the longest of each), the density in at most
// `max_bins` slices, the steps and idle gaps (with cause) of the analysis.
// Every string is escaped for a <script> block.
std::string TimelineJson(const analyze::Analysis& a, size_t max_events, int max_bins);

// The timeline's controls, canvas and data block; `id` names the data block
// and must be unique in the page. A trace without events gets a sentence.
std::string TimelineHtml(const analyze::Analysis& a, std::string_view id, size_t max_events,
                         int max_bins);

// Several ranks on one timeline: one lane per rank, the mean busy share of its
// device streams (or its threads, for a CPU trace) moved onto common slices,
// and its longest events within a budget shared fairly between ranks.
struct RankTimeline {
  int rank = -1;
  const analyze::TimelineSummary* summary = nullptr;
};
analyze::TimelineSummary RanksTimeline(const std::vector<RankTimeline>& ranks, int bins,
                                       size_t max_events);
std::string RanksTimelineHtml(const std::vector<RankTimeline>& ranks, std::string_view id,
                              size_t max_events, int bins);

}  // namespace opscope::report

#endif  // OPSCOPE_REPORT_TIMELINE_HTML_H_
