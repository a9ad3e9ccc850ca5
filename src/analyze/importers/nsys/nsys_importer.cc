// Nsight Systems' SQLite export (nsys_importer.h).
#include "analyze/importers/nsys/nsys_importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyze/importers/sqlite_db.h"
#include "analyze/importers/timestamps.h"
#include "analyze/names.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr std::string_view kFormat = "nsys-sqlite";

// One of the database's ENUM_* tables: id -> name (CUDA_MEMCPY_KIND_HTOD).
std::map<int64_t, std::string> Enum(const SqliteDb& db, const std::string& table) {
  std::map<int64_t, std::string> out;
  if (!db.HasTable(table) || !Has(db.Columns(table), "name")) return out;
  db.Query("SELECT id, name FROM " + table, [&](sqlite3_stmt* s) {
    out.emplace(sqlite3_column_int64(s, 0), std::string(Text(s, 1)));
  });
  return out;
}

// The column if the table has it, else NULL: SELECT lists that old and new
// schemas both answer.
std::string Column(const std::vector<std::string>& columns, const std::string& name) {
  return Has(columns, name) ? "\"" + name + "\"" : "NULL";
}

int64_t IntOr(sqlite3_stmt* s, int col, int64_t fallback) {
  return IsNull(s, col) ? fallback : sqlite3_column_int64(s, col);
}

// A copy's direction from its copyKind's enum name.
CopyDirection DirectionOf(std::string_view kind) {
  const auto ends = [&](std::string_view suffix) { return kind.ends_with(suffix); };
  if (ends("_HTOD") || ends("_HTOA")) return CopyDirection::kHostToDevice;
  if (ends("_DTOH") || ends("_ATOH")) return CopyDirection::kDeviceToHost;
  if (ends("_DTOD") || ends("_ATOA") || ends("_ATOD") || ends("_DTOA")) {
    return CopyDirection::kDeviceToDevice;
  }
  if (ends("_PTOP")) return CopyDirection::kPeerToPeer;
  if (ends("_HTOH")) return CopyDirection::kHostToHost;
  return CopyDirection::kUnknown;
}

HostMemory MemoryOf(std::string_view kind) {
  if (kind.ends_with("_PAGEABLE")) return HostMemory::kPageable;
  if (kind.ends_with("_PINNED")) return HostMemory::kPinned;
  if (kind.ends_with("_MANAGED") || kind.ends_with("_MANAGED_STATIC")) return HostMemory::kManaged;
  return HostMemory::kUnknown;
}

using Named = std::pair<std::string_view, std::string_view>;  // an enum name's suffix, a text

// The text of the first entry whose suffix `name` ends with, else `fallback`.
template <size_t N>
std::string_view BySuffix(const Named (&table)[N], std::string_view name,
                          std::string_view fallback) {
  for (const auto& [suffix, text] : table) {
    if (name.ends_with(suffix)) return text;
  }
  return fallback;
}

// Why the driver migrated unified memory, from the cause's enum name
// (CUpti_ActivityUnifiedMemoryMigrationCause); the export's own labels carry
// a misspelling.
std::string_view MigrationCause(std::string_view cause) {
  static constexpr Named kCauses[] = {{"_USER", "user prefetch"},
                                      {"_COHERENCE", "page fault"},
                                      {"_PREFETCH", "speculative prefetch"},
                                      {"_EVICTION", "eviction"},
                                      {"_ACCESS_COUNTERS", "access counters"}};
  return BySuffix(kCauses, cause, "migration");
}

// A CUPTI synchronisation record's name as Kineto names the same records
// (cuda_sync: "Stream Sync", ...), from its syncType's enum name, so that one
// program's synchronisations read alike in both producers' traces.
std::string_view SyncName(std::string_view type) {
  static constexpr Named kTypes[] = {{"_EVENT_SYNCHRONIZE", "Event Sync"},
                                     {"_STREAM_WAIT_EVENT", "Stream Wait Event"},
                                     {"_STREAM_SYNCHRONIZE", "Stream Sync"},
                                     {"_CONTEXT_SYNCHRONIZE", "Context Sync"}};
  return BySuffix(kTypes, type, "Synchronization");
}

// "Pageable", "Device", ... for a copy's name, as Kineto names its copies.
std::string MemoryLabel(std::string_view kind) {
  static constexpr std::string_view kPrefix = "CUDA_MEMOPR_MEMORY_KIND_";
  if (!kind.starts_with(kPrefix)) return "Unknown";
  std::string label(kind.substr(kPrefix.size()));
  bool upper = true;
  for (char& c : label) {
    if (c == '_') {
      c = ' ', upper = true;
    } else {
      c = static_cast<char>(upper ? c : std::tolower(static_cast<unsigned char>(c)));
      upper = false;
    }
  }
  return label;
}

// PyTorch's emit_nvtx ranges: "aten::mm, seq = 12, op_id = 3, sizes = [...]"
// -> "aten::mm"; "" for any other range.
std::string_view FrameworkOperator(std::string_view text) {
  const size_t comma = text.find(", ");
  const std::string_view op = text.substr(0, comma);
  if (op.find("::") == std::string_view::npos || op.find(' ') != std::string_view::npos) return {};
  if (comma == std::string_view::npos) return op;
  const std::string_view rest = text.substr(comma + 2);
  for (const std::string_view arg : {"seq", "op_id", "sizes", "input_op_ids"}) {
    if (rest.starts_with(arg)) return op;
  }
  return {};
}

class Reader {
 public:
  Reader(const SqliteDb& db, TraceModel& model)
      : db_(db), model_(model), strings_(db, "StringIds") {}

  void Run() {
    model_.format = std::string(kFormat);
    model_.source = db_.path();
    Metadata();
    Processes();
    Device();
    Kernels();
    Copies();
    Sets();
    Syncs();
    Runtime();
    Nvtx();
    Samples();
    OsCalls();
    Diagnostics();
    if (!missing_.empty()) {
      model_.import_notes.push_back(
          "tables not in this export, so the analyses that need them "
          "have no data (not zeros): " +
          missing_);
    }
    if (skipped_ > 0) {
      model_.records_left_out += static_cast<uint64_t>(skipped_);
      model_.import_notes.push_back(fmt::format(
          "{} rows without a valid start and end (missing, out of range, or an end before the "
          "start) were left out",
          skipped_));
    }
    model_.NameProcesses();
  }

 private:
  // The table's columns, or empty (and the table named as missing) where
  // it is not there or lacks one of `needed`.
  std::vector<std::string> Table(const std::string& table,
                                 std::initializer_list<const char*> needed) {
    if (!db_.HasTable(table)) {
      missing_ += (missing_.empty() ? "" : ", ") + table;
      return {};
    }
    std::vector<std::string> columns = db_.Columns(table);
    for (const char* column : needed) {
      if (!Has(columns, column)) {
        missing_ +=
            fmt::format("{}{} (it has no column {})", missing_.empty() ? "" : ", ", table, column);
        return {};
      }
    }
    return columns;
  }

  void Metadata() {
    if (!db_.HasTable("META_DATA_EXPORT")) return;
    const auto c = db_.Columns("META_DATA_EXPORT");
    if (!Has(c, "name") || !Has(c, "value")) return;
    db_.Query("SELECT name, value FROM META_DATA_EXPORT", [&](sqlite3_stmt* s) {
      const std::string_view name = Text(s, 0);
      if (name == "EXPORT_SCHEMA_VERSION") model_.metadata["nsys_schema"] = Text(s, 1);
      if (name == "EXPORT_PRODUCT_VERSION") model_.metadata["nsys_version"] = Text(s, 1);
    });
  }

  void Processes() {
    // Names only: a table without the columns leaves them as numbers.
    const auto has = [&](const char* table, std::initializer_list<const char*> columns) {
      if (!db_.HasTable(table)) return false;
      const auto c = db_.Columns(table);
      for (const char* column : columns) {
        if (!Has(c, column)) return false;
      }
      return true;
    };
    if (has("PROCESSES", {"pid", "name"})) {
      db_.Query("SELECT pid, name FROM PROCESSES", [&](sqlite3_stmt* s) {
        model_.process_names[std::to_string(sqlite3_column_int64(s, 0))] = Text(s, 1);
      });
    }
    if (has("ThreadNames", {"globalTid", "nameId"})) {
      db_.Query("SELECT globalTid, nameId FROM ThreadNames", [&](sqlite3_stmt* s) {
        thread_names_[sqlite3_column_int64(s, 0)] = std::string(strings_(s, 1));
      });
    }
  }

  void Device() {
    for (const std::string table : {"TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE"}) {
      if (!db_.HasTable(table) || !Has(db_.Columns(table), "name")) continue;
      db_.Query("SELECT name FROM " + table, [&](sqlite3_stmt* s) {
        if (model_.device_name.empty()) model_.device_name = Text(s, 0);
      });
      if (!model_.device_name.empty()) return;
    }
  }

  // A host thread's track from its globalTid.
  uint32_t Thread(int64_t global_tid) {
    const auto g = static_cast<uint64_t>(global_tid);
    const std::string pid = std::to_string(g >> 24 & 0xFFFFFF);
    const std::string tid = std::to_string(g & 0xFFFFFF);
    const uint32_t t = model_.TrackFor(pid, tid);
    if (const auto it = thread_names_.find(global_tid); it != thread_names_.end()) {
      model_.tracks[t].thread = it->second;
    }
    return t;
  }
  uint32_t Stream(int64_t device, int64_t stream) {
    return model_.TrackFor(fmt::format("GPU {}", device), fmt::format("stream {}", stream));
  }
  // A correlation id unique across the file's processes (CUPTI numbers each
  // process's calls from 1).
  int64_t Correlation(sqlite3_stmt* s, int col, int64_t pid) {
    if (IsNull(s, col)) return -1;
    const auto [it, added] = process_index_.emplace(pid, process_index_.size());
    return static_cast<int64_t>(it->second) << 40 | (sqlite3_column_int64(s, col) & 0xFFFFFFFFFF);
  }
  static int64_t PidOfGlobal(int64_t global) {
    return static_cast<int64_t>(static_cast<uint64_t>(global) >> 24 & 0xFFFFFF);
  }

  // start and end as an event's start and duration; false (the row left out,
  // counted) when either is missing, out of range or the end precedes the start.
  bool Span(sqlite3_stmt* s, int start_col, int end_col, EventRow& row) {
    if (IsNull(s, start_col) || IsNull(s, end_col)) return ++skipped_, false;
    const int64_t start = sqlite3_column_int64(s, start_col);
    const int64_t end = sqlite3_column_int64(s, end_col);
    if (start < -kMaxTimeNs || start > kMaxTimeNs || end < start || end > kMaxTimeNs) {
      return ++skipped_, false;
    }
    row.start_ns = start, row.duration_ns = end - start;
    return true;
  }

  void Kernels() {
    const auto c = Table("CUPTI_ACTIVITY_KIND_KERNEL", {"start", "end"});
    if (c.empty()) return;
    std::unordered_map<std::string, EventClass> cls_of;
    db_.Query("SELECT start, end, " + Column(c, "deviceId") + ", " + Column(c, "streamId") + ", " +
                  Column(c, "correlationId") + ", " + Column(c, "globalPid") + ", " +
                  (Has(c, "demangledName") ? "demangledName" : Column(c, "shortName")) +
                  " FROM CUPTI_ACTIVITY_KIND_KERNEL",
              [&](sqlite3_stmt* s) {
                EventRow row;
                if (!Span(s, 0, 1, row)) return;
                const std::string name(strings_(s, 6));
                auto [it, added] = cls_of.emplace(name, EventClass::kKernel);
                if (added && IsCommunication(name)) it->second = EventClass::kCommunication;
                row.name = model_.Intern(name);
                row.category = model_.Intern("kernel");
                row.track = Stream(IntOr(s, 2, 0), IntOr(s, 3, 0));
                row.cls = it->second;
                row.correlation = Correlation(s, 4, PidOfGlobal(IntOr(s, 5, 0)));
                model_.Append(row);
              });
  }

  void Copies() {
    const auto c = Table("CUPTI_ACTIVITY_KIND_MEMCPY", {"start", "end", "copyKind"});
    if (c.empty()) return;
    const auto kinds = Enum(db_, "ENUM_CUDA_MEMCPY_OPER");
    const auto memories = Enum(db_, "ENUM_CUDA_MEM_KIND");
    const auto causes = Enum(db_, "ENUM_CUDA_UNIF_MEM_MIGRATION");
    const auto named = [](const std::map<int64_t, std::string>& e, int64_t id) {
      const auto it = e.find(id);
      return it == e.end() ? std::string() : it->second;
    };
    db_.Query(
        "SELECT start, end, " + Column(c, "deviceId") + ", " + Column(c, "streamId") + ", " +
            Column(c, "correlationId") + ", " + Column(c, "globalPid") + ", " + Column(c, "bytes") +
            ", copyKind, " + Column(c, "srcKind") + ", " + Column(c, "dstKind") + ", " +
            Column(c, "migrationCause") + " FROM CUPTI_ACTIVITY_KIND_MEMCPY",
        [&](sqlite3_stmt* s) {
          EventRow row;
          if (!Span(s, 0, 1, row)) return;
          const std::string kind = named(kinds, IntOr(s, 7, -1));
          const std::string src = named(memories, IntOr(s, 8, -1));
          const std::string dst = named(memories, IntOr(s, 9, -1));
          CopyInfo copy{DirectionOf(kind), HostMemory::kUnknown};
          if (copy.direction == CopyDirection::kHostToDevice) copy.host_memory = MemoryOf(src);
          if (copy.direction == CopyDirection::kDeviceToHost) copy.host_memory = MemoryOf(dst);
          if (copy.direction == CopyDirection::kHostToHost) {
            copy.host_memory =
                MemoryOf(src) == HostMemory::kPageable ? HostMemory::kPageable : MemoryOf(dst);
          }
          // Unified memory's page migrations (CUDA_MEMCPY_KIND_UVM_*):
          // managed memory moved by the driver, not a copy the program
          // made; the cause says why (a page fault, a prefetch).
          const bool unified = kind.find("_UVM_") != std::string::npos;
          if (unified && copy.direction != CopyDirection::kDeviceToDevice &&
              copy.direction != CopyDirection::kPeerToPeer) {
            copy.host_memory = HostMemory::kManaged;
          }
          row.name =
              model_.Intern(unified ? fmt::format("Unified memory {} ({})", Name(copy.direction),
                                                  MigrationCause(named(causes, IntOr(s, 10, -1))))
                                    : fmt::format("Memcpy {} ({} -> {})", Name(copy.direction),
                                                  MemoryLabel(src), MemoryLabel(dst)));
          row.category = model_.Intern("gpu_memcpy");
          row.track = Stream(IntOr(s, 2, 0), IntOr(s, 3, 0));
          row.cls = EventClass::kMemcpy;
          row.bytes = IntOr(s, 6, -1);
          row.correlation = Correlation(s, 4, PidOfGlobal(IntOr(s, 5, 0)));
          row.copy = copy.Packed();
          model_.Append(row);
        });
  }

  void Sets() {
    const auto c = Table("CUPTI_ACTIVITY_KIND_MEMSET", {"start", "end"});
    if (c.empty()) return;
    db_.Query("SELECT start, end, " + Column(c, "deviceId") + ", " + Column(c, "streamId") + ", " +
                  Column(c, "correlationId") + ", " + Column(c, "globalPid") + ", " +
                  Column(c, "bytes") + " FROM CUPTI_ACTIVITY_KIND_MEMSET",
              [&](sqlite3_stmt* s) {
                EventRow row;
                if (!Span(s, 0, 1, row)) return;
                row.name = model_.Intern("Memset (Device)");
                row.category = model_.Intern("gpu_memset");
                row.track = Stream(IntOr(s, 2, 0), IntOr(s, 3, 0));
                row.cls = EventClass::kMemset;
                row.bytes = IntOr(s, 6, -1);
                row.correlation = Correlation(s, 4, PidOfGlobal(IntOr(s, 5, 0)));
                model_.Append(row);
              });
  }

  // Nsight Systems' own account of what went wrong while it recorded
  // (DIAGNOSTIC_EVENT, its severity named by ENUM_DIAGNOSTIC_SEVERITY_LEVEL):
  // its warnings and errors (records it dropped, buffers that filled) said in
  // the report, each distinct text once with how often; information and
  // verbose messages left out.
  void Diagnostics() {
    if (!db_.HasTable("DIAGNOSTIC_EVENT")) return;
    const auto c = db_.Columns("DIAGNOSTIC_EVENT");
    if (!Has(c, "severity") || !Has(c, "text")) return;
    const auto levels = Enum(db_, "ENUM_DIAGNOSTIC_SEVERITY_LEVEL");
    constexpr size_t kTextBytes = 300;
    std::map<std::string, int64_t> said;  // "Warning: text" -> how often
    int64_t total = 0;
    db_.Query("SELECT severity, text FROM DIAGNOSTIC_EVENT", [&](sqlite3_stmt* s) {
      const auto level = levels.find(IntOr(s, 0, -1));
      if (level == levels.end() || (level->second != "Warning" && level->second != "Error")) {
        return;
      }
      ++said[level->second + ": " + std::string(Text(s, 1).substr(0, kTextBytes))];
      ++total;
    });
    if (said.empty()) return;
    std::string list;
    for (const auto& [text, n] : said) {
      list += fmt::format("{}'{}'{}", list.empty() ? "" : "; ", text,
                          n > 1 ? fmt::format(" ({} times)", n) : std::string());
    }
    model_.import_notes.push_back(fmt::format(
        "Nsight Systems reported {} warning{} or error{} while recording (its DIAGNOSTIC_EVENT "
        "table): {}. What it says it lost is not in this trace",
        total, total == 1 ? "" : "s", total == 1 ? "" : "s", list));
  }

  void Syncs() {
    if (!db_.HasTable("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"))
      return;  // optional: runtime calls show them
    const auto c = db_.Columns("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION");
    if (!Has(c, "start") || !Has(c, "end")) return;
    const auto types = Enum(db_, "ENUM_CUPTI_SYNC_TYPE");
    db_.Query("SELECT start, end, " + Column(c, "deviceId") + ", " + Column(c, "streamId") + ", " +
                  Column(c, "syncType") + " FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
              [&](sqlite3_stmt* s) {
                EventRow row;
                if (!Span(s, 0, 1, row)) return;
                const auto type = types.find(IntOr(s, 4, -1));
                row.name = model_.Intern(
                    SyncName(type == types.end() ? std::string_view() : type->second));
                row.category = model_.Intern("cuda_sync");
                row.track = Stream(IntOr(s, 2, 0), IntOr(s, 3, 0));
                row.cls = EventClass::kSync;
                model_.Append(row);
              });
  }

  void Runtime() {
    const auto c = Table("CUPTI_ACTIVITY_KIND_RUNTIME", {"start", "end", "globalTid", "nameId"});
    if (c.empty()) return;
    std::unordered_map<int64_t, uint32_t> name_of;  // nameId -> interned name
    db_.Query("SELECT start, end, globalTid, " + Column(c, "correlationId") +
                  ", nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME",
              [&](sqlite3_stmt* s) {
                EventRow row;
                if (!Span(s, 0, 1, row)) return;
                const int64_t gtid = IntOr(s, 2, 0);
                const int64_t id = IntOr(s, 4, -1);
                auto [it, added] = name_of.emplace(id, 0);
                if (added) it->second = model_.Intern(WithoutVersion(strings_(s, 4)));
                row.name = it->second;
                row.category = model_.Intern("cuda_runtime");
                row.track = Thread(gtid);
                row.cls = EventClass::kRuntime;
                row.correlation = Correlation(s, 3, PidOfGlobal(gtid));
                model_.Append(row);
              });
  }

  // CPU IP samples (COMPOSITE_EVENTS, each sample's call chain in
  // SAMPLING_CALLCHAINS by its id, the leaf at stackDepth 0): optional, as
  // `nsys profile --sample=none` writes none.
  void Samples() {
    if (!db_.HasTable("COMPOSITE_EVENTS") || !db_.HasTable("SAMPLING_CALLCHAINS")) return;
    const auto e = db_.Columns("COMPOSITE_EVENTS"), c = db_.Columns("SAMPLING_CALLCHAINS");
    if (!Has(e, "id") || !Has(e, "start") || !Has(c, "id") || !Has(c, "symbol") ||
        !Has(c, "module") || !Has(c, "stackDepth")) {
      return;
    }
    // Samples of running threads only, where the export says (threadState,
    // ENUM_SAMPLING_THREAD_STATE): a sample of a thread that waits says
    // where it waits, not what the host computed.
    std::string running;
    if (Has(e, "threadState")) {
      for (const auto& [id, name] : Enum(db_, "ENUM_SAMPLING_THREAD_STATE")) {
        if (name == "Running") running = fmt::format(" WHERE E.threadState = {}", id);
      }
    }
    std::unordered_map<int64_t, uint32_t> text_of;  // StringIds id -> interned text
    const auto text = [&](sqlite3_stmt* s, int col) {
      auto [it, added] = text_of.emplace(IntOr(s, col, -1), 0);
      if (added) it->second = model_.Intern(strings_(s, col));
      return it->second;
    };
    db_.Query(
        "SELECT E.start, C.symbol, C.module FROM COMPOSITE_EVENTS E JOIN "
        "SAMPLING_CALLCHAINS C ON C.id = E.id AND C.stackDepth = 0" +
            running,
        [&](sqlite3_stmt* s) {
          if (IsNull(s, 0)) return;
          const int64_t ns = sqlite3_column_int64(s, 0);
          if (ns < -kMaxTimeNs || ns > kMaxTimeNs) return;
          model_.cpu_samples.push_back({ns, text(s, 1), text(s, 2)});
        });
    std::sort(model_.cpu_samples.begin(), model_.cpu_samples.end(),
              [](const auto& a, const auto& b) { return a.ns < b.ns; });
  }

  // The OS runtime calls (OSRT_API) of the thread that made the most CUDA
  // runtime calls; optional, as `nsys profile -t cuda` writes none.
  void OsCalls() {
    if (!db_.HasTable("OSRT_API") || !db_.HasTable("CUPTI_ACTIVITY_KIND_RUNTIME")) return;
    const auto o = db_.Columns("OSRT_API");
    if (!Has(o, "start") || !Has(o, "end") || !Has(o, "globalTid") || !Has(o, "nameId") ||
        !Has(db_.Columns("CUPTI_ACTIVITY_KIND_RUNTIME"), "globalTid")) {
      return;
    }
    std::unordered_map<int64_t, uint32_t> name_of;  // nameId -> interned name
    db_.Query(
        "SELECT start, end, nameId FROM OSRT_API WHERE globalTid = (SELECT globalTid FROM "
        "CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY globalTid ORDER BY count(*) DESC, globalTid LIMIT 1)",
        [&](sqlite3_stmt* s) {
          EventRow row;
          if (!Span(s, 0, 1, row)) return;
          auto [it, added] = name_of.emplace(IntOr(s, 2, -1), 0);
          if (added) it->second = model_.Intern(strings_(s, 2));
          model_.launcher_os_calls.push_back(
              {row.start_ns, row.start_ns + row.duration_ns, it->second});
        });
  }

  void Nvtx() {
    const auto c = Table("NVTX_EVENTS", {"start", "end", "eventType"});
    if (c.empty()) return;
    const auto types = Enum(db_, "ENUM_NSYS_EVENT_TYPE");
    const auto type_id = [&](std::string_view name, int64_t fallback) {
      for (const auto& [id, n] : types) {
        if (n == name) return id;
      }
      return fallback;
    };
    // The documented ids where the database has no enum table.
    const int64_t push_pop = type_id("NvtxPushPopRange", 59),
                  start_end = type_id("NvtxStartEndRange", 60),
                  khr = type_id("KhrDebugPushPopRange", 62), mark = type_id("NvtxMark", 34);
    db_.Query("SELECT start, end, eventType, " + Column(c, "text") + ", " + Column(c, "textId") +
                  ", " + Column(c, "globalTid") + " FROM NVTX_EVENTS",
              [&](sqlite3_stmt* s) {
                const int64_t type = IntOr(s, 2, -1);
                if (type == mark) {
                  ++model_.instant_events;
                  return;
                }
                if (type != push_pop && type != start_end && type != khr) return;
                EventRow row;
                if (!Span(s, 0, 1, row)) return;
                const std::string_view text = IsNull(s, 3) ? strings_(s, 4) : Text(s, 3);
                const std::string_view op = FrameworkOperator(text);
                row.cls = IsIterationMarker(text)  ? EventClass::kStep
                          : IsDataLoaderSpan(text) ? EventClass::kDataLoading
                          : !op.empty()            ? EventClass::kHostOp
                                                   : EventClass::kAnnotation;
                row.name = model_.Intern(op.empty() ? text : op);
                row.category = model_.Intern(row.cls == EventClass::kHostOp ? "cpu_op" : "nvtx");
                row.track = Thread(IntOr(s, 5, 0));
                model_.Append(row);
              });
  }

  const SqliteDb& db_;
  TraceModel& model_;
  SqliteStrings strings_;
  std::unordered_map<int64_t, std::string> thread_names_;
  std::unordered_map<int64_t, size_t> process_index_;
  std::string missing_;
  int64_t skipped_ = 0;
};

}  // namespace

bool SniffNsys(Source& source) {
  if (source.Peek(16) != std::string_view("SQLite format 3\0", 16)) return false;
  if (source.container() != Container::kPlain || source.name() == "standard input") return false;
  try {
    const SqliteDb db(source.name());
    bool named = false;
    if (db.HasTable("META_DATA_EXPORT")) {
      db.Query("SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_PRODUCT_NAME'",
               [&](sqlite3_stmt* s) {
                 named = Text(s, 0).find("Nsight Systems") != std::string_view::npos;
               });
    }
    return named || db.HasTable("CUPTI_ACTIVITY_KIND_KERNEL") ||
           db.HasTable("CUPTI_ACTIVITY_KIND_RUNTIME") || db.HasTable("NVTX_EVENTS");
  } catch (const Error&) {
    return false;  // another reader (or the error naming the formats) speaks for it
  }
}

void ImportNsys(Source& source, TraceModel& model) {
  const SqliteDb db = SqliteDb::Of(source);
  Reader(db, model).Run();
}

Importer NsysImporter() {
  return Importer{
      "nsys-sqlite",
      "Nsight Systems' SQLite export (nsys export --type sqlite)",
      {"*.sqlite"},
      SniffNsys,
      [](Source& source, TraceModel& model) { ImportNsys(source, model); },
  };
}

}  // namespace opscope::analyze
