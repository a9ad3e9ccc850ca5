#include "analyze/passes/timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "analyze/analysis.h"
#include "core/text.h"

namespace opscope::analyze {
namespace {

constexpr size_t kMaxNameChars = 1000, kMaxArgsChars = 400;

// What the hover shows beside an event's name and duration: the columns the
// model has for it, those it does not left out. Ids (correlation, external)
// are not shown: they would make every event's text unique, and the page holds
// each text once.
std::string ArgsOf(const TraceModel& m, size_t e) {
  std::string out;
  const auto add = [&](std::string_view key, std::string_view value) {
    if (value.empty()) return;
    if (!out.empty()) out += "; ";
    out += key;
    out += ": ";
    out += value;
  };
  const auto add_id = [&](std::string_view key, const IdColumn& column) {
    if (column[e] != 0) add(key, m.String(column[e]));
  };
  const auto add_int = [&](std::string_view key, const CountColumn& column) {
    if (column[e] >= 0) add(key, std::to_string(column[e]));
  };
  add_id("category", m.category);
  add_id("task type", m.kind);
  add_id("shapes", m.shapes);
  add_id("input dims", m.input_dims);
  add_id("dtype", m.dtype);
  add_id("input type", m.input_type);
  add_id("layout", m.layout);
  add_id("module", m.module);
  add_int("flops", m.flops);
  add_int("bytes", m.bytes);
  return core::CutUtf8(out, kMaxArgsChars);
}

}  // namespace

std::vector<size_t> FairShares(const std::vector<size_t>& wanted, size_t budget) {
  std::vector<size_t> order(wanted.size()), share(wanted.size(), 0);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return wanted[a] < wanted[b]; });
  size_t left = budget;
  for (size_t i = 0; i < order.size(); ++i) {
    const size_t equal = left / (order.size() - i);
    share[order[i]] = std::min(wanted[order[i]], equal);
    left -= share[order[i]];
  }
  return share;
}

void AddOverlap(std::vector<double>& slices, double begin, double width, double lo, double hi,
                double weight) {
  if (slices.empty() || width <= 0) return;
  const int n = static_cast<int>(slices.size());
  for (int b = std::clamp(static_cast<int>((lo - begin) / width), 0, n - 1); b < n; ++b) {
    const double slice_lo = begin + b * width, slice_hi = slice_lo + width;
    const double overlap = std::min(hi, slice_hi) - std::max(lo, slice_lo);
    if (overlap > 0) slices[static_cast<size_t>(b)] += weight * overlap;
    if (slice_hi >= hi) break;
  }
}

TimelineSummary SummarizeTimeline(const TraceModel& m, int bins, size_t max_events) {
  TimelineSummary out;
  const size_t n = m.size();
  bins = std::max(bins, 1);
  int64_t begin = std::numeric_limits<int64_t>::max(), end = std::numeric_limits<int64_t>::min();
  std::vector<uint32_t> lane_of(m.tracks.size(), UINT32_MAX);
  std::vector<size_t> per_lane;
  std::vector<size_t> device_events;
  for (size_t e = 0; e < n; ++e) {
    if (m.duration_ns[e] < 0) continue;
    begin = std::min(begin, m.start_ns[e]);
    end = std::max(end, m.start_ns[e] + m.duration_ns[e]);
    uint32_t& lane = lane_of[m.track[e]];
    if (lane == UINT32_MAX) {
      lane = static_cast<uint32_t>(per_lane.size());
      per_lane.push_back(0);
      device_events.push_back(0);
    }
    ++per_lane[lane];
    if (IsDevice(m.cls[e])) ++device_events[lane];
    ++out.events;
  }
  if (out.events == 0) return out;
  out.begin_ns = begin, out.end_ns = end;

  // Lanes in display order: device streams first, then by process and thread.
  std::vector<uint32_t> track_of_lane(per_lane.size());
  for (size_t t = 0; t < lane_of.size(); ++t) {
    if (lane_of[t] != UINT32_MAX) track_of_lane[lane_of[t]] = static_cast<uint32_t>(t);
  }
  std::vector<uint32_t> order(per_lane.size());
  std::iota(order.begin(), order.end(), 0u);
  const auto is_device = [&](uint32_t lane) { return 2 * device_events[lane] > per_lane[lane]; };
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Track& ta = m.tracks[track_of_lane[a]];
    const Track& tb = m.tracks[track_of_lane[b]];
    return std::make_tuple(!is_device(a), ta.process, ta.thread) <
           std::make_tuple(!is_device(b), tb.process, tb.thread);
  });
  std::vector<uint32_t> position(order.size());
  for (uint32_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  for (uint32_t t = 0; t < lane_of.size(); ++t) {
    if (lane_of[t] != UINT32_MAX) lane_of[t] = position[lane_of[t]];
  }
  std::vector<size_t> counts(order.size());
  out.lanes.resize(order.size());
  for (uint32_t i = 0; i < order.size(); ++i) {
    TimelineLane& lane = out.lanes[i];
    const Track& track = m.tracks[track_of_lane[order[i]]];
    lane.process = track.process, lane.thread = track.thread;
    lane.device = is_device(order[i]);
    lane.events = static_cast<int64_t>(per_lane[order[i]]);
    counts[i] = per_lane[order[i]];
  }

  // The events of each lane together (a counting sort by lane), in start order.
  std::vector<size_t> offset(counts.size() + 1, 0);
  for (size_t i = 0; i < counts.size(); ++i) offset[i + 1] = offset[i] + counts[i];
  std::vector<uint32_t> events(offset.back());
  {
    std::vector<size_t> next(offset.begin(), offset.end() - 1);
    for (size_t e = 0; e < n; ++e) {
      if (m.duration_ns[e] >= 0) events[next[lane_of[m.track[e]]]++] = static_cast<uint32_t>(e);
    }
  }
  const double width = std::max(1.0, static_cast<double>(end - begin) / bins);
  const auto bin_of = [&](int64_t t) {
    return std::clamp(static_cast<int>(static_cast<double>(t - begin) / width), 0, bins - 1);
  };
  out.starts.assign(static_cast<size_t>(bins), 0);
  std::vector<double> busy(static_cast<size_t>(bins));
  for (size_t lane = 0; lane < out.lanes.size(); ++lane) {
    const auto first = events.begin() + static_cast<std::ptrdiff_t>(offset[lane]);
    const auto last = events.begin() + static_cast<std::ptrdiff_t>(offset[lane + 1]);
    const auto by_start = [&](uint32_t a, uint32_t b) { return m.start_ns[a] < m.start_ns[b]; };
    if (!std::is_sorted(first, last, by_start)) std::stable_sort(first, last, by_start);
    // Busy time per slice: the union of the lane's events (a parent and the
    // children inside it count once).
    std::fill(busy.begin(), busy.end(), 0.0);
    int64_t covered = std::numeric_limits<int64_t>::min();
    for (auto it = first; it != last; ++it) {
      const int64_t s0 = m.start_ns[*it], t = s0 + m.duration_ns[*it];
      ++out.starts[static_cast<size_t>(bin_of(s0))];
      if (t <= covered) continue;
      const int64_t s = std::max(s0, covered);
      covered = t;
      AddOverlap(busy, static_cast<double>(begin), width, static_cast<double>(s),
                 static_cast<double>(t), 1.0);
    }
    auto& permil = out.lanes[lane].busy_permil;
    permil.resize(static_cast<size_t>(bins));
    for (size_t b = 0; b < busy.size(); ++b) {
      permil[b] = static_cast<uint16_t>(std::min(1000.0, std::round(1000 * busy[b] / width)));
    }
  }

  // Each lane's longest events, within its fair share of the budget.
  const std::vector<size_t> shares = FairShares(counts, max_events);
  std::unordered_map<std::string, uint32_t> ids;
  out.strings.push_back("");
  ids.emplace("", 0);
  const auto intern = [&](std::string text) {
    const auto [it, added] = ids.emplace(std::move(text), static_cast<uint32_t>(ids.size()));
    if (added) out.strings.push_back(it->first);
    return it->second;
  };
  for (size_t lane = 0; lane < out.lanes.size(); ++lane) {
    std::vector<uint32_t> chosen(events.begin() + static_cast<std::ptrdiff_t>(offset[lane]),
                                 events.begin() + static_cast<std::ptrdiff_t>(offset[lane + 1]));
    const auto longer = [&](uint32_t a, uint32_t b) {
      return m.duration_ns[a] != m.duration_ns[b] ? m.duration_ns[a] > m.duration_ns[b] : a < b;
    };
    const auto keep = static_cast<std::ptrdiff_t>(shares[lane]);
    std::nth_element(chosen.begin(), chosen.begin() + keep, chosen.end(), longer);
    chosen.resize(static_cast<size_t>(keep));
    std::sort(chosen.begin(), chosen.end(), longer);
    auto& kept = out.lanes[lane].kept;
    kept.reserve(chosen.size());
    for (const uint32_t e : chosen) {
      kept.push_back({m.start_ns[e], m.duration_ns[e],
                      intern(core::CutUtf8(m.String(m.name[e]), kMaxNameChars)),
                      intern(ArgsOf(m, e)), m.cls[e]});
    }
  }
  return out;
}

Pass TimelinePass() {
  return {"timeline",
          "What happened when, on each stream and thread, in a form small enough to draw?",
          {},
          [](const TraceModel& model, Analysis& a) { a.timeline = SummarizeTimeline(model); }};
}

}  // namespace opscope::analyze
