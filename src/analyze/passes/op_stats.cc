#include "analyze/passes/op_stats.h"

#include <algorithm>
#include <map>
#include <span>

#include "analyze/analysis.h"
#include "analyze/flat_map.h"
#include "analyze/mapped.h"
#include "analyze/names.h"

namespace opscope::analyze {
namespace {

// Where the nearest-rank percentile P of n sorted values lies: the value of
// rank ceil(P/100 * n) (1-based), computed in integers so that no rounding of
// P/100 * n moves it.
size_t RankIndex(size_t n, int percent) {
  const size_t rank = (static_cast<size_t>(percent) * n + 99) / 100;
  return std::min(std::max<size_t>(rank, 1), n) - 1;
}

// The events grouped by name and class, in order of first appearance: count,
// total, mean, p50, p99, max, flops, bytes (no share yet). Derived rows and
// spans of the whole trace (class kOther) are left out.
std::vector<OpStats> GroupByNameAndClass(const TraceModel& model) {
  MappedVector<int64_t> self = SelfTimes(model);
  // Pass 1: each event's group, and the sums.
  Int64Map<uint32_t> index;  // (name << 8 | class) -> group + 1
  MappedVector<uint32_t> group_of(model.size(), UINT32_MAX);
  std::vector<OpStats> out;
  std::vector<uint8_t> all_flops, all_bytes;
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    if (cls == EventClass::kDerived || cls == EventClass::kOther) continue;
    uint32_t& slot = index[static_cast<int64_t>(model.name[e]) << 8 | static_cast<int64_t>(cls)];
    if (slot == 0) {
      OpStats s;
      s.name = std::string(model.String(model.name[e]));
      s.cls = cls;
      s.flops = s.bytes = 0;
      out.push_back(std::move(s));
      all_flops.push_back(1), all_bytes.push_back(1);
      slot = static_cast<uint32_t>(out.size());
    }
    const uint32_t g = slot - 1;
    group_of[e] = g;
    OpStats& s = out[g];
    ++s.count;
    s.total_ns += model.duration_ns[e];
    s.self_ns += self[e];
    all_flops[g] &= model.flops[e] >= 0;
    all_bytes[g] &= model.bytes[e] >= 0;
    s.flops += std::max<int64_t>(model.flops[e], 0);
    s.bytes += std::max<int64_t>(model.bytes[e], 0);
  }
  MappedVector<int64_t>().swap(self);  // done with: the durations below take its place
  // Pass 2: the durations of each group side by side, then its percentiles.
  std::vector<size_t> begin(out.size() + 1, 0);
  for (size_t g = 0; g < out.size(); ++g) begin[g + 1] = begin[g] + out[g].count;
  MappedVector<int64_t> durations(begin.back());
  std::vector<size_t> fill(begin.begin(), begin.end() - 1);
  for (size_t e = 0; e < model.size(); ++e) {
    if (group_of[e] != UINT32_MAX) durations[fill[group_of[e]]++] = model.duration_ns[e];
  }
  for (size_t g = 0; g < out.size(); ++g) {
    OpStats& s = out[g];
    Percentiles(std::span(durations.data() + begin[g], durations.data() + begin[g + 1]), s.p50_ns,
                s.p99_ns, s.max_ns);
    s.mean_ns = static_cast<double>(s.total_ns) / static_cast<double>(s.count);
    if (!all_flops[g]) s.flops = -1;
    if (!all_bytes[g]) s.bytes = -1;
  }
  return out;
}

}  // namespace

MappedVector<int64_t> SelfTimes(const TraceModel& model) {
  MappedVector<int64_t> self(model.size());
  for (size_t e = 0; e < self.size(); ++e) self[e] = model.duration_ns[e];
  // Host events by track, in the order they open: by start, the longer first
  // (a parent and its first child may start together).
  TrackGroups by_track = GroupByTrack(model, [&](size_t e) {
    const EventClass cls = model.cls[e];
    return !(IsDevice(cls) || cls == EventClass::kDerived || cls == EventClass::kOther);
  });
  for (const uint32_t e : by_track.events) self[e] = 0;
  const auto end_of = [&](uint32_t e) { return model.start_ns[e] + model.duration_ns[e]; };
  std::vector<uint32_t> open;  // opened and not yet closed, innermost last
  for (size_t t = 0; t + 1 < by_track.begin.size(); ++t) {
    const std::span<uint32_t> events(by_track.events.data() + by_track.begin[t],
                                     by_track.events.data() + by_track.begin[t + 1]);
    const auto opens_first = [&](uint32_t a, uint32_t b) {
      if (model.start_ns[a] != model.start_ns[b]) return model.start_ns[a] < model.start_ns[b];
      if (model.duration_ns[a] != model.duration_ns[b]) {
        return model.duration_ns[a] > model.duration_ns[b];
      }
      return a < b;
    };
    // Profilers mostly write a thread's calls in this order already.
    if (!std::is_sorted(events.begin(), events.end(), opens_first)) {
      std::sort(events.begin(), events.end(), opens_first);
    }
    // Every instant goes to the innermost event open then: the one opened last.
    open.clear();
    int64_t now = 0;
    const auto advance = [&](int64_t to) {
      while (!open.empty()) {
        const uint32_t top = open.back();
        const int64_t end = end_of(top);
        if (end > to) {
          self[top] += to - now;
          break;
        }
        self[top] += std::max<int64_t>(0, end - now);  // it may have ended inside a child
        now = std::max(now, end);
        open.pop_back();
      }
      now = to;
    };
    for (const uint32_t e : events) {
      advance(model.start_ns[e]);
      open.push_back(e);
    }
    advance(INT64_MAX);
  }
  return self;
}

void Percentiles(std::span<int64_t> values, int64_t& p50, int64_t& p99, int64_t& max) {
  const size_t n = values.size();
  const auto first = values.begin(), last = values.end();
  if (n == 0) {
    p50 = p99 = max = 0;
    return;
  }
  const size_t i99 = RankIndex(n, 99), i50 = RankIndex(n, 50);
  std::nth_element(first, first + i99, last);
  p99 = first[i99];
  max = *std::max_element(first + i99, last);
  std::nth_element(first, first + i50, first + i99 + 1);
  p50 = first[i50];
}

std::vector<OpStats> ComputeOpStats(const TraceModel& model) {
  std::vector<OpStats> out = GroupByNameAndClass(model);
  int64_t device_total = 0, host_op_self = 0;
  for (const OpStats& s : out) {
    if (IsDevice(s.cls)) device_total += s.total_ns;
    if (s.cls == EventClass::kHostOp) host_op_self += s.self_ns;
  }
  for (OpStats& s : out) {
    const auto pct = [](int64_t part, int64_t whole) {
      return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
    };
    if (IsDevice(s.cls)) {
      s.share_pct = pct(s.total_ns, device_total);
    } else if (s.cls == EventClass::kHostOp) {
      s.share_pct = pct(s.self_ns, host_op_self);
    } else {
      s.share_pct = -1;
    }
  }
  std::sort(out.begin(), out.end(), [](const OpStats& a, const OpStats& b) {
    if (a.self_ns != b.self_ns) return a.self_ns > b.self_ns;
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.name != b.name) return a.name < b.name;
    return a.cls < b.cls;
  });
  return out;
}

std::vector<TypeStats> ComputeKernelTypes(const TraceModel& model) {
  std::map<std::string, TypeStats> by_type;
  Int64Map<uint32_t> type_of;     // op type id -> index in `types` + 1
  Int64Map<uint8_t> named;        // (op type, kernel name) seen
  std::vector<TypeStats*> types;  // map nodes do not move
  int64_t device_total = 0;
  bool typed = false;
  for (size_t e = 0; e < model.size(); ++e) {
    if (!IsDevice(model.cls[e])) continue;
    device_total += model.duration_ns[e];
    if (model.cls[e] != EventClass::kKernel || model.op_type[e] == 0) continue;
    typed = true;
    uint32_t& k = type_of[model.op_type[e]];
    if (k == 0) {
      const std::string type(model.String(model.op_type[e]));
      TypeStats& t = by_type[type];
      t.type = type;
      types.push_back(&t);
      k = static_cast<uint32_t>(types.size());
    }
    TypeStats& t = *types[k - 1];
    uint8_t& seen = named[static_cast<int64_t>(uint64_t{model.op_type[e]} << 32 | model.name[e])];
    if (seen == 0) seen = 1, ++t.names;
    ++t.count;
    t.total_ns += model.duration_ns[e];
  }
  if (!typed) return {};
  std::vector<TypeStats> out;
  for (auto& [type, t] : by_type) {
    t.share_pct = device_total > 0 ? 100.0 * static_cast<double>(t.total_ns) / device_total : 0;
    out.push_back(t);
  }
  std::sort(out.begin(), out.end(),
            [](const TypeStats& a, const TypeStats& b) { return a.total_ns > b.total_ns; });
  return out;
}

Pass OpStatsPass() {
  return {"op_stats",
          "Which operators take the time: count, total, percentiles, share.",
          {},
          [](const TraceModel& model, Analysis& a) {
            a.operators = ComputeOpStats(model);
            a.kernel_types = ComputeKernelTypes(model);
          }};
}

}  // namespace opscope::analyze
