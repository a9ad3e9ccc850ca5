#include "analyze/importers/ascend/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "analyze/importers/csv_reader.h"
#include "analyze/importers/timestamps.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr double kKiB = 1024.0, kMiB = 1024.0 * 1024.0;

bool Absent(std::string_view t) { return t.empty() || t == "N/A"; }

// A number of `unit` bytes as integer bytes; false for text that is not one.
bool Bytes(std::string_view text, double unit, int64_t& bytes) {
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v) || std::fabs(v * unit) > 9e18) {
    return false;
  }
  bytes = std::llround(v * unit);
  return true;
}

struct Row {
  std::string_view name;
  int64_t bytes = 0, alloc_ns = -1, release_ns = -1;
};

class Reader {
 public:
  Reader(Source& source, std::initializer_list<const char*> required)
      : path_(source.name()), csv_(source), header_(ReadCsvHeader(csv_, path_)) {
    for (const char* column : required) {
      if (header_.Find(column) == SIZE_MAX) {
        throw Error(ErrorCode::kInvalidInput,
                    path_ + ": line 1: no '" + std::string(column) + "' column");
      }
    }
  }
  bool Next() { return header_.NextRecord(csv_, fields_, path_); }
  std::string_view Text(const char* column) const {
    const size_t at = header_.Find(column);
    return at == SIZE_MAX ? std::string_view() : TrimField(fields_[at]);
  }
  // -1 when absent; throws naming the line and column when it is not a number.
  int64_t Size(const char* column, double unit) const {
    const std::string_view t = Text(column);
    if (Absent(t)) return -1;
    int64_t b = 0;
    if (!Bytes(t, unit, b)) throw Bad(column, t, "a size");
    return b;
  }
  int64_t Time(const char* column) const {
    const std::string_view t = Text(column);
    if (Absent(t)) return -1;
    int64_t ns = 0;
    if (!MicrosToNs(t, ns)) throw Bad(column, t, "a time in microseconds");
    return ns;
  }
  const std::string& path() const { return path_; }

 private:
  Error Bad(const char* column, std::string_view t, const char* what) const {
    return Error(ErrorCode::kInvalidInput, fmt::format("{}: line {}: '{}' is not {}: '{}'", path_,
                                                       csv_.record_line(), column, what, t));
  }
  std::string path_;
  CsvReader csv_;
  CsvHeader header_;
  std::vector<std::string> fields_;
};

std::vector<AscendMemoryHolder> Sorted(const std::map<std::string, AscendMemoryHolder>& m) {
  std::vector<AscendMemoryHolder> v;
  for (const auto& [name, h] : m) v.push_back(h);
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  return v;
}

}  // namespace

AscendMemory ReadAscendMemory(Source* operator_memory, Source* memory_record) {
  AscendMemory out;
  if (operator_memory != nullptr) {
    Reader r(*operator_memory, {"Name", "Size(KB)", "Allocation Time(us)"});
    out.source = r.path();
    struct Block {
      std::string name;
      int64_t bytes, alloc_ns, release_ns;
    };
    std::vector<Block> blocks;
    std::map<std::string, AscendMemoryHolder> by_op;
    while (r.Next()) {
      const int64_t bytes = r.Size("Size(KB)", kKiB);
      const int64_t alloc = r.Time("Allocation Time(us)");
      const std::string name(r.Text("Name"));
      if (bytes < 0 && !Absent(r.Text("Size(KB)"))) {
        ++out.before_window;  // freed in the window, allocated before it
        continue;
      }
      if (bytes < 0 || alloc < 0) continue;
      ++out.blocks;
      out.allocated_bytes += bytes;
      AscendMemoryHolder& h = by_op[name];
      h.name = name, ++h.blocks, h.bytes += bytes;
      blocks.push_back({name, bytes, alloc, r.Time("Release Time(us)")});
      const int64_t total = r.Size("Allocation Total Allocated(MB)", kMiB);
      if (total > out.peak_allocated_bytes) {
        out.peak_allocated_bytes = total;
        out.peak_ns = alloc;
        out.peak_operator = name;
        out.peak_reserved_bytes = r.Size("Allocation Total Reserved(MB)", kMiB);
      }
    }
    out.by_operator = Sorted(by_op);
    if (out.peak_ns >= 0) {
      std::map<std::string, AscendMemoryHolder> live;
      for (const Block& b : blocks) {
        if (b.alloc_ns > out.peak_ns || (b.release_ns >= 0 && b.release_ns <= out.peak_ns)) {
          continue;
        }
        AscendMemoryHolder& h = live[b.name];
        h.name = b.name, ++h.blocks, h.bytes += b.bytes;
        out.live_at_peak_bytes += b.bytes;
      }
      out.live_at_peak = Sorted(live);
    }
  }
  if (memory_record != nullptr) {
    Reader r(*memory_record, {"Component", "Timestamp(us)"});
    out.record_source = r.path();
    std::map<std::string, AscendMemoryComponent> components;
    while (r.Next()) {
      const std::string name(r.Text("Component"));
      AscendMemoryComponent& c = components[name];
      c.component = name;
      const int64_t allocated = r.Size("Total Allocated(MB)", kMiB);
      const int64_t reserved = r.Size("Total Reserved(MB)", kMiB);
      c.peak_allocated_bytes = std::max(c.peak_allocated_bytes, allocated);
      if (reserved > c.peak_reserved_bytes) {
        c.peak_reserved_bytes = reserved;
        c.peak_reserved_ns = r.Time("Timestamp(us)");
      }
    }
    for (auto& [name, c] : components) out.components.push_back(c);
  }
  return out;
}

}  // namespace opscope::analyze
