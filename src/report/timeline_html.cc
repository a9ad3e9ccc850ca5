#include "report/timeline_html.h"

#include <fmt/format.h>

#include <algorithm>
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

std::string TimelineJson(const analyze::Analysis& a, size_t max_events, int max_bins) {
  const analyze::TimelineSummary& t = a.timeline;
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
  AppendArray(out, a.steps, [&](const analyze::StepBreakdown& s) {
    out += '[';
    AppendJsonString(out, s.name);
    out += fmt::format(",{},{},", s.begin_ns - t.begin_ns, s.duration_ns);
    AppendJsonString(out, s.status);
    out += ',';
    AppendJsonString(out, s.status_reason);
    out += ']';
  });
  out += ",\"gaps\":";
  AppendArray(out, a.busy.gaps, [&](const analyze::IdleGap& g) {
    out += fmt::format("[{},{},", g.begin_ns - t.begin_ns, g.duration_ns);
    AppendJsonString(out, g.cause);
    out += ',';
    AppendJsonString(out, g.evidence);
    out += ']';
  });
  out += '}';
  return out;
}

std::string TimelineHtml(const analyze::Analysis& a, std::string_view id, size_t max_events,
                         int max_bins) {
  const analyze::TimelineSummary& t = a.timeline;
  if (t.events == 0) return "<p>No complete events: no timeline to draw.</p>\n";
  size_t kept = 0;
  for (const auto& lane : t.lanes) kept += lane.kept.size();
  kept = std::min(kept, max_events);
  std::string h = fmt::format(
      "<p>{} events on {} lanes (device streams first, then threads). The {} longest are drawn "
      "one by one, fairly shared between lanes; every lane also shows its busy share per slice "
      "(the shaded strip), which counts every event. Scroll or +/− to zoom, drag to pan, "
      "shift-drag to list a window's events, click an event, step or gap to list its "
      "window.</p>\n",
      t.events, t.lanes.size(), kept);
  h += fmt::format(
      "<div class=\"timeline\" data-src=\"{0}\"><div class=\"tl-bar\"><button type=\"button\" "
      "class=\"tl-in\" title=\"zoom in\">+</button><button type=\"button\" class=\"tl-out\" "
      "title=\"zoom out\">−</button><button type=\"button\" class=\"tl-reset\">whole "
      "trace</button> <span class=\"tl-status\"></span></div><canvas tabindex=\"0\" "
      "aria-label=\"timeline\"></canvas><div class=\"tl-tip\" hidden></div><div "
      "class=\"tl-list\"></div></div>\n<script type=\"application/json\" id=\"{0}\">",
      core::EscapeHtml(id));
  h += TimelineJson(a, max_events, max_bins);
  h += "</script>\n";
  return h;
}

}  // namespace opscope::report
