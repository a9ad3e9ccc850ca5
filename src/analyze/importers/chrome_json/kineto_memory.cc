#include "analyze/importers/chrome_json/kineto_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analyze/importers/memory_holders.h"

namespace opscope::analyze {
namespace {

constexpr std::string_view kNoOperator = "(no operator)";

// The innermost framework operator around each event, on its thread: one
// sweep per thread over its operators (by start) with a stack of the open
// ones. `events` are sorted by time.
std::vector<std::string> Operators(const TraceModel& model,
                                   const std::vector<MemoryEvent>& events) {
  std::map<uint32_t, std::vector<size_t>> ops;  // per thread, by start
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] == EventClass::kHostOp) ops[model.track[e]].push_back(e);
  }
  for (auto& [track, list] : ops) {
    std::stable_sort(list.begin(), list.end(),
                     [&](size_t a, size_t b) { return model.start_ns[a] < model.start_ns[b]; });
  }
  std::vector<std::string> out(events.size(), std::string(kNoOperator));
  std::map<uint32_t, std::pair<size_t, std::vector<size_t>>> sweep;  // next op, open ops
  for (size_t i = 0; i < events.size(); ++i) {
    const auto list = ops.find(events[i].track);
    if (list == ops.end()) continue;
    auto& [next, open] = sweep[events[i].track];
    const int64_t t = events[i].ts;
    while (next < list->second.size() && model.start_ns[list->second[next]] <= t) {
      open.push_back(list->second[next++]);
    }
    // Innermost: the latest opened that has not ended (others stay below it).
    for (auto it = open.rbegin(); it != open.rend(); ++it) {
      if (model.start_ns[*it] + model.duration_ns[*it] >= t) {
        out[i] = std::string(model.String(model.name[*it]));
        break;
      }
    }
    std::erase_if(open, [&](size_t o) { return model.start_ns[o] + model.duration_ns[o] < t; });
  }
  return out;
}

}  // namespace

std::optional<ReportedMemory> KinetoMemory(const TraceModel& model, std::vector<MemoryEvent> events,
                                           const std::string& path) {
  // The device: the one other than the CPU with the most events.
  std::map<std::pair<int64_t, int64_t>, int64_t> per_device;
  for (const MemoryEvent& m : events) {
    if (m.device_type > 0) ++per_device[{m.device_type, m.device_id}];
  }
  if (per_device.empty()) return std::nullopt;
  const auto device =
      std::max_element(per_device.begin(), per_device.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      })->first;
  std::erase_if(events, [&](const MemoryEvent& m) {
    return m.device_type != device.first || m.device_id != device.second;
  });
  std::stable_sort(events.begin(), events.end(),
                   [](const MemoryEvent& a, const MemoryEvent& b) { return a.ts < b.ts; });
  const std::vector<std::string> ops = Operators(model, events);
  ReportedMemory out;
  out.source = out.record_source = path;
  out.device = fmt::format("{} {}", device.first == 1 ? "GPU" : "device", device.second);
  // The peak: the first event at the highest total allocated.
  size_t peak = SIZE_MAX;
  MemoryComponent allocator{.component = "caching allocator"};
  for (size_t i = 0; i < events.size(); ++i) {
    const MemoryEvent& m = events[i];
    if (m.total_allocated > out.peak_allocated_bytes)
      out.peak_allocated_bytes = m.total_allocated, peak = i;
    if (m.total_reserved > allocator.peak_reserved_bytes) {
      allocator.peak_reserved_bytes = m.total_reserved, allocator.peak_reserved_ns = m.ts;
    }
  }
  allocator.peak_allocated_bytes = out.peak_allocated_bytes;
  out.components.push_back(allocator);
  if (peak == SIZE_MAX) return out;
  out.peak_ns = events[peak].ts;
  out.peak_reserved_bytes = events[peak].total_reserved;
  out.peak_operator = ops[peak];
  // Every allocation by operator; the blocks live at the peak (allocated at
  // or before it, not freed by then); frees of blocks allocated before the
  // trace began.
  std::unordered_map<int64_t, std::pair<size_t, int64_t>> live;  // addr -> (event, bytes)
  std::unordered_map<int64_t, std::pair<size_t, int64_t>> at_peak_blocks;
  MemoryHolders by_operator, at_peak;
  for (size_t i = 0; i < events.size(); ++i) {
    const MemoryEvent& m = events[i];
    if (m.bytes > 0) {
      ++out.blocks;
      out.allocated_bytes += m.bytes;
      by_operator.Add(ops[i], m.bytes);
      live[m.addr] = {i, m.bytes};
    } else if (m.bytes < 0 && live.erase(m.addr) == 0) {
      ++out.before_window;
    }
    if (i == peak) at_peak_blocks = live;
  }
  for (const auto& [addr, block] : at_peak_blocks) {
    at_peak.Add(ops[block.first], block.second);
    out.live_at_peak_bytes += block.second;
  }
  out.live_at_peak = at_peak.Largest();
  out.by_operator = by_operator.Largest();
  return out;
}

}  // namespace opscope::analyze
