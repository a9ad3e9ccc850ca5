#include "analyze/graph_capture.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analyze/links.h"
#include "analyze/names.h"

namespace opscope::analyze {
namespace {

// A runtime call that records a graph node while its stream captures: a
// kernel launch, or an asynchronous copy or set.
bool RecordsNode(std::string_view name) {
  const std::string n = Lower(BaseName(name));
  return Contains(n, "launchkernel") || Contains(n, "launchcooperativekernel") ||
         (Contains(n, "memcpy") && Contains(n, "async")) ||
         (Contains(n, "memset") && Contains(n, "async"));
}

bool IsGraphLaunch(std::string_view name) { return Contains(Lower(name), "graphlaunch"); }

struct Capture {
  std::vector<std::string> operators;  // the operator of each node, in capture order
};

std::vector<Capture> CapturesOf(const TraceModel& m) {
  std::vector<size_t> order(m.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return m.start_ns[a] < m.start_ns[b]; });
  // Per thread: its capture windows (begin-capture to end-capture calls).
  std::map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> windows;
  std::map<uint32_t, int64_t> open;
  // What each runtime call's name is, decided once per name: 1 begin-capture,
  // 2 end-capture, 3 a call that records a node, 0 none; -1 not yet known.
  std::vector<int8_t> kind(m.string_count(), -1);
  const auto kind_of = [&](size_t e) {
    int8_t& k = kind[m.name[e]];
    if (k < 0) {
      const std::string n = Lower(m.String(m.name[e]));
      k = Contains(n, "begincapture")        ? 1
          : Contains(n, "endcapture")        ? 2
          : RecordsNode(m.String(m.name[e])) ? 3
                                             : 0;
    }
    return k;
  };
  for (const size_t e : order) {
    if (m.cls[e] != EventClass::kRuntime) continue;
    if (kind_of(e) == 1) open[m.track[e]] = m.start_ns[e];
    if (kind_of(e) == 2) {
      const auto it = open.find(m.track[e]);
      if (it == open.end()) continue;
      windows[m.track[e]].push_back({it->second, m.start_ns[e]});
      open.erase(it);
    }
  }
  // The launches inside a window, each charged to the innermost framework
  // operator around it (the links' enclosing events, links.h).
  const EventLinks links = LinkEvents(m);
  std::map<uint32_t, std::vector<Capture>> captures;  // per thread, one per window
  for (const auto& [track, spans] : windows) captures[track].resize(spans.size());
  std::vector<Capture> out;
  for (const size_t e : order) {
    const auto spans = windows.find(m.track[e]);
    if (spans == windows.end() || m.cls[e] != EventClass::kRuntime || kind_of(e) != 3) continue;
    const int64_t s = m.start_ns[e];
    const auto w = std::find_if(spans->second.begin(), spans->second.end(), [&](const auto& span) {
      return s >= span.first && s <= span.second;
    });
    if (w == spans->second.end()) continue;
    std::string op = "(no operator)";
    ForEachAncestor(links, links.parent[e], [&](int32_t a) {
      if (m.cls[static_cast<size_t>(a)] != EventClass::kHostOp) return true;
      op = std::string(m.String(m.name[static_cast<size_t>(a)]));
      return false;
    });
    captures[m.track[e]][static_cast<size_t>(w - spans->second.begin())].operators.push_back(
        std::move(op));
  }
  for (auto& [track, list] : captures) {
    for (Capture& c : list) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

GraphKernels ChargeGraphKernels(const TraceModel& replay, const TraceModel& capture,
                                const std::string& name) {
  GraphKernels out;
  out.capture = name;
  // The replay's graph launches, and the device tasks each ran (its correlation).
  std::unordered_map<int64_t, std::vector<size_t>> nodes;
  std::vector<int64_t> launches;
  for (size_t e = 0; e < replay.size(); ++e) {
    if (replay.cls[e] == EventClass::kRuntime && IsGraphLaunch(replay.String(replay.name[e])) &&
        replay.correlation[e] >= 0) {
      launches.push_back(replay.correlation[e]);
      nodes.try_emplace(replay.correlation[e]);
    }
  }
  out.launches = static_cast<int64_t>(launches.size());
  if (launches.empty()) return out;
  for (size_t e = 0; e < replay.size(); ++e) {
    if (!IsDevice(replay.cls[e])) continue;
    const auto it = nodes.find(replay.correlation[e]);
    if (it != nodes.end()) it->second.push_back(e);
  }
  const std::vector<Capture> captures = CapturesOf(capture);
  out.captures = static_cast<int64_t>(captures.size());
  std::map<std::string, GraphKernels::Operator> by_name;
  for (const int64_t id : launches) {
    std::vector<size_t>& tasks = nodes[id];
    std::stable_sort(tasks.begin(), tasks.end(),
                     [&](size_t a, size_t b) { return replay.start_ns[a] < replay.start_ns[b]; });
    const bool one_stream = std::all_of(tasks.begin(), tasks.end(), [&](size_t e) {
      return replay.track[e] == replay.track[tasks.front()];
    });
    const auto match = std::find_if(captures.begin(), captures.end(), [&](const Capture& c) {
      return c.operators.size() == tasks.size();
    });
    if (tasks.empty() || !one_stream || match == captures.end()) {
      out.unmatched.push_back(
          tasks.empty() ? fmt::format("graph launch (correlation {}): no device task", id)
          : !one_stream ? fmt::format("graph launch (correlation {}): its {} tasks ran on several "
                                      "streams, so their order is not the capture's",
                                      id, tasks.size())
                        : fmt::format("graph launch (correlation {}): {} tasks, and no capture "
                                      "window recorded as many launches",
                                      id, tasks.size()));
      continue;
    }
    ++out.matched;
    for (size_t i = 0; i < tasks.size(); ++i) {
      GraphKernels::Operator& o = by_name[match->operators[i]];
      o.name = match->operators[i];
      ++o.kernels;
      o.ns += replay.duration_ns[tasks[i]];
      ++out.kernels;
      out.kernel_ns += replay.duration_ns[tasks[i]];
    }
  }
  for (auto& [key, o] : by_name) out.operators.push_back(std::move(o));
  std::stable_sort(out.operators.begin(), out.operators.end(),
                   [](const auto& a, const auto& b) { return a.ns > b.ns; });
  return out;
}

}  // namespace opscope::analyze
