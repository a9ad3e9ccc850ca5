#include "report/timeline_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <unordered_map>

#include "core/text.h"

namespace opscope::report {
namespace {

using core::AppendInt;
using core::AppendJsonString;

constexpr analyze::EventClass kLastClass = analyze::EventClass::kOther;

template <typename T, typename F>
void AppendArray(std::string& out, const std::vector<T>& values, F&& append) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    append(values[i]);
  }
  out += ']';
}

}  // namespace

namespace {

std::string SummaryJson(const analyze::TimelineSummary& t,
                        const std::vector<analyze::StepBreakdown>& steps,
                        const std::vector<analyze::IdleGap>& gaps, size_t max_events,
                        int max_bins) {
  std::string out = "{\"begin\":";
  AppendInt(out, t.begin_ns);
  out += ",\"end\":";
  AppendInt(out, t.end_ns);
  // Slices merged by a whole factor down to max_bins: busy shares averaged,
  // starts summed.
  const size_t bins = t.starts.size();
  const size_t factor =
      max_bins > 0 && bins > static_cast<size_t>(max_bins)
          ? (bins + static_cast<size_t>(max_bins) - 1) / static_cast<size_t>(max_bins)
          : 1;
  const size_t merged = (bins + factor - 1) / factor;
  out += fmt::format(",\"bins\":{},\"events\":{},\"classes\":[", merged, t.events);
  for (int c = 0; c <= static_cast<int>(kLastClass); ++c) {
    if (c > 0) out += ',';
    AppendJsonString(out, analyze::Name(static_cast<analyze::EventClass>(c)));
  }
  out += "],\"lanes\":[";
  for (size_t i = 0; i < t.lanes.size(); ++i) {
    const analyze::TimelineLane& lane = t.lanes[i];
    if (i > 0) out += ',';
    out += "{\"name\":";
    AppendJsonString(out, lane.thread.empty() ? lane.process : lane.process + " · " + lane.thread);
    out += fmt::format(",\"device\":{},\"events\":{},\"busy\":\"", lane.device, lane.events);
    for (size_t b = 0; b < merged; ++b) {
      const size_t end = std::min(bins, (b + 1) * factor);
      unsigned sum = 0;
      for (size_t k = b * factor; k < end; ++k) sum += lane.busy_permil[k];
      const double share = static_cast<double>(sum) / static_cast<double>(end - b * factor) / 1000;
      out += fmt::format("{:02x}", static_cast<unsigned>(std::lround(share * 255)));
    }
    out += "\"}";
  }
  out += "],\"starts\":[";
  for (size_t b = 0; b < merged; ++b) {
    uint64_t sum = 0;
    for (size_t k = b * factor; k < std::min(bins, (b + 1) * factor); ++k) sum += t.starts[k];
    if (b > 0) out += ',';
    core::AppendUint(out, sum);
  }
  out += ']';

  // The kept events within the budget: each lane's longest, fairly shared.
  std::vector<size_t> kept;
  for (const auto& lane : t.lanes) kept.push_back(lane.kept.size());
  const std::vector<size_t> shares = analyze::FairShares(kept, max_events);
  std::vector<uint32_t> lane_of, start, name, args, cls;
  std::vector<int64_t> starts, durations;
  std::unordered_map<uint32_t, uint32_t> string_ids;  // summary's -> page's
  std::vector<uint32_t> strings;
  const auto page_id = [&](uint32_t id) {
    const auto [it, added] = string_ids.emplace(id, static_cast<uint32_t>(strings.size()));
    if (added) strings.push_back(id);
    return it->second;
  };
  page_id(0);
  for (size_t l = 0; l < t.lanes.size(); ++l) {
    for (size_t k = 0; k < shares[l]; ++k) {
      const analyze::TimelineEvent& e = t.lanes[l].kept[k];
      lane_of.push_back(static_cast<uint32_t>(l));
      starts.push_back(e.start_ns - t.begin_ns);
      durations.push_back(e.duration_ns);
      name.push_back(page_id(e.name));
      args.push_back(page_id(e.args));
      cls.push_back(static_cast<uint32_t>(e.cls));
    }
  }
  const auto ints = [&](const auto& values) {
    AppendArray(out, values, [&](auto v) { AppendInt(out, static_cast<int64_t>(v)); });
  };
  out += fmt::format(",\"kept_events\":{},\"kept\":{{\"lane\":", lane_of.size());
  ints(lane_of);
  out += ",\"s\":";
  ints(starts);
  out += ",\"d\":";
  ints(durations);
  out += ",\"n\":";
  ints(name);
  out += ",\"a\":";
  ints(args);
  out += ",\"c\":";
  ints(cls);
  out += "},\"strings\":";
  AppendArray(out, strings, [&](uint32_t id) { AppendJsonString(out, t.strings[id]); });

  // Steps with their status, idle gaps with their cause, from the window's start.
  out += ",\"steps\":";
  AppendArray(out, steps, [&](const analyze::StepBreakdown& s) {
    out += '[';
    AppendJsonString(out, s.name);
    out += fmt::format(",{},{},", s.begin_ns - t.begin_ns, s.duration_ns);
    AppendJsonString(out, s.status);
    out += ',';
    AppendJsonString(out, s.status_reason);
    out += ']';
  });
  out += ",\"gaps\":";
  AppendArray(out, gaps, [&](const analyze::IdleGap& g) {
    out += fmt::format("[{},{},", g.begin_ns - t.begin_ns, g.duration_ns);
    AppendJsonString(out, g.cause);
    out += ',';
    AppendJsonString(out, g.evidence);
    out += ']';
  });
  out += '}';
  return out;
}

// The controls, canvas and data block of a summary.
std::string TimelineDiv(std::string_view id, const std::string& json) {
  std::string h = fmt::format(
      "<div class=\"timeline\" data-src=\"{0}\"><div class=\"tl-bar\"><button type=\"button\" "
      "class=\"tl-in\" title=\"zoom in\">+</button><button type=\"button\" class=\"tl-out\" "
      "title=\"zoom out\">−</button><button type=\"button\" class=\"tl-reset\">whole "
      "trace</button> <span class=\"tl-status\"></span></div><canvas tabindex=\"0\" "
      "aria-label=\"timeline\"></canvas><div class=\"tl-tip\" hidden></div><div "
      "class=\"tl-list\"></div></div>\n<script type=\"application/json\" id=\"{0}\">",
      core::EscapeHtml(id));
  h += json;
  h += "</script>\n";
  return h;
}

}  // namespace

std::string TimelineJson(const analyze::Analysis& a, size_t max_events, int max_bins) {
  return SummaryJson(a.timeline, a.steps, a.busy.gaps, max_events, max_bins);
}

std::string TimelineHtml(const analyze::Analysis& a, std::string_view id, size_t max_events,
                         int max_bins) {
  const analyze::TimelineSummary& t = a.timeline;
  if (t.events == 0) return "<p>No complete events: no timeline to draw.</p>\n";
  size_t kept = 0;
  for (const auto& lane : t.lanes) kept += lane.kept.size();
  kept = std::min(kept, max_events);
  return fmt::format(
             "<p>{} events on {} lanes (device streams first, then threads). The {} longest are "
             "drawn one by one, fairly shared between lanes; every lane also shows its busy share "
             "per slice (the shaded strip), which counts every event. Scroll or +/− to zoom, drag "
             "to pan, shift-drag to list a window's events, click an event, step or gap to list "
             "its window.</p>\n",
             t.events, t.lanes.size(), kept) +
         TimelineDiv(id, TimelineJson(a, max_events, max_bins));
}

analyze::TimelineSummary RanksTimeline(const std::vector<RankTimeline>& ranks, int bins,
                                       size_t max_events) {
  analyze::TimelineSummary out;
  int64_t begin = INT64_MAX, end = INT64_MIN;
  for (const RankTimeline& r : ranks) {
    if (r.summary->events == 0) continue;
    begin = std::min(begin, r.summary->begin_ns), end = std::max(end, r.summary->end_ns);
  }
  if (begin >= end) return out;
  out.begin_ns = begin, out.end_ns = end;
  out.starts.assign(static_cast<size_t>(bins), 0);
  out.strings.push_back("");
  std::unordered_map<std::string, uint32_t> ids{{"", 0}};
  const double width = static_cast<double>(end - begin) / bins;
  const auto bin_of = [&](double t) {
    return std::clamp(static_cast<int>((t - static_cast<double>(begin)) / width), 0, bins - 1);
  };
  std::vector<size_t> wanted;
  for (const RankTimeline& r : ranks) {
    const analyze::TimelineSummary& t = *r.summary;
    analyze::TimelineLane lane;
    lane.process = fmt::format("rank {}", r.rank);
    lane.device = true;
    // The rank's compute lanes: its device streams, else (a CPU trace) all lanes.
    std::vector<const analyze::TimelineLane*> used;
    for (const auto& l : t.lanes) {
      if (l.device) used.push_back(&l);
    }
    if (used.empty()) {
      for (const auto& l : t.lanes) used.push_back(&l);
    }
    // Their mean busy share, moved onto the common slices by overlap.
    std::vector<double> busy(static_cast<size_t>(bins), 0.0);
    const size_t source_bins = t.starts.size();
    const double source_width =
        source_bins > 0 ? static_cast<double>(t.end_ns - t.begin_ns) / source_bins : 0;
    for (size_t b = 0; b < source_bins && source_width > 0; ++b) {
      double share = 0;
      for (const auto* l : used) share += l->busy_permil[b] / 1000.0;
      share /= static_cast<double>(used.size());
      const double lo = static_cast<double>(t.begin_ns) + b * source_width;
      const double hi = lo + source_width;
      out.starts[static_cast<size_t>(bin_of(lo))] += t.starts[b];
      analyze::AddOverlap(busy, static_cast<double>(begin), width, lo, hi, share / width);
    }
    for (const double v : busy) {
      lane.busy_permil.push_back(
          static_cast<uint16_t>(std::clamp(std::lround(v * 1000), 0L, 1000L)));
    }
    for (const auto* l : used) {
      lane.events += l->events;
      for (const analyze::TimelineEvent& e : l->kept) {
        analyze::TimelineEvent copy = e;
        const auto intern = [&](uint32_t id) {
          const auto [it, added] =
              ids.emplace(t.strings[id], static_cast<uint32_t>(out.strings.size()));
          if (added) out.strings.push_back(t.strings[id]);
          return it->second;
        };
        copy.name = intern(e.name), copy.args = intern(e.args);
        lane.kept.push_back(copy);
      }
    }
    std::stable_sort(lane.kept.begin(), lane.kept.end(),
                     [](const auto& x, const auto& y) { return x.duration_ns > y.duration_ns; });
    out.events += lane.events;
    wanted.push_back(lane.kept.size());
    out.lanes.push_back(std::move(lane));
  }
  const std::vector<size_t> shares = analyze::FairShares(wanted, max_events);
  for (size_t i = 0; i < out.lanes.size(); ++i) out.lanes[i].kept.resize(shares[i]);
  return out;
}

std::string RanksTimelineHtml(const std::vector<RankTimeline>& ranks, std::string_view id,
                              size_t max_events, int bins) {
  const analyze::TimelineSummary t = RanksTimeline(ranks, bins, max_events);
  if (t.events == 0) return "<p>No complete events: no timeline to draw.</p>\n";
  return fmt::format(
             "<p>One lane per rank, on the clock the traces share: the mean busy share of each "
             "rank's device streams (its threads when it has no device work) per slice, and its "
             "longest device events. Ranks whose clocks differ are not aligned here.</p>\n") +
         TimelineDiv(id, SummaryJson(t, {}, {}, max_events, bins));
}

}  // namespace opscope::report
