#include "analyze/importers/ascend/memory.h"

#include <algorithm>
#include <map>

#include "analyze/importers/ascend/csv_columns.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr double kKiB = 1024.0, kMiB = 1024.0 * 1024.0;

std::vector<MemoryHolder> Sorted(const std::map<std::string, MemoryHolder>& m) {
  std::vector<MemoryHolder> v;
  for (const auto& [name, h] : m) v.push_back(h);
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  return v;
}

// The column of `prefix` in the unit the file uses: torch_npu writes totals in
// MB, msprof in KB (docs/formats/ascend.md 3.7 and 5.2). Empty when the header has neither.
struct TotalColumn {
  std::string name;
  double unit = kMiB;
  // The current row's value in bytes; -1 when the file has no such column.
  int64_t Bytes(const CsvColumns& r) const { return name.empty() ? -1 : r.Size(name, unit); }
};

TotalColumn Total(const CsvColumns& r, const std::string& prefix) {
  if (r.Has(prefix + "(MB)")) return {prefix + "(MB)", kMiB};
  if (r.Has(prefix + "(KB)")) return {prefix + "(KB)", kKiB};
  return {};
}

}  // namespace

ReportedMemory ReadAscendMemory(Source* operator_memory, Source* memory_record) {
  ReportedMemory out;
  if (operator_memory != nullptr) {
    CsvColumns r(*operator_memory, {"Name", "Size(KB)", "Allocation Time(us)"});
    out.source = r.path();
    const TotalColumn allocated = Total(r, "Allocation Total Allocated");
    const TotalColumn reserved = Total(r, "Allocation Total Reserved");
    // torch_npu writes the release time; msprof's operator_memory_*.csv only
    // the duration, whose end is the release (empty: not freed in the window).
    const bool release_time = r.Has("Release Time(us)");
    struct Block {
      std::string name;
      int64_t bytes, alloc_ns, release_ns;
    };
    std::vector<Block> blocks;
    std::map<std::string, MemoryHolder> by_op;
    while (r.Next()) {
      const int64_t bytes = r.Size("Size(KB)", kKiB);
      const int64_t alloc = r.Micros("Allocation Time(us)");
      const std::string name(r.Text("Name"));
      if (bytes < 0 && !AbsentField(r.Text("Size(KB)"))) {
        ++out.before_window;  // freed in the window, allocated before it
        continue;
      }
      if (bytes < 0 || alloc < 0) continue;
      ++out.blocks;
      out.allocated_bytes += bytes;
      MemoryHolder& h = by_op[name];
      h.name = name, ++h.blocks, h.bytes += bytes;
      int64_t release = -1;
      if (release_time) {
        release = r.Micros("Release Time(us)");
      } else if (const int64_t held = r.Micros("Duration(us)"); held >= 0) {
        release = alloc + held;
      }
      blocks.push_back({name, bytes, alloc, release});
      const int64_t total = allocated.Bytes(r);
      if (total > out.peak_allocated_bytes) {
        out.peak_allocated_bytes = total;
        out.peak_ns = alloc;
        out.peak_operator = name;
        out.peak_reserved_bytes = reserved.Bytes(r);
      }
    }
    out.by_operator = Sorted(by_op);
    if (out.peak_ns >= 0) {
      std::map<std::string, MemoryHolder> live;
      for (const Block& b : blocks) {
        if (b.alloc_ns > out.peak_ns || (b.release_ns >= 0 && b.release_ns <= out.peak_ns)) {
          continue;
        }
        MemoryHolder& h = live[b.name];
        h.name = b.name, ++h.blocks, h.bytes += b.bytes;
        out.live_at_peak_bytes += b.bytes;
      }
      out.live_at_peak = Sorted(live);
    }
  }
  if (memory_record != nullptr) {
    CsvColumns r(*memory_record, {"Component", "Timestamp(us)"});
    out.record_source = r.path();
    const TotalColumn allocated_column = Total(r, "Total Allocated");
    const TotalColumn reserved_column = Total(r, "Total Reserved");
    std::map<std::string, MemoryComponent> components;
    while (r.Next()) {
      const std::string name(r.Text("Component"));
      MemoryComponent& c = components[name];
      c.component = name;
      const int64_t allocated = allocated_column.Bytes(r);
      const int64_t reserved = reserved_column.Bytes(r);
      c.peak_allocated_bytes = std::max(c.peak_allocated_bytes, allocated);
      if (reserved > c.peak_reserved_bytes) {
        c.peak_reserved_bytes = reserved;
        c.peak_reserved_ns = r.Micros("Timestamp(us)");
      }
    }
    for (auto& [name, c] : components) out.components.push_back(c);
  }
  return out;
}

}  // namespace opscope::analyze
