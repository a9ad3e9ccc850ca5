#include "analyze/importers/rocpd/rocpd_importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyze/importers/rocprof/rocprof_records.h"
#include "analyze/importers/sqlite_db.h"
#include "analyze/importers/timestamps.h"
#include "analyze/names.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr std::string_view kStrings = "rocpd_string";

// The table sets: the suffix after "rocpd_string" of each set's string table
// ("" for an unsuffixed one). A suffix is a uuid: letters, digits and '_'
// only; any other is not a set this reader names in SQL.
std::vector<std::string> Sets(const SqliteDb& db) {
  std::vector<std::string> sets;
  db.Query("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd_string%'",
           [&](sqlite3_stmt* s) {
             const std::string_view name = Text(s, 0);
             if (!name.starts_with(kStrings)) return;
             const std::string_view suffix = name.substr(kStrings.size());
             if (std::all_of(suffix.begin(), suffix.end(), [](char c) {
                   return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                 })) {
               sets.emplace_back(suffix);
             }
           });
  std::sort(sets.begin(), sets.end());
  return sets;
}

class Reader {
 public:
  Reader(const SqliteDb& db, TraceModel& model) : db_(db), model_(model) {}

  void Run() {
    const std::vector<std::string> sets = Sets(db_);
    if (sets.empty()) {
      throw Error(ErrorCode::kInvalidInput,
                  db_.path() + ": no rocpd_string table: not a rocpd database (rocprofv3)");
    }
    for (size_t i = 0; i < sets.size(); ++i) ReadSet(sets[i], i);
    if (skipped_ > 0) {
      model_.records_left_out += static_cast<uint64_t>(skipped_);
      model_.import_notes.push_back(
          fmt::format("{} records without a valid start and end were left out", skipped_));
    }
    if (!missing_.empty()) {
      std::string list;
      for (const std::string& t : missing_) list += (list.empty() ? "" : ", ") + t;
      model_.import_notes.push_back(
          "tables not in this database: " + list +
          " (what they hold was not recorded: rocprofv3 --kernel-trace, --memory-copy-trace, "
          "--hip-trace, --marker-trace)");
    }
    model_.NameProcesses();
  }

 private:
  bool Has(const std::string& table) {
    if (db_.HasTable(table)) return true;
    if (std::find(missing_.begin(), missing_.end(), table) == missing_.end()) {
      missing_.push_back(table);
    }
    return false;
  }

  // A row's span from two columns; false (counted) when it is not one.
  bool Span(sqlite3_stmt* s, int col, EventRow& row) {
    if (sqlite3_column_type(s, col) != SQLITE_INTEGER ||
        sqlite3_column_type(s, col + 1) != SQLITE_INTEGER) {
      return ++skipped_, false;
    }
    const int64_t start = sqlite3_column_int64(s, col), end = sqlite3_column_int64(s, col + 1);
    if (start < 0 || end < start || end > kMaxTimeNs) return ++skipped_, false;
    row.start_ns = start, row.duration_ns = end - start;
    return true;
  }

  // A correlation id, unique across sets (the ids restart in each); -1 for
  // none (0: the record has no id to link by).
  int64_t Correlation(sqlite3_stmt* s, int col) const {
    if (sqlite3_column_type(s, col) != SQLITE_INTEGER) return -1;
    const int64_t id = sqlite3_column_int64(s, col);
    return id <= 0 ? -1 : static_cast<int64_t>(set_) << 40 | (id & 0xFFFFFFFFFF);
  }

  std::string_view String(sqlite3_stmt* s, int col) const {
    if (sqlite3_column_type(s, col) != SQLITE_INTEGER) return {};
    const auto it = strings_.find(sqlite3_column_int64(s, col));
    return it == strings_.end() ? std::string_view() : std::string_view(it->second);
  }

  void ReadSet(const std::string& set, size_t index) {
    set_ = index;
    const auto table = [&](std::string_view name) { return std::string(name) + set; };
    const std::string event = table("rocpd_event");
    const bool events = Has(event);
    // The column that links a call to its device work: the internal
    // correlation id (stack_id), never the external one (correlation_id: 0
    // for every record unless the program set external ids), which only a
    // table without stack_id can offer.
    link_ = events && opscope::analyze::Has(db_.Columns(event), "stack_id") ? "stack_id"
                                                                            : "correlation_id";
    // A column of a record's event (its link, its category), or NULL without
    // the table.
    const auto event_column = [&](const char* alias, const char* column) {
      return events ? fmt::format("(SELECT E.{} FROM {} E WHERE E.id = {}.event_id)", column, event,
                                  alias)
                    : std::string("NULL");
    };
    strings_.clear();
    db_.Query("SELECT id, string FROM " + table(kStrings), [&](sqlite3_stmt* s) {
      strings_.emplace(sqlite3_column_int64(s, 0), std::string(Text(s, 1)));
    });
    // Agents: GPUs as devices, and which agents are CPUs.
    gpus_.clear(), cpus_.clear();
    if (Has(table("rocpd_info_agent"))) {
      const std::vector<std::string> columns = db_.Columns(table("rocpd_info_agent"));
      const std::string index_col = opscope::analyze::Has(columns, "type_index") ? "type_index"
                                    : opscope::analyze::Has(columns, "logical_index")
                                        ? "logical_index"
                                        : "id";
      db_.Query("SELECT id, type, " + index_col + ", product_name, name FROM " +
                    table("rocpd_info_agent"),
                [&](sqlite3_stmt* s) {
                  const int64_t id = sqlite3_column_int64(s, 0);
                  if (Text(s, 1) == "CPU") {
                    cpus_.emplace(id, true);
                    return;
                  }
                  if (Text(s, 1) != "GPU") return;
                  std::string product(Text(s, 3));
                  if (product.empty()) product = Text(s, 4);
                  const std::string pid = fmt::format("GPU {}", sqlite3_column_int64(s, 2));
                  gpus_[id] = pid;
                  model_.process_names[pid] =
                      product.empty() ? pid : fmt::format("{} ({})", pid, product);
                  if (model_.device_name.empty()) model_.device_name = product;
                });
    }
    // Host threads: a region's tid is the thread row's id.
    threads_.clear();
    if (Has(table("rocpd_info_thread")) && Has(table("rocpd_info_process"))) {
      db_.Query("SELECT T.id, P.pid, T.tid FROM " + table("rocpd_info_thread") + " T LEFT JOIN " +
                    table("rocpd_info_process") + " P ON P.id = T.pid",
                [&](sqlite3_stmt* s) {
                  const std::string pid = std::to_string(sqlite3_column_int64(s, 1));
                  model_.process_names.emplace(pid, "process " + pid);
                  threads_[sqlite3_column_int64(s, 0)] =
                      model_.TrackFor(pid, std::to_string(sqlite3_column_int64(s, 2)));
                });
    }
    Dispatches(table, event_column);
    Copies(table, event_column);
    Regions(table, event_column);
  }

  uint32_t Gpu(sqlite3_stmt* s, int col, std::string_view lane) {
    const int64_t agent = sqlite3_column_int64(s, col);
    const auto it = gpus_.find(agent);
    return model_.TrackFor(it != gpus_.end() ? it->second : fmt::format("agent {}", agent), lane);
  }

  template <typename Table, typename EventColumn>
  void Dispatches(const Table& table, const EventColumn& event_column) {
    if (!Has(table("rocpd_kernel_dispatch"))) return;
    std::unordered_map<int64_t, uint32_t> symbols;  // kernel_id -> interned name
    if (Has(table("rocpd_info_kernel_symbol"))) {
      db_.Query("SELECT id, display_name, kernel_name FROM " + table("rocpd_info_kernel_symbol"),
                [&](sqlite3_stmt* s) {
                  std::string_view name = Text(s, 1);
                  if (name.empty()) name = Text(s, 2);
                  symbols[sqlite3_column_int64(s, 0)] = model_.Intern(KernelSymbolName(name));
                });
    }
    const uint32_t unknown = model_.Intern("(unknown kernel)");
    const uint32_t category = model_.Intern("kernel");
    std::unordered_map<uint32_t, EventClass> cls_of;
    db_.Query("SELECT K.start, K.\"end\", K.agent_id, K.queue_id, K.kernel_id, " +
                  event_column("K", link_) + " FROM " + table("rocpd_kernel_dispatch") + " K",
              [&](sqlite3_stmt* s) {
                EventRow row;
                if (!Span(s, 0, row)) return;
                const auto sym = symbols.find(sqlite3_column_int64(s, 4));
                row.name = sym != symbols.end() ? sym->second : unknown;
                auto [it, added] = cls_of.emplace(row.name, EventClass::kKernel);
                if (added && IsCommunication(model_.String(row.name))) {
                  it->second = EventClass::kCommunication;
                }
                row.cls = it->second;
                row.category = category;
                row.track = Gpu(s, 2, fmt::format("queue {}", sqlite3_column_int64(s, 3)));
                row.correlation = Correlation(s, 5);
                model_.Append(row);
              });
  }

  template <typename Table, typename EventColumn>
  void Copies(const Table& table, const EventColumn& event_column) {
    if (!Has(table("rocpd_memory_copy"))) return;
    const uint32_t category = model_.Intern("gpu_memcpy");
    db_.Query("SELECT M.start, M.\"end\", M.name_id, M.src_agent_id, M.dst_agent_id, M.size, " +
                  event_column("M", link_) + " FROM " + table("rocpd_memory_copy") + " M",
              [&](sqlite3_stmt* s) {
                EventRow row;
                if (!Span(s, 0, row)) return;
                const std::string_view op = String(s, 2);
                const int64_t src = sqlite3_column_int64(s, 3), dst = sqlite3_column_int64(s, 4);
                const bool src_cpu = cpus_.count(src) > 0, dst_cpu = cpus_.count(dst) > 0;
                // A copy without a name: the operation its two agents' types spell.
                std::string by_agents;
                if (op.empty()) {
                  by_agents = std::string("MEMORY_COPY_") + (src_cpu ? "HOST" : "DEVICE") + "_TO_" +
                              (dst_cpu ? "HOST" : "DEVICE");
                }
                CopyInfo copy;
                copy.direction =
                    MemoryCopyDirection(op.empty() ? std::string_view(by_agents) : op, src == dst);
                // On the GPU end's copy lane (the source's for device to host).
                const int col = copy.direction == CopyDirection::kDeviceToHost ? 3 : 4;
                row.name = model_.Intern(fmt::format("Memcpy {}", Name(copy.direction)));
                row.category = category;
                row.cls = EventClass::kMemcpy;
                row.bytes =
                    sqlite3_column_type(s, 5) == SQLITE_INTEGER && sqlite3_column_int64(s, 5) >= 0
                        ? sqlite3_column_int64(s, 5)
                        : -1;
                row.copy = copy.Packed();
                row.track = Gpu(s, col, "copies");
                row.correlation = Correlation(s, 6);
                model_.Append(row);
              });
  }

  template <typename Table, typename EventColumn>
  void Regions(const Table& table, const EventColumn& event_column) {
    if (!Has(table("rocpd_region"))) return;
    const uint32_t runtime = model_.Intern("cuda_runtime"), rccl = model_.Intern("rccl_api"),
                   marker = model_.Intern("user_annotation");
    db_.Query("SELECT R.start, R.\"end\", R.name_id, R.tid, " + event_column("R", "category_id") +
                  ", " + event_column("R", link_) + " FROM " + table("rocpd_region") + " R",
              [&](sqlite3_stmt* s) {
                EventRow row;
                if (!Span(s, 0, row)) return;
                const std::string_view name = String(s, 2), kind = String(s, 4);
                const auto thread = threads_.find(sqlite3_column_int64(s, 3));
                row.track =
                    thread != threads_.end()
                        ? thread->second
                        : model_.TrackFor("process", std::to_string(sqlite3_column_int64(s, 3)));
                row.name = model_.Intern(name.empty() ? kind : name);
                if (kind.find("MARKER") != std::string_view::npos) {
                  if (row.duration_ns == 0) {
                    ++model_.instant_events;  // a mark
                    return;
                  }
                  row.category = marker;
                  row.cls = IsIterationMarker(name) ? EventClass::kStep : EventClass::kAnnotation;
                } else {
                  row.category = kind.find("RCCL") != std::string_view::npos ? rccl : runtime;
                  row.cls = EventClass::kRuntime;
                  row.correlation = Correlation(s, 5);
                }
                model_.Append(row);
              });
  }

  const SqliteDb& db_;
  TraceModel& model_;
  size_t set_ = 0;
  const char* link_ = "stack_id";  // the event column linking a call to its work
  std::unordered_map<int64_t, std::string> strings_;
  std::unordered_map<int64_t, std::string> gpus_;  // agent id -> track pid
  std::unordered_map<int64_t, bool> cpus_;
  std::unordered_map<int64_t, uint32_t> threads_;  // thread row id -> track
  std::vector<std::string> missing_;
  int64_t skipped_ = 0;
};

}  // namespace

bool SniffRocpd(Source& source) {
  if (source.Peek(16) != std::string_view("SQLite format 3\0", 16)) return false;
  if (source.container() != Container::kPlain || source.name() == "standard input") return false;
  try {
    const SqliteDb db(source.name());
    bool found = false;
    db.Query(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND (name LIKE 'rocpd_kernel_dispatch%' "
        "OR name LIKE 'rocpd_region%') LIMIT 1",
        [&](sqlite3_stmt*) { found = true; });
    return found && !Sets(db).empty();
  } catch (const Error&) {
    return false;  // another reader (or the error naming the formats) speaks for it
  }
}

void ImportRocpd(Source& source, TraceModel& model) {
  const SqliteDb db = SqliteDb::Of(source);
  model.format = "rocpd";
  model.source = source.name();
  Reader(db, model).Run();
}

Importer RocpdImporter() {
  return Importer{
      "rocpd",
      "rocprofv3's rocpd SQLite database (its default output, *_results.db)",
      {"*_results.db"},
      SniffRocpd,
      [](Source& source, TraceModel& model) { ImportRocpd(source, model); },
  };
}

}  // namespace opscope::analyze
