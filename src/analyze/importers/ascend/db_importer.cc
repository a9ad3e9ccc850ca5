#include "analyze/importers/ascend/db_importer.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analyze/importers/ascend/kernel_details_importer.h"
#include "analyze/importers/ascend/memory.h"
#include "analyze/importers/ascend/op_type.h"
#include "analyze/importers/sqlite_db.h"
#include "analyze/names.h"
#include "core/output.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

void RequireTables(const SqliteDb& db, std::initializer_list<const char*> tables) {
  for (const char* t : tables) {
    if (!db.HasTable(t)) {
      throw Error(ErrorCode::kInvalidInput,
                  db.path() + ": no " + t +
                      " table: not an Ascend profiler database (msprof's STRING_IDS and TASK)");
    }
  }
}

// Times must be plausible nanoseconds (a corrupt row is named, not imported).
void CheckSpan(const SqliteDb& db, const char* table, int64_t start, int64_t end) {
  if (start < 0 || end < start || end > 4000000000000000000) {
    throw Error(ErrorCode::kInvalidInput,
                fmt::format("{}: {}: a row runs from {} to {} ns: not a time span", db.path(),
                            table, start, end));
  }
}

// A time column's value: an integer, or text of one (torch_npu writes
// PYTORCH_API's times as text). NULL, other text ('NULL'), a real or a blob is
// no time (SQLite would read them as 0: issues 39 and 51): an error naming the
// table, the row and the column.
int64_t TimeValue(const SqliteDb& db, const char* table, sqlite3_stmt* s, int col,
                  const char* what) {
  const auto fail = [&](const std::string& held) {
    return Error(ErrorCode::kInvalidInput,
                 fmt::format("{}: {}: a row's {} is {}: not a time (row {}, column {})", db.path(),
                             table, what, held, db.row(),
                             sqlite3_column_name(s, col) ? sqlite3_column_name(s, col) : "?"));
  };
  switch (sqlite3_column_type(s, col)) {
    case SQLITE_INTEGER: return sqlite3_column_int64(s, col);
    case SQLITE_NULL: throw fail("NULL");
    case SQLITE_TEXT: {
      const std::string_view text = Text(s, col);
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) return v;
      throw fail(fmt::format("the text '{}'", core::EscapeForTerminal(text.substr(0, 40))));
    }
    case SQLITE_FLOAT: throw fail(fmt::format("the real {}", sqlite3_column_double(s, col)));
    default: throw fail("a blob");
  }
}

// A row's start and end (columns `start_col`, `end_col`), checked: each a
// time (TimeValue), and a span that does not run backwards.
std::pair<int64_t, int64_t> Span(const SqliteDb& db, const char* table, sqlite3_stmt* s,
                                 int start_col, int end_col) {
  const int64_t start = TimeValue(db, table, s, start_col, "start"),
                end = TimeValue(db, table, s, end_col, "end");
  CheckSpan(db, table, start, end);
  return {start, end};
}

// The block count column: blockNum in current schemas, blockDim in old ones.
std::string BlocksColumn(const std::vector<std::string>& columns) {
  return Has(columns, "blockNum") ? "c.blockNum" : Has(columns, "blockDim") ? "c.blockDim" : "-1";
}

// The compute tasks, in globalTaskId order: the columns `rest` after
// (globalTaskId, start, end, stream, task id, connection, name, opType, taskType, blocks).
std::string ComputeTasksSql(const SqliteDb& db) {
  const std::vector<std::string> columns = db.Columns("COMPUTE_TASK_INFO");
  std::string sql =
      "SELECT t.globalTaskId, t.startNs, t.endNs, t.streamId, t.taskId, t.connectionId, "
      "c.name, c.opType, c.taskType, " +
      BlocksColumn(columns);
  // 10..15: shapes, data types and formats (string ids), NULL where absent.
  for (const char* column : {"inputShapes", "inputDataTypes", "outputDataTypes", "inputFormats",
                             "outputFormats", "outputShapes"}) {
    sql += Has(columns, column) ? std::string(", c.") + column : std::string(", NULL");
  }
  // 16: the task's graph model (4294967295: a single operator), NULL where absent.
  sql += Has(db.Columns("TASK"), "modelId") ? ", t.modelId" : ", NULL";
  return sql + " FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId";
}

}  // namespace

bool IsAscendTraceDbName(const std::string& name) {
  if (!name.ends_with(".db")) return false;
  return name.rfind("ascend_pytorch_profiler", 0) == 0 ||
         name.rfind("ascend_mindspore_profiler", 0) == 0 || name.rfind("msprof_", 0) == 0;
}

bool SniffAscendDb(Source& source) {
  const std::string_view head = source.Peek(16);
  if (head != std::string_view("SQLite format 3\0", 16)) return false;
  // Other producers write SQLite too (Nsight Systems' export): a database is
  // Ascend's when it holds the tables every Ascend export has (STRING_IDS,
  // TASK: docs/formats/ascend.md 4). One that cannot be inspected here (not a
  // plain file, or not a readable database) is claimed, so that the import
  // says what is wrong with it.
  if (source.container() != Container::kPlain || source.name() == "standard input") return true;
  try {
    const SqliteDb db(source.name());
    return db.HasTable("STRING_IDS") || db.HasTable("TASK");
  } catch (const Error&) {
    return true;
  }
}

Importer AscendDbImporter() {
  return Importer{
      "ascend-db",
      "torch_npu's ascend_pytorch_profiler_{rank}.db, MindSpore's and msprof's SQLite exports",
      {"ascend_pytorch_profiler*.db", "ascend_mindspore_profiler*.db", "msprof_*.db"},
      SniffAscendDb,
      [](Source& source, TraceModel& model) { ImportAscendDb(source, model); },
  };
}

void ImportAscendDb(Source& source, TraceModel& model) {
  const std::string path = source.name();
  const SqliteDb db = SqliteDb::Of(source);
  RequireTables(db, {"STRING_IDS", "TASK"});
  const SqliteStrings str(db, "STRING_IDS");  // ids absent (4294967295, NULL) read ""
  // Device work, as kernel_details.csv lists it.
  if (db.HasTable("COMPUTE_TASK_INFO")) {
    db.Query(ComputeTasksSql(db) + " ORDER BY t.startNs", [&](sqlite3_stmt* s) {
      const auto [start, end] = Span(db, "TASK", s, 1, 2);
      const std::string_view name = str(s, 6), type = str(s, 7), core = str(s, 8);
      const std::string stream = std::to_string(sqlite3_column_int64(s, 3));
      const std::string shapes = AscendInOut(AscendShapes(str(s, 10)), AscendShapes(str(s, 15)));
      const std::string dtype = AscendInOut(str(s, 11), str(s, 12));
      const std::string layout = AscendInOut(str(s, 13), str(s, 14));
      model.Append(EventRow{
          .start_ns = start,
          .duration_ns = end - start,
          .name = model.Intern(name),
          .category = model.Intern(type == "N/A" ? "" : type),
          .track = model.TrackFor("Ascend Hardware", stream),
          .cls = AscendTaskClass(name, type, core),
          .correlation = IsNull(s, 5) ? -1 : sqlite3_column_int64(s, 5),
          .kind = model.Intern(core == "N/A" ? "" : core),
          .shapes = shapes.empty() ? 0 : model.Intern(shapes),
          .dtype = dtype.empty() ? 0 : model.Intern(dtype),
          .layout = layout.empty() ? 0 : model.Intern(layout),
      });
    });
  }
  if (db.HasTable("COMMUNICATION_OP")) {
    // connectionId is absent from some exports: NULL then (no launch link).
    const bool linked = Has(db.Columns("COMMUNICATION_OP"), "connectionId");
    db.Query(std::string("SELECT opName, startNs, endNs, NULL, ") +
                 (linked ? "connectionId" : "NULL") + " FROM COMMUNICATION_OP",
             [&](sqlite3_stmt* s) {
               const auto [start, end] = Span(db, "COMMUNICATION_OP", s, 1, 2);
               const std::string_view name = str(s, 0);
               model.Append(EventRow{
                   .start_ns = start,
                   .duration_ns = end - start,
                   .name = model.Intern(name),
                   .track = model.TrackFor("Ascend Hardware", "communication"),
                   .cls = EventClass::kCommunication,
                   .correlation = IsNull(s, 4) ? -1 : sqlite3_column_int64(s, 4),
                   .kind = model.Intern("COMMUNICATION"),
               });
             });
  }
  // The collectives' tasks on their planes, as trace_view.json's HCCL rows
  // show them (docs/formats/ascend.md 4.5: COMMUNICATION_TASK_INFO joined to
  // TASK), each with the two ranks it is between: the peer a Notify Wait
  // waits for. Ranks out of range (4294967295: none) are not recorded.
  if (db.HasTable("COMMUNICATION_TASK_INFO") &&
      Has(db.Columns("COMMUNICATION_TASK_INFO"), "srcRank")) {
    const std::vector<std::string> columns = db.Columns("COMMUNICATION_TASK_INFO");
    const auto column = [&](const char* c) {
      return Has(columns, c) ? std::string("i.") + c : std::string("NULL");
    };
    db.Query(
        "SELECT t.startNs, t.endNs, " + column("taskType") + ", " + column("planeId") +
            ", i.srcRank, i.dstRank, " + column("size") + ", " + column("transportType") + ", " +
            column("linkType") +
            " FROM COMMUNICATION_TASK_INFO i JOIN TASK t ON t.globalTaskId = i.globalTaskId"
            " ORDER BY t.startNs",
        [&](sqlite3_stmt* s) {
          const auto [start, end] = Span(db, "TASK", s, 0, 1);
          const auto rank = [&](int col) -> int32_t {
            if (sqlite3_column_type(s, col) != SQLITE_INTEGER) return -1;
            const int64_t r = sqlite3_column_int64(s, col);
            return r >= 0 && r < INT32_MAX ? static_cast<int32_t>(r) : -1;
          };
          const std::string_view type = str(s, 2);
          const std::string plane =
              IsNull(s, 3) ? "Plane" : fmt::format("Plane {}", sqlite3_column_int64(s, 3));
          TraceModel::CollectiveArgs args;
          args.src_rank = rank(4), args.dst_rank = rank(5);
          // The enums' numbers (docs/formats/ascend.md): transport 0-2, link 0-6.
          const auto enumerated = [&](int col, int64_t last) -> int8_t {
            if (sqlite3_column_type(s, col) != SQLITE_INTEGER) return -1;
            const int64_t v = sqlite3_column_int64(s, col);
            return v >= 0 && v <= last ? static_cast<int8_t>(v) : -1;
          };
          args.transport = enumerated(7, 2), args.link = enumerated(8, 6);
          if (args.src_rank >= 0 || args.dst_rank >= 0 || args.transport >= 0 || args.link >= 0) {
            args.event = static_cast<uint32_t>(model.size());
            model.collective_args.push_back(args);
          }
          const int64_t bytes = IsNull(s, 6) ? -1 : sqlite3_column_int64(s, 6);
          model.Append(EventRow{
              .start_ns = start,
              .duration_ns = end - start,
              .name = model.Intern(type.empty() ? "HCCL task" : type),
              .track = model.TrackFor("HCCL", plane),
              .cls = EventClass::kCommunication,
              .bytes = bytes > 0 ? bytes : -1,
              .kind = model.Intern("COMMUNICATION"),
          });
        });
  }
  // Host work: framework operators and CANN API calls, on their threads
  // (globalTid = pid << 32 | tid).
  const auto thread = [&](sqlite3_stmt* s, int col, const char* process) {
    const uint64_t gtid = static_cast<uint64_t>(sqlite3_column_int64(s, col));
    const std::string pid = std::to_string(gtid >> 32);
    model.process_names.emplace(pid, process);
    return model.TrackFor(pid, std::to_string(gtid & 0xFFFFFFFFu));
  };
  // "op" (docs/formats/ascend.md 4.3); read from ENUM_API_TYPE when present.
  int64_t op_type = 50001;
  if (db.HasTable("ENUM_API_TYPE")) {
    db.Query("SELECT id FROM ENUM_API_TYPE WHERE name = 'op'",
             [&](sqlite3_stmt* s) { op_type = sqlite3_column_int64(s, 0); });
  }
  std::map<uint32_t, int64_t> ops_per_track;
  bool framework_steps = false;  // torch_npu records ProfilerStep#N as an operator too
  if (db.HasTable("PYTORCH_API")) {
    db.Query(
        fmt::format("SELECT CAST(startNs AS INTEGER), CAST(endNs AS INTEGER), globalTid, "
                    "name FROM PYTORCH_API {} ORDER BY 1",
                    // Without a type column every row is an operator.
                    Has(db.Columns("PYTORCH_API"), "type") ? fmt::format("WHERE type = {}", op_type)
                                                           : std::string()),
        [&](sqlite3_stmt* s) {
          const auto [start, end] = Span(db, "PYTORCH_API", s, 0, 1);
          const uint32_t track = thread(s, 2, "Python");
          ++ops_per_track[track];
          const std::string_view name = str(s, 3);
          const bool step = name.rfind("ProfilerStep#", 0) == 0;
          framework_steps |= step;
          model.Append(EventRow{.start_ns = start,
                                .duration_ns = end - start,
                                .name = model.Intern(name),
                                .category = model.Intern("cpu_op"),
                                .track = track,
                                .cls = step                     ? EventClass::kStep
                                       : IsDataLoaderSpan(name) ? EventClass::kDataLoading
                                                                : EventClass::kHostOp});
        });
  }
  if (db.HasTable("CANN_API")) {
    db.Query(
        std::string("SELECT startNs, endNs, globalTid, name, ") +
            (Has(db.Columns("CANN_API"), "connectionId") ? "connectionId" : "NULL") +
            " FROM CANN_API ORDER BY 1",
        [&](sqlite3_stmt* s) {
          const auto [start, end] = Span(db, "CANN_API", s, 0, 1);
          model.Append(EventRow{.start_ns = start,
                                .duration_ns = end - start,
                                .name = model.Intern(str(s, 3)),
                                .category = model.Intern("CANN"),
                                .track = thread(s, 2, "CANN"),
                                .cls = EventClass::kRuntime,
                                .correlation = IsNull(s, 4) ? -1 : sqlite3_column_int64(s, 4)});
        });
  }
  if (!framework_steps && db.HasTable("STEP_TIME")) {
    // On the thread that runs the most operators (the training loop's), else its own.
    uint32_t main_track = UINT32_MAX;
    int64_t most = 0;
    for (const auto& [track, n] : ops_per_track) {
      if (n > most) most = n, main_track = track;
    }
    if (main_track == UINT32_MAX) main_track = model.TrackFor("steps", "0");
    db.Query("SELECT id, startNs, endNs FROM STEP_TIME ORDER BY startNs", [&](sqlite3_stmt* s) {
      const auto [start, end] = Span(db, "STEP_TIME", s, 1, 2);
      model.Append(EventRow{
          .start_ns = start,
          .duration_ns = end - start,
          .name = model.Intern("ProfilerStep#" + std::to_string(sqlite3_column_int64(s, 0))),
          .category = model.Intern("cpu_op"),
          .track = main_track,
          .cls = EventClass::kStep});
    });
  }
  if (db.HasTable("NPU_INFO")) {
    db.Query("SELECT name FROM NPU_INFO LIMIT 1",
             [&](sqlite3_stmt* s) { model.device_name = std::string(Text(s, 0)); });
  }
  if (db.HasTable("RANK_DEVICE_MAP")) {
    db.Query("SELECT rankId, deviceId FROM RANK_DEVICE_MAP LIMIT 1", [&](sqlite3_stmt* s) {
      model.metadata["rank"] = std::to_string(sqlite3_column_int64(s, 0));
      model.metadata["device"] = std::to_string(sqlite3_column_int64(s, 1));
    });
  }
  // Python's garbage collections (GC_RECORD: startNs, endNs, globalTid; with
  // experimental_config's gc_detect_threshold), as the text export's "GC"
  // events on the "Python GC" process.
  if (db.HasTable("GC_RECORD")) {
    const uint32_t gc_track = model.TrackFor("Python GC", "Python GC");
    db.Query("SELECT startNs, endNs FROM GC_RECORD ORDER BY startNs", [&](sqlite3_stmt* s) {
      const auto [start, end] = Span(db, "GC_RECORD", s, 0, 1);
      model.Append(EventRow{.start_ns = start,
                            .duration_ns = end - start,
                            .name = model.Intern("GC"),
                            .category = model.Intern("GC"),
                            .track = gc_track,
                            .cls = EventClass::kPython});
    });
  }
  // The AI Core's clock samples (AICORE_FREQ: deviceId, timestampNs, freq in
  // MHz), of the rank's device where RANK_DEVICE_MAP names it.
  // A multi-die part records each die's clock (the table's newer dieId
  // column, docs/formats/ascend.md) and no task says which die ran it: one
  // die's lower clock is not the task's, so the clock is read only where one
  // die is recorded, and the report says why it is left out otherwise.
  if (db.HasTable("AICORE_FREQ")) {
    const auto device = model.metadata.find("device");
    const std::string where =
        device != model.metadata.end() ? " WHERE deviceId = " + device->second : "";
    int64_t dies = 1;
    if (Has(db.Columns("AICORE_FREQ"), "dieId")) {
      db.Query("SELECT count(DISTINCT dieId) FROM AICORE_FREQ" + where,
               [&](sqlite3_stmt* s) { dies = sqlite3_column_int64(s, 0); });
    }
    if (dies > 1) {
      model.import_notes.push_back(fmt::format(
          "AICORE_FREQ records the AI Core clocks of {} dies and no task says which die ran it: "
          "the clock check (ai_core_clock) is left out",
          dies));
    } else {
      db.Query("SELECT timestampNs, freq FROM AICORE_FREQ" + where + " ORDER BY timestampNs",
               [&](sqlite3_stmt* s) {
                 const double mhz = sqlite3_column_double(s, 1);
                 if (mhz > 0 && mhz < 1e6) {
                   model.reported.core_clock.push_back({sqlite3_column_int64(s, 0), mhz});
                 }
               });
    }
  }
  // Memory: the operators' blocks and the allocator's totals over time.
  if (db.HasTable("OP_MEMORY") || db.HasTable("MEMORY_RECORD") || db.HasTable("NPU_OP_MEM")) {
    model.reported.memory = ReadAscendDbMemory(db, path);
  }
  model.NameProcesses();
  model.format = "ascend-db";
  CompleteAscendModel(model);
  model.source = path;
}

PipeTable ReadDbPipeline(const std::string& path) {
  const SqliteDb db(path);
  RequireTables(db, {"STRING_IDS", "TASK"});
  if (!db.HasTable("TASK_PMU_INFO") || !db.HasTable("COMPUTE_TASK_INFO")) {
    return AiCorePipelineBuilder(path, {}, "").Finish();
  }
  const SqliteStrings str(db, "STRING_IDS");  // ids absent (4294967295, NULL) read ""
  // The metric names present (no unit suffix in the database: aic_total_time).
  std::vector<std::string> metrics;
  std::unordered_map<int64_t, size_t> metric_of;  // STRING_IDS id -> index in metrics
  db.Query("SELECT DISTINCT name FROM TASK_PMU_INFO", [&](sqlite3_stmt* s) {
    metric_of.emplace(sqlite3_column_int64(s, 0), metrics.size());
    metrics.emplace_back(str(s, 0));
  });
  AiCorePipelineBuilder builder(path, metrics, "");
  // Both sides in globalTaskId order, merged in one pass.
  struct Pmu {
    int64_t task;
    size_t metric;
    std::string value;
  };
  std::vector<Pmu> pending;
  std::vector<std::string> values(metrics.size());
  std::unordered_map<std::string_view, size_t> position;  // metric name -> index
  for (size_t i = 0; i < metrics.size(); ++i) position.emplace(metrics[i], i);
  // The PMU rows are read into memory in task order (they are the largest
  // table; one string each is bounded by the file's size).
  db.Query("SELECT globalTaskId, name, value FROM TASK_PMU_INFO ORDER BY globalTaskId",
           [&](sqlite3_stmt* s) {
             const auto it = metric_of.find(sqlite3_column_int64(s, 1));
             if (it == metric_of.end()) return;
             pending.push_back({sqlite3_column_int64(s, 0), it->second,
                                IsNull(s, 2) ? std::string() : std::string(Text(s, 2))});
           });
  size_t next = 0;
  db.Query(ComputeTasksSql(db) + " ORDER BY t.globalTaskId", [&](sqlite3_stmt* s) {
    const int64_t id = sqlite3_column_int64(s, 0);
    const auto [start, end] = Span(db, "TASK", s, 1, 2);
    std::fill(values.begin(), values.end(), std::string());
    while (next < pending.size() && pending[next].task < id) ++next;
    for (; next < pending.size() && pending[next].task == id; ++next) {
      values[pending[next].metric] = pending[next].value;
    }
    const std::string stream = std::to_string(sqlite3_column_int64(s, 3));
    const std::string task_id = std::to_string(sqlite3_column_int64(s, 4));
    PipelineTask task;
    task.name = str(s, 6);
    task.type = str(s, 7);
    task.core = str(s, 8);
    task.stream = stream;
    task.task = task_id;
    task.dur_ns = end - start;
    task.start_ns = start;
    task.in_graph =
        !IsNull(s, 16) && InGraphModel(static_cast<double>(sqlite3_column_int64(s, 16)));
    const std::string shapes = AscendInOut(AscendShapes(str(s, 10)), AscendShapes(str(s, 15)));
    const std::string dtype = AscendInOut(str(s, 11), str(s, 12));
    task.shapes = shapes, task.dtype = dtype;
    if (!IsNull(s, 9) && sqlite3_column_int64(s, 9) >= 0) {
      task.blocks = static_cast<double>(sqlite3_column_int64(s, 9));
    }
    builder.Add(
        task,
        [&](std::string_view column) -> std::string_view {
          const auto found = position.find(column);
          return found == position.end() ? std::string_view() : values[found->second];
        },
        [&] { return fmt::format("{}: TASK_PMU_INFO, globalTaskId {}", path, id); });
  });
  return builder.Finish();
}

AscendAnalysisDb ReadAnalysisDb(const std::string& path) {
  const SqliteDb db(path);
  AscendAnalysisDb out;
  const auto ns_of = [&](sqlite3_stmt* s, int col, double scale, const char* what) -> int64_t {
    if (IsNull(s, col)) return -1;
    const double v = sqlite3_column_double(s, col);
    if (!std::isfinite(v) || v * scale > 4e18 || v < -1e-6) {
      throw Error(ErrorCode::kInvalidInput,
                  fmt::format("{}: {}: {} is not a duration", path, what, v));
    }
    return std::llround(std::max(0.0, v) * scale);
  };
  if (db.HasTable("StepTraceTime")) {
    const std::vector<std::string> columns = db.Columns("StepTraceTime");
    const std::pair<const char*, int64_t ReportedStep::*> fields[] = {
        {"computing", &ReportedStep::computing_ns},
        {"communication", &ReportedStep::communication_ns},
        {"communication_not_overlapped", &ReportedStep::comm_not_overlapped_ns},
        {"overlapped", &ReportedStep::overlapped_ns},
        {"free", &ReportedStep::free_ns},
        {"stage", &ReportedStep::stage_ns},
        {"bubble", &ReportedStep::bubble_ns},
        {"preparing", &ReportedStep::preparing_ns}};
    std::string sql =
        std::string("SELECT step, ") + (Has(columns, "deviceId") ? "deviceId" : "NULL");
    for (const auto& [name, member] : fields) {
      sql += std::string(", ") + (Has(columns, name) ? name : "NULL");
    }
    db.Query(sql + " FROM StepTraceTime", [&](sqlite3_stmt* s) {
      ReportedStep row;
      row.step = std::string(Text(s, 0));
      if (!IsNull(s, 1)) row.device = std::string(Text(s, 1));
      int col = 2;
      for (const auto& [name, member] : fields) {
        row.*member = ns_of(s, col++, 1e3, "StepTraceTime");  // microseconds
      }
      out.steps.push_back(std::move(row));
    });
  }
  std::map<std::tuple<std::string, std::string, std::string, std::string>, size_t> index;
  if (db.HasTable("CommAnalyzerTime")) {
    db.Query(
        "SELECT hccl_op_name, group_name, start_timestamp, elapse_time, transit_time, "
        "wait_time, synchronization_time, idle_time, step, type FROM CommAnalyzerTime",
        [&](sqlite3_stmt* s) {
          ReportedCollective c;
          c.op = std::string(Text(s, 0));
          c.group = std::string(Text(s, 1));
          c.start_ns = IsNull(s, 2) ? -1 : std::llround(sqlite3_column_double(s, 2) * 1e3);
          c.elapse_ns = ns_of(s, 3, 1e6, "CommAnalyzerTime");
          c.transit_ns = ns_of(s, 4, 1e6, "CommAnalyzerTime");
          c.wait_ns = ns_of(s, 5, 1e6, "CommAnalyzerTime");
          c.sync_ns = ns_of(s, 6, 1e6, "CommAnalyzerTime");  // -1: NULL, absent
          c.idle_ns = ns_of(s, 7, 1e6, "CommAnalyzerTime");
          c.step = std::string(Text(s, 8));
          c.kind = std::string(Text(s, 9));
          if (IsTotalEntry(c.op)) return;
          index[{c.step, c.kind, c.op, c.group}] = out.collectives.size();
          out.collectives.push_back(std::move(c));
        });
  }
  if (db.HasTable("CommAnalyzerBandwidth")) {
    // One row per packet-size bucket, the transport's totals repeated on each:
    // the first row of each (operation, transport) is taken.
    std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>, bool>
        seen;
    db.Query(
        "SELECT hccl_op_name, group_name, step, type, transport_type, transit_size, "
        "transit_time FROM CommAnalyzerBandwidth",
        [&](sqlite3_stmt* s) {
          const std::string op(Text(s, 0)), group(Text(s, 1)), step(Text(s, 2)), kind(Text(s, 3)),
              transport(Text(s, 4));
          if (transport == "SDMA") return;
          if (!seen.emplace(std::tuple{op, group, step, kind, transport}, true).second) return;
          const auto it = index.find({step, kind, op, group});
          if (it == index.end()) return;
          ReportedTransfer t{transport, ns_of(s, 5, 1e6, "CommAnalyzerBandwidth"),
                             ns_of(s, 6, 1e6, "CommAnalyzerBandwidth")};
          if (t.bytes > 0 || t.time_ns > 0) out.collectives[it->second].transfers.push_back(t);
        });
  }
  if (db.HasTable("CommAnalyzerMatrix")) {
    db.Query(
        "SELECT hccl_op_name, group_name, src_rank, dst_rank, transport_type, transit_size, "
        "transit_time, step, type FROM CommAnalyzerMatrix",
        [&](sqlite3_stmt* s) {
          const std::string key(Text(s, 0));
          const size_t dash = key.rfind('-');
          if (dash == std::string::npos || key.substr(dash + 1) != "total") return;
          ReportedLink l;
          l.op_type = key.substr(0, dash);
          l.group = std::string(Text(s, 1));
          const auto rank = [&](int col) {
            const std::string_view t = Text(s, col);
            const std::optional<int> r = ParseRank(t);
            if (!r) {
              throw Error(ErrorCode::kInvalidInput,
                          fmt::format("{}: CommAnalyzerMatrix: rank '{}' is not a number", path,
                                      core::EscapeForTerminal(std::string(t))));
            }
            return *r;
          };
          l.src = rank(2);
          l.dst = rank(3);
          l.transport = std::string(Text(s, 4));
          l.bytes = ns_of(s, 5, 1e6, "CommAnalyzerMatrix");
          l.time_ns = ns_of(s, 6, 1e6, "CommAnalyzerMatrix");
          l.step = std::string(Text(s, 7));
          l.kind = std::string(Text(s, 8));
          out.links.push_back(std::move(l));
        });
  }
  return out;
}

}  // namespace opscope::analyze
