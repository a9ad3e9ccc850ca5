#include "analyze/importers/ascend/memory.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analyze/importers/ascend/csv_columns.h"
#include "analyze/importers/memory_holders.h"
#include "analyze/importers/sqlite_db.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr double kKiB = 1024.0, kMiB = 1024.0 * 1024.0;

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

// What the memory files' rows add up to: the blocks operators allocated, the
// allocator's totals at each, and the totals over time per component.
class MemoryBuilder {
 public:
  explicit MemoryBuilder(ReportedMemory& out) : out_(out) {}

  // A block whose size the file gives as negative: allocated before the
  // window, released in it.
  void AddEarlierBlock() { ++out_.before_window; }

  // A block of `bytes` allocated at alloc_ns (released at release_ns, -1 not
  // in the window), with the allocator's totals after it (-1 unknown).
  void AddBlock(const std::string& name, int64_t bytes, int64_t alloc_ns, int64_t release_ns,
                int64_t total_allocated, int64_t total_reserved) {
    ++out_.blocks;
    out_.allocated_bytes += bytes;
    by_op_.Add(name, bytes);
    blocks_.push_back({name, bytes, alloc_ns, release_ns});
    if (total_allocated > out_.peak_allocated_bytes) {
      out_.peak_allocated_bytes = total_allocated;
      out_.peak_ns = alloc_ns;
      out_.peak_operator = name;
      out_.peak_reserved_bytes = total_reserved;
    }
  }

  void AddRecord(const std::string& component, int64_t ns, int64_t allocated, int64_t reserved) {
    MemoryComponent& c = components_[component];
    c.component = component;
    c.peak_allocated_bytes = std::max(c.peak_allocated_bytes, allocated);
    if (reserved > c.peak_reserved_bytes) {
      c.peak_reserved_bytes = reserved;
      c.peak_reserved_ns = ns;
    }
  }

  void Finish() {
    out_.by_operator = by_op_.Largest();
    if (out_.peak_ns >= 0) {
      MemoryHolders live;
      for (const Block& b : blocks_) {
        if (b.alloc_ns > out_.peak_ns || (b.release_ns >= 0 && b.release_ns <= out_.peak_ns)) {
          continue;
        }
        live.Add(b.name, b.bytes);
        out_.live_at_peak_bytes += b.bytes;
      }
      out_.live_at_peak = live.Largest();
    }
    for (auto& [name, c] : components_) out_.components.push_back(c);
  }

 private:
  struct Block {
    std::string name;
    int64_t bytes, alloc_ns, release_ns;
  };
  ReportedMemory& out_;
  std::vector<Block> blocks_;
  MemoryHolders by_op_;
  std::map<std::string, MemoryComponent> components_;
};

}  // namespace

ReportedMemory ReadAscendMemory(Source* operator_memory, Source* memory_record) {
  ReportedMemory out;
  MemoryBuilder memory(out);
  if (operator_memory != nullptr) {
    CsvColumns r(*operator_memory, {"Name", "Size(KB)", "Allocation Time(us)"});
    out.source = r.path();
    const TotalColumn allocated = Total(r, "Allocation Total Allocated");
    const TotalColumn reserved = Total(r, "Allocation Total Reserved");
    // torch_npu writes the release time; msprof's operator_memory_*.csv only
    // the duration, whose end is the release (empty: not freed in the window).
    const bool release_time = r.Has("Release Time(us)");
    while (r.Next()) {
      const int64_t bytes = r.Size("Size(KB)", kKiB);
      const int64_t alloc = r.Micros("Allocation Time(us)");
      if (bytes < 0 && !AbsentField(r.Text("Size(KB)"))) {
        memory.AddEarlierBlock();
        continue;
      }
      if (bytes < 0 || alloc < 0) continue;
      int64_t release = -1;
      if (release_time) {
        release = r.Micros("Release Time(us)");
      } else if (const int64_t held = r.Micros("Duration(us)"); held >= 0) {
        release = alloc + held;
      }
      memory.AddBlock(std::string(r.Text("Name")), bytes, alloc, release, allocated.Bytes(r),
                      reserved.Bytes(r));
    }
  }
  if (memory_record != nullptr) {
    CsvColumns r(*memory_record, {"Component", "Timestamp(us)"});
    out.record_source = r.path();
    const TotalColumn allocated = Total(r, "Total Allocated");
    const TotalColumn reserved = Total(r, "Total Reserved");
    while (r.Next()) {
      memory.AddRecord(std::string(r.Text("Component")), r.Micros("Timestamp(us)"),
                       allocated.Bytes(r), reserved.Bytes(r));
    }
  }
  memory.Finish();
  return out;
}

ReportedMemory ReadAscendDbMemory(const SqliteDb& db, const std::string& path) {
  ReportedMemory out;
  MemoryBuilder memory(out);
  const SqliteStrings str(db, "STRING_IDS");  // ids absent (4294967295, NULL) read ""
  const auto value = [](sqlite3_stmt* s, int column) {
    return sqlite3_column_type(s, column) == SQLITE_NULL ? int64_t{-1}
                                                         : sqlite3_column_int64(s, column);
  };
  if (db.HasTable("OP_MEMORY")) {
    out.source = path + " (OP_MEMORY)";
    db.Query(
        "SELECT name, size, allocationTime, releaseTime, allocationTotalAllocated, "
        "allocationTotalReserved FROM OP_MEMORY ORDER BY allocationTime",
        [&](sqlite3_stmt* s) {
          const int64_t bytes = value(s, 1), alloc = value(s, 2);
          if (sqlite3_column_type(s, 1) != SQLITE_NULL && bytes < 0) {
            memory.AddEarlierBlock();
            return;
          }
          if (bytes < 0 || alloc < 0) return;
          memory.AddBlock(std::string(str(s, 0)), bytes, alloc, value(s, 3), value(s, 4),
                          value(s, 5));
        });
  }
  // msprof's own database (no torch_npu tables): the graph engine's operator
  // memory, NPU_OP_MEM, one row per allocation and per release (type: a
  // STRING_IDS id of "allocate" or "release"; the same addr pairs them; sizes
  // and the totals after each row in bytes; component "GE"). Where torch_npu
  // wrote OP_MEMORY and MEMORY_RECORD, those are the framework's view and
  // MEMORY_RECORD already holds GE's totals: NPU_OP_MEM is not read again.
  if (!db.HasTable("OP_MEMORY") && db.HasTable("NPU_OP_MEM")) {
    out.source = path + " (NPU_OP_MEM)";
    const bool records = !db.HasTable("MEMORY_RECORD");
    if (records) out.record_source = out.source;
    struct Open {
      std::string name;
      int64_t bytes, alloc_ns, total_allocated, total_reserved, release_ns = -1;
    };
    std::vector<Open> blocks;
    std::unordered_map<int64_t, size_t> open;  // addr -> its unreleased block
    db.Query(
        "SELECT operatorName, addr, type, size, timestampNs, totalAllocate, totalReserve, "
        "component FROM NPU_OP_MEM ORDER BY timestampNs",
        [&](sqlite3_stmt* s) {
          const std::string_view type = str(s, 2);
          const int64_t addr = value(s, 1), bytes = value(s, 3), ns = value(s, 4);
          if (ns < 0 || bytes < 0) return;
          if (records) memory.AddRecord(std::string(str(s, 7)), ns, value(s, 5), value(s, 6));
          if (type == "allocate") {
            open[addr] = blocks.size();
            blocks.push_back({std::string(str(s, 0)), bytes, ns, value(s, 5), value(s, 6)});
          } else if (type == "release") {
            const auto it = open.find(addr);
            if (it == open.end()) {
              memory.AddEarlierBlock();  // allocated before the window
            } else {
              blocks[it->second].release_ns = ns;
              open.erase(it);
            }
          }
        });
    for (const Open& b : blocks) {
      memory.AddBlock(b.name, b.bytes, b.alloc_ns, b.release_ns, b.total_allocated,
                      b.total_reserved);
    }
  }
  if (db.HasTable("MEMORY_RECORD")) {
    out.record_source = path + " (MEMORY_RECORD)";
    db.Query(
        "SELECT component, timestamp, totalAllocated, totalReserved FROM MEMORY_RECORD "
        "ORDER BY timestamp",
        [&](sqlite3_stmt* s) {
          memory.AddRecord(std::string(str(s, 0)), value(s, 1), value(s, 2), value(s, 3));
        });
  }
  memory.Finish();
  return out;
}

}  // namespace opscope::analyze
