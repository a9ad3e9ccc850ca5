// PyTorch's caching-allocator snapshot (snapshot_importer.h).
#include "analyze/importers/torch_memory/snapshot_importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "analyze/importers/memory_holders.h"
#include "analyze/importers/torch_memory/pickle_reader.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

using pickle::Document;
using pickle::Id;
using pickle::kAbsent;

constexpr std::string_view kBeforeHistory = "(allocated before the recorded history)";
constexpr std::string_view kNoStack = "(no stack recorded)";

// Where an allocation was made, from its frames (innermost first): the
// innermost Python frame outside PyTorch's own package (the user's code, or
// a library's), else the innermost Python frame, else the outermost
// dispatcher entry (at::_ops::NAME::call: the operator the caller called),
// else the innermost named frame.
std::string Site(const Document& doc, Id frames) {
  const std::span<const Id> list = doc.Items(frames);
  if (list.empty()) return std::string(kNoStack);
  const auto python = [&](Id f) { return doc.Str(doc.Get(f, "filename")).ends_with(".py"); };
  const auto in_torch = [&](Id f) {
    const std::string_view file = doc.Str(doc.Get(f, "filename"));
    return file.find("/torch/") != std::string_view::npos || file.starts_with("torch/");
  };
  const auto python_site = [&](Id f) {
    const std::string_view file = doc.Str(doc.Get(f, "filename"));
    return fmt::format("{} ({}:{})", doc.Str(doc.Get(f, "name")),
                       std::filesystem::path(file).filename().string(),
                       doc.Int(doc.Get(f, "line"), 0));
  };
  for (Id f : list) {
    if (python(f) && !in_torch(f)) return python_site(f);
  }
  for (Id f : list) {
    if (python(f)) return python_site(f);
  }
  for (auto it = list.rbegin(); it != list.rend(); ++it) {  // the outermost operator
    const std::string_view name = doc.Str(doc.Get(*it, "name"));
    if (name.starts_with("at::_ops::")) {
      const std::string_view op = name.substr(10);
      return fmt::format("at::_ops::{}", op.substr(0, op.find("::")));
    }
  }
  for (Id f : list) {
    const std::string_view name = doc.Str(doc.Get(f, "name"));
    if (!name.empty() && name != "??") return std::string(name.substr(0, 200));
  }
  return std::string(kNoStack);
}

struct Entry {
  enum Action : uint8_t {
    kAlloc,
    kFree,
    kFreeRequested,
    kFreeCompleted,
    kSegmentUp,
    kSegmentDown,
    kOom,
    kOther
  };
  Action action = kOther;
  int64_t addr = 0, size = 0, ns = -1, device_free = -1;
  Id frames = kAbsent;
};

Entry::Action ActionOf(std::string_view a) {
  if (a == "alloc") return Entry::kAlloc;
  if (a == "free") return Entry::kFree;  // older versions: requested and completed at once
  if (a == "free_requested") return Entry::kFreeRequested;
  if (a == "free_completed") return Entry::kFreeCompleted;
  if (a == "segment_alloc" || a == "segment_map") return Entry::kSegmentUp;
  if (a == "segment_free" || a == "segment_unmap") return Entry::kSegmentDown;
  if (a == "oom") return Entry::kOom;
  return Entry::kOther;
}

// A size the sums below can add without overflow: 0 to 1 PiB (a larger or a
// negative one is not a real allocation), else `otherwise`.
constexpr int64_t kMaxBytes = int64_t{1} << 50;
int64_t Bytes(int64_t v, int64_t otherwise) { return v >= 0 && v <= kMaxBytes ? v : otherwise; }

// A block live at some point of the history: its size and where it was made.
struct Live {
  int64_t size = 0;
  const std::string* site = nullptr;  // kept by the reader
};

class Reader {
 public:
  Reader(const Document& doc, std::string path) : doc_(doc), path_(std::move(path)) {}

  ReportedMemory Read() {
    const Id segments = doc_.Get(doc_.root(), "segments");
    const Id traces = doc_.Get(doc_.root(), "device_traces");
    if (doc_.kind(doc_.root()) != pickle::Kind::kDict ||
        (doc_.kind(segments) != pickle::Kind::kList && doc_.kind(traces) != pickle::Kind::kList)) {
      throw Error(ErrorCode::kInvalidInput,
                  path_ +
                      ": a pickle, but not a PyTorch memory snapshot: its top level is not a "
                      "dict with a 'segments' or 'device_traces' list");
    }
    const int device = ChooseDevice(segments, traces);
    ReportedMemory m;
    m.source = m.record_source = path_;
    m.device = fmt::format("GPU {}", device);
    m.holder = "allocation site";
    const std::span<const Id> per_device = doc_.Items(traces);
    std::vector<Entry> history;
    if (static_cast<size_t>(device) < per_device.size()) {
      history = Entries(per_device[static_cast<size_t>(device)]);
    }
    const bool have_segments = doc_.kind(segments) == pickle::Kind::kList;
    CheckTotals(segments, history);
    EndState(segments, device, m);
    Replay(history, have_segments, m);
    if (!have_segments) {
      m.notes.push_back(
          "The snapshot has no 'segments' (the allocator's state at its end): memory allocated "
          "before the recorded history is not known; totals start from the least that the "
          "history's frees require.");
    }
    if (history.empty()) {
      m.notes.push_back(
          "The snapshot holds no recorded history for this device (recorded with "
          "torch.cuda.memory._record_memory_history): only the state at its end is known.");
    }
    return m;
  }

 private:
  // A stack's site, once per stack: the pickler shares a stack between the
  // entries that have it, so most entries reuse one.
  const std::string& SiteOf(Id frames) {
    const auto [it, fresh] = sites_.try_emplace(frames);
    if (fresh) it->second = Site(doc_, frames);
    return it->second;
  }

  int DeviceOf(Id segment) const {
    return static_cast<int>(doc_.Int(doc_.Get(segment, "device"), 0));
  }

  // The device with the most history entries and segments (the lowest on a tie).
  int ChooseDevice(Id segments, Id traces) {
    std::map<int, size_t> weight;
    for (Id s : doc_.Items(segments)) weight[DeviceOf(s)] += 1;
    const std::span<const Id> t = doc_.Items(traces);
    for (size_t d = 0; d < t.size(); ++d) {
      if (!doc_.Items(t[d]).empty()) weight[static_cast<int>(d)] += doc_.Items(t[d]).size();
    }
    int best = 0;
    size_t most = 0;
    for (const auto& [d, w] : weight) {
      if (w > most) best = d, most = w;
    }
    if (weight.size() > 1) {
      others_ = weight.size() - 1;
    }
    return best;
  }

  std::vector<Entry> Entries(Id list) {
    std::vector<Entry> out;
    size_t malformed = 0;
    const std::span<const Id> entries = doc_.Items(list);
    out.reserve(entries.size());
    for (Id e : entries) {
      // One pass over the entry's keys (millions of entries: no lookup per key).
      Entry x;
      x.size = -1;
      const std::span<const Id> items = doc_.Items(e);
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        const std::string_view key = doc_.Str(items[i]);
        const Id v = items[i + 1];
        if (key == "action") {
          x.action = ActionOf(doc_.Str(v));
        } else if (key == "addr") {
          x.addr = doc_.Int(v, 0);
        } else if (key == "size") {
          x.size = Bytes(doc_.Int(v, -1), -1);
        } else if (key == "time_us") {
          if (const int64_t us = doc_.Int(v, -1); us >= 0 && us < INT64_MAX / 1000) {
            x.ns = us * 1000;
          }
        } else if (key == "device_free") {
          x.device_free = doc_.Int(v, -1);
        } else if (key == "frames") {
          x.frames = v;
        }
      }
      if (x.action != Entry::kOther && x.action != Entry::kOom && x.size < 0) {
        ++malformed;
        continue;
      }
      out.push_back(x);
    }
    if (malformed > 0) {
      notes_.push_back(fmt::format("{} history entries without a size were left out", malformed));
    }
    return out;
  }

  // Every sum below adds or subtracts some of these sizes: where all of them
  // together stay under 2^61 bytes, none can overflow. A real allocator's
  // history is far below (2^61 bytes is two exbibytes).
  void CheckTotals(Id segments, const std::vector<Entry>& history) const {
    // Each term is at most 2^50 (Bytes): checked after each, the total never
    // passes 2^61 + 2^50.
    constexpr uint64_t kLimit = uint64_t{1} << 61;
    uint64_t total = 0;
    const auto add = [&](int64_t v) {
      total += static_cast<uint64_t>(std::max<int64_t>(v, 0));
      if (total > kLimit) {
        throw Error(ErrorCode::kInvalidInput,
                    path_ +
                        ": the snapshot's sizes add up to more than 2^61 bytes: not an "
                        "allocator's history");
      }
    };
    for (const Entry& e : history) add(e.size);
    for (Id seg : doc_.Items(segments)) {
      add(Bytes(doc_.Int(doc_.Get(seg, "total_size"), 0), 0));
      for (Id b : doc_.Items(doc_.Get(seg, "blocks"))) {
        add(Bytes(doc_.Int(doc_.Get(b, "size"), 0), 0));
        add(Bytes(doc_.Int(doc_.Get(b, "requested_size"), 0), 0));
      }
    }
  }

  // The pools at the snapshot, and the blocks allocated then (by address).
  void EndState(Id segments, int device, ReportedMemory& m) {
    std::map<std::string, MemoryPool> pools;
    for (Id s : doc_.Items(segments)) {
      if (DeviceOf(s) != device) continue;
      std::string name(doc_.Str(doc_.Get(s, "segment_type")));
      if (name.empty()) name = "(pool not recorded)";
      MemoryPool& p = pools[name];
      p.pool = name;
      ++p.segments;
      p.reserved_bytes += Bytes(doc_.Int(doc_.Get(s, "total_size"), 0), 0);
      for (Id b : doc_.Items(doc_.Get(s, "blocks"))) {
        const int64_t size = Bytes(doc_.Int(doc_.Get(b, "size"), 0), 0);
        const std::string_view state = doc_.Str(doc_.Get(b, "state"));
        if (state == "active_allocated") {
          p.allocated_bytes += size, p.active_bytes += size;
          // The history records what was requested: the replay starts from that.
          const int64_t requested = Bytes(doc_.Int(doc_.Get(b, "requested_size"), -1), -1);
          end_allocated_[doc_.Int(doc_.Get(b, "address"), 0)] = {requested > 0 ? requested : size,
                                                                 &SiteOf(doc_.Get(b, "frames"))};
        } else if (state == "active_pending_free" || state == "active_awaiting_free") {
          p.active_bytes += size;
        } else {
          p.free_bytes += size, ++p.free_blocks;
          p.largest_free_bytes = std::max(p.largest_free_bytes, size);
        }
      }
    }
    MemoryPool all{.pool = "all"};
    for (auto& [name, p] : pools) {
      all.segments += p.segments, all.reserved_bytes += p.reserved_bytes;
      all.allocated_bytes += p.allocated_bytes, all.active_bytes += p.active_bytes;
      all.free_bytes += p.free_bytes, all.free_blocks += p.free_blocks;
      all.largest_free_bytes = std::max(all.largest_free_bytes, p.largest_free_bytes);
      m.pools.push_back(std::move(p));
    }
    if (!m.pools.empty()) m.pools.push_back(all);
    end_reserved_ = all.reserved_bytes;
  }

  // The history replayed from the state before it, derived from the end.
  void Replay(const std::vector<Entry>& history, bool have_segments, ReportedMemory& m) {
    // Blocks live before the history: freed in it without being allocated in
    // it first, or allocated at the end without an allocation in it.
    std::unordered_map<int64_t, Live> before;
    {
      std::unordered_map<int64_t, int64_t> live;  // allocated in the history
      for (const Entry& e : history) {
        if (e.action == Entry::kAlloc) {
          live[e.addr] = e.size;
        } else if (e.action == Entry::kFree || e.action == Entry::kFreeRequested) {
          if (live.erase(e.addr) == 0 && !before.contains(e.addr)) {
            before[e.addr] = {e.size, &before_history_};
          }
        }
      }
      for (const auto& [addr, block] : end_allocated_) {
        if (!live.contains(addr) && !before.contains(addr)) {
          before[addr] = {block.size, *block.site == kNoStack ? &before_history_ : block.site};
        }
      }
    }
    int64_t start_allocated = 0;
    for (const auto& [addr, b] : before) start_allocated += b.size;
    int64_t net_reserved = 0;
    for (const Entry& e : history) {
      if (e.action == Entry::kSegmentUp) net_reserved += e.size;
      if (e.action == Entry::kSegmentDown) net_reserved -= e.size;
    }
    int64_t start_reserved = have_segments ? end_reserved_ - net_reserved : 0;
    if (!have_segments) {
      // The least reserve the history's segment frees require.
      int64_t running = 0, lowest = 0;
      for (const Entry& e : history) {
        running += e.action == Entry::kSegmentUp     ? e.size
                   : e.action == Entry::kSegmentDown ? -e.size
                                                     : 0;
        lowest = std::min(lowest, running);
      }
      start_reserved = -lowest;
    } else if (start_reserved < 0) {
      notes_.push_back(fmt::format(
          "the history's segment allocations exceed the reserve at its end by {} bytes: "
          "reserved totals start at 0",
          -start_reserved));
      start_reserved = 0;
    }
    m.whole_state = have_segments;

    // First pass: the totals after each entry, the peak (the first at the
    // highest allocated; -1: before the history), every allocation by site.
    int64_t allocated = start_allocated, reserved = start_reserved;
    m.peak_allocated_bytes = start_allocated, m.peak_reserved_bytes = start_reserved;
    size_t peak = SIZE_MAX;
    MemoryComponent allocator{.component = "caching allocator",
                              .peak_allocated_bytes = start_allocated,
                              .peak_reserved_bytes = start_reserved};
    MemoryHolders by_site;
    std::unordered_map<int64_t, int64_t> sizes;  // live blocks' sizes, for frees
    for (const auto& [addr, b] : before) sizes[addr] = b.size;
    for (size_t i = 0; i < history.size(); ++i) {
      const Entry& e = history[i];
      switch (e.action) {
        case Entry::kAlloc: {
          allocated += e.size, sizes[e.addr] = e.size;
          ++m.blocks, m.allocated_bytes += e.size;
          by_site.Add(SiteOf(e.frames), e.size);
          break;
        }
        case Entry::kFree:
        case Entry::kFreeRequested: {
          const auto it = sizes.find(e.addr);
          allocated -= it != sizes.end() ? it->second : e.size;
          if (it != sizes.end()) sizes.erase(it);
          break;
        }
        case Entry::kSegmentUp: reserved += e.size; break;
        case Entry::kSegmentDown: reserved -= e.size; break;
        case Entry::kOom:
          m.ooms.push_back({.ns = e.ns,
                            .bytes = e.size,
                            .device_free_bytes = e.device_free,
                            .allocated_bytes = allocated,
                            .reserved_bytes = reserved,
                            .site = SiteOf(e.frames)});
          break;
        default: break;
      }
      if (allocated > m.peak_allocated_bytes) {
        m.peak_allocated_bytes = allocated, m.peak_reserved_bytes = reserved, peak = i;
      }
      if (reserved > allocator.peak_reserved_bytes) {
        allocator.peak_reserved_bytes = reserved, allocator.peak_reserved_ns = e.ns;
      }
    }
    allocator.peak_allocated_bytes = m.peak_allocated_bytes;
    m.components.push_back(allocator);
    m.before_window = static_cast<int64_t>(before.size());
    int64_t end_allocated = 0;
    for (const auto& [addr, b] : end_allocated_) end_allocated += b.size;
    if (have_segments && allocated != end_allocated) {
      notes_.push_back(fmt::format(
          "replayed, the history ends at {} bytes allocated where the segments hold {}: the "
          "history and the state disagree (entries lost from the history)",
          allocated, end_allocated));
    }

    // Second pass: the blocks live at the peak, by site.
    std::unordered_map<int64_t, Live> live(before.begin(), before.end());
    if (peak != SIZE_MAX) {
      m.peak_ns = history[peak].ns;
      for (size_t i = 0; i <= peak; ++i) {
        const Entry& e = history[i];
        if (e.action == Entry::kAlloc) {
          live[e.addr] = {e.size, &SiteOf(e.frames)};
        } else if (e.action == Entry::kFree || e.action == Entry::kFreeRequested) {
          live.erase(e.addr);
        }
      }
      const auto at = live.find(history[peak].addr);
      m.peak_operator = at != live.end() ? *at->second.site : std::string(kNoStack);
    } else {
      m.peak_operator = "(before the recorded history)";
    }
    MemoryHolders at_peak;
    for (const auto& [addr, b] : live) {
      at_peak.Add(*b.site, b.size);
      m.live_at_peak_bytes += b.size;
    }
    m.live_at_peak = at_peak.Largest();
    m.by_operator = by_site.Largest();
    if (others_ > 0) {
      notes_.push_back(fmt::format(
          "the snapshot records {} other device{}: this reads the one with the most entries",
          others_, others_ == 1 ? "" : "s"));
    }
    for (std::string& n : notes_) m.notes.push_back(std::move(n));
  }

  const Document& doc_;
  std::string path_;
  std::unordered_map<int64_t, Live> end_allocated_;  // blocks allocated at the snapshot
  std::unordered_map<Id, std::string> sites_;        // by frames list (stable addresses)
  const std::string before_history_{kBeforeHistory};
  int64_t end_reserved_ = 0;
  size_t others_ = 0;
  std::vector<std::string> notes_;
};

}  // namespace

bool SniffTorchMemorySnapshot(Source& source) {
  const std::string_view head = source.Peek(64);
  if (!pickle::LooksLikePickle(head)) return false;
  const size_t dict = head.find('}');
  if (dict == std::string_view::npos) return false;
  const std::string_view after = head.substr(dict);
  return after.find("segments") != std::string_view::npos ||
         after.find("device_traces") != std::string_view::npos;
}

void ImportTorchMemorySnapshot(Source& source, TraceModel& model) {
  const Document doc = pickle::Parse(source);
  model.reported.memory = Reader(doc, source.name()).Read();
  model.format = "torch-memory-snapshot";
  model.written_by_pytorch = true;
}

Importer TorchMemorySnapshotImporter() {
  return {.name = "torch-memory-snapshot",
          .description =
              "PyTorch's caching-allocator snapshot (torch.cuda.memory._dump_snapshot "
              "pickle)",
          .file_patterns = {"*snapshot*.pickle", "*snapshot*.pkl"},
          .sniff = SniffTorchMemorySnapshot,
          .import = ImportTorchMemorySnapshot};
}

}  // namespace opscope::analyze
