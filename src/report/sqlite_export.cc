#include "report/sqlite_export.h"

#include <sqlite3.h>

#include <cmath>
#include <map>
#include <string>

#include "analyze/convert/launch_flows.h"
#include "core/output.h"
#include "opscope/opscope.h"

namespace opscope::report {

namespace {

using analyze::TraceModel;

// The database's tables and views, documented in docs/commands/convert.md.
constexpr const char* kSchema = R"sql(
CREATE TABLE inputs(input_id INTEGER PRIMARY KEY, path TEXT, rank INTEGER, format TEXT,
                    device TEXT, events INTEGER, tracks INTEGER);
CREATE TABLE import_notes(input_id INTEGER, note TEXT);
CREATE TABLE strings(string_id INTEGER PRIMARY KEY, text TEXT);
CREATE TABLE tracks(track_id INTEGER PRIMARY KEY, input_id INTEGER, pid TEXT, tid TEXT,
                    process TEXT, thread TEXT);
CREATE TABLE events(event_id INTEGER PRIMARY KEY, input_id INTEGER, track_id INTEGER,
                    start_ns INTEGER, dur_ns INTEGER, name_id INTEGER, category_id INTEGER,
                    class TEXT, correlation INTEGER, external_id INTEGER, flops INTEGER,
                    bytes INTEGER, task_type_id INTEGER, input_dims_id INTEGER,
                    input_type_id INTEGER, concrete_inputs_id INTEGER, shapes_id INTEGER,
                    dtype_id INTEGER, layout_id INTEGER, module_id INTEGER, op_type_id INTEGER,
                    compute_dtype_id INTEGER, copy_direction TEXT, host_memory TEXT);
CREATE TABLE flows(input_id INTEGER, from_event INTEGER, to_event INTEGER,
                   from_track_id INTEGER, from_ns INTEGER, to_track_id INTEGER, to_ns INTEGER);
)sql";

constexpr const char* kViews = R"sql(
CREATE INDEX events_by_track ON events(track_id, start_ns);
CREATE VIEW slices AS
  SELECT e.event_id, e.input_id, i.rank, i.path, e.track_id, t.process, t.thread,
         e.start_ns, e.dur_ns, e.start_ns + e.dur_ns AS end_ns, n.text AS name,
         c.text AS category, e.class, e.correlation, e.external_id, e.flops, e.bytes,
         k.text AS task_type, d.text AS input_dims, o.text AS op_type, e.copy_direction,
         e.host_memory
  FROM events e JOIN inputs i ON i.input_id = e.input_id
       JOIN tracks t ON t.track_id = e.track_id
       LEFT JOIN strings n ON n.string_id = e.name_id
       LEFT JOIN strings c ON c.string_id = e.category_id
       LEFT JOIN strings k ON k.string_id = e.task_type_id
       LEFT JOIN strings d ON d.string_id = e.input_dims_id
       LEFT JOIN strings o ON o.string_id = e.op_type_id;
CREATE VIEW launches AS
  SELECT f.input_id, l.event_id AS launch_event, l.name AS launch, l.thread AS launch_thread,
         d.event_id AS task_event, d.name AS task, d.class AS task_class, d.thread AS queue,
         l.start_ns AS launch_ns, d.start_ns AS task_ns, d.start_ns - l.start_ns AS delay_ns
  FROM flows f JOIN slices l ON l.event_id = f.from_event
       JOIN slices d ON d.event_id = f.to_event;
)sql";

class Database {
 public:
  explicit Database(const std::filesystem::path& file, std::string shown)
      : shown_(std::move(shown)) {
    if (sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK) {
      Fail("cannot open it");
    }
  }
  ~Database() {
    for (auto& [sql, statement] : statements_) sqlite3_finalize(statement);
    sqlite3_close(db_);
  }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void Exec(const std::string& sql) {
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) Fail("");
  }
  // A prepared statement, made once per text; reset for its next row.
  sqlite3_stmt* Statement(const std::string& sql) {
    sqlite3_stmt*& s = statements_[sql];
    if (s == nullptr && sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      Fail("");
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return s;
  }
  void Step(sqlite3_stmt* s) {
    if (sqlite3_step(s) != SQLITE_DONE) Fail("");
  }
  [[noreturn]] void Fail(const std::string& what) {
    throw Error(ErrorCode::kIo, "cannot write '" + shown_ + "': SQLite" +
                                    (what.empty() ? "" : " " + what) + ": " +
                                    (db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory"));
  }

 private:
  sqlite3* db_ = nullptr;
  std::string shown_;
  std::map<std::string, sqlite3_stmt*> statements_;
};

void BindText(sqlite3_stmt* s, int at, std::string_view text) {
  sqlite3_bind_text(s, at, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}
// -1 (unknown) as NULL.
void BindKnown(sqlite3_stmt* s, int at, int64_t value) {
  if (value >= 0) sqlite3_bind_int64(s, at, value);
}

// A table's value as analysis.json holds it: in its column's base unit, an
// integer where it is one.
void BindValue(sqlite3_stmt* s, int at, const Value& value, double scale) {
  if (const auto* text = std::get_if<std::string>(&value)) return BindText(s, at, *text);
  double number = 0;
  if (const auto* i = std::get_if<int64_t>(&value)) {
    if (scale == 1) return (void)sqlite3_bind_int64(s, at, *i);
    number = static_cast<double>(*i);
  } else if (const auto* d = std::get_if<double>(&value)) {
    number = *d;
  } else {
    return;  // absent: NULL
  }
  const double x = MachineNumber(number, scale);
  if (!std::isfinite(x)) return;  // NULL, as JSON's null
  if (scale != 1 && std::fabs(x) < 9e15 && x == std::floor(x)) {
    sqlite3_bind_int64(s, at, static_cast<int64_t>(x));
  } else {
    sqlite3_bind_double(s, at, x);
  }
}

std::string Quoted(std::string_view name) {
  std::string out = "\"";
  for (const char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + '"';
}

struct Offsets {
  int64_t strings = 0, tracks = 0, events = 0;
};

void WriteModel(Database& db, int64_t input, const analyze::AnalyzedTrace& t,
                const TraceModel& model, Offsets& at, SqliteExportCounts& counts) {
  sqlite3_stmt* s = db.Statement("INSERT INTO inputs VALUES(?,?,?,?,?,?,?)");
  sqlite3_bind_int64(s, 1, input);
  BindText(s, 2, t.path);
  sqlite3_bind_int64(s, 3, t.rank);
  BindText(s, 4, model.format);
  if (!model.device_name.empty()) BindText(s, 5, model.device_name);
  sqlite3_bind_int64(s, 6, static_cast<int64_t>(model.size()));
  sqlite3_bind_int64(s, 7, static_cast<int64_t>(model.tracks.size()));
  db.Step(s);
  for (const std::string& note : model.import_notes) {
    s = db.Statement("INSERT INTO import_notes VALUES(?,?)");
    sqlite3_bind_int64(s, 1, input);
    BindText(s, 2, note);
    db.Step(s);
  }
  // Strings 1.. (0 is the empty string every model holds: NULL).
  for (size_t id = 1; id < model.string_count(); ++id) {
    s = db.Statement("INSERT INTO strings VALUES(?,?)");
    sqlite3_bind_int64(s, 1, at.strings + static_cast<int64_t>(id));
    BindText(s, 2, model.String(static_cast<uint32_t>(id)));
    db.Step(s);
  }
  for (size_t k = 0; k < model.tracks.size(); ++k) {
    const analyze::Track& track = model.tracks[k];
    s = db.Statement("INSERT INTO tracks VALUES(?,?,?,?,?,?)");
    sqlite3_bind_int64(s, 1, at.tracks + static_cast<int64_t>(k));
    sqlite3_bind_int64(s, 2, input);
    BindText(s, 3, track.pid);
    BindText(s, 4, track.tid);
    BindText(s, 5, track.process);
    BindText(s, 6, track.thread);
    db.Step(s);
  }
  const auto string = [&](int column, uint32_t id) {
    if (id != 0) sqlite3_bind_int64(s, column, at.strings + id);
  };
  for (size_t e = 0; e < model.size(); ++e) {
    s = db.Statement("INSERT INTO events VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    sqlite3_bind_int64(s, 1, at.events + static_cast<int64_t>(e));
    sqlite3_bind_int64(s, 2, input);
    sqlite3_bind_int64(s, 3, at.tracks + model.track[e]);
    sqlite3_bind_int64(s, 4, model.start_ns[e]);
    sqlite3_bind_int64(s, 5, model.duration_ns[e]);
    string(6, model.name[e]);
    string(7, model.category[e]);
    sqlite3_bind_text(s, 8, analyze::Name(model.cls[e]), -1, SQLITE_STATIC);
    BindKnown(s, 9, model.correlation[e]);
    BindKnown(s, 10, model.external_id[e]);
    BindKnown(s, 11, model.flops[e]);
    BindKnown(s, 12, model.bytes[e]);
    string(13, model.kind[e]);
    string(14, model.input_dims[e]);
    string(15, model.input_type[e]);
    string(16, model.concrete_inputs[e]);
    string(17, model.shapes[e]);
    string(18, model.dtype[e]);
    string(19, model.layout[e]);
    string(20, model.module[e]);
    string(21, model.op_type[e]);
    string(22, model.compute_dtype[e]);
    if (model.cls[e] == analyze::EventClass::kMemcpy && model.copy[e] != 0) {
      const analyze::CopyInfo copy = model.Copy(e);
      sqlite3_bind_text(s, 23, analyze::Name(copy.direction), -1, SQLITE_STATIC);
      if (copy.host_memory != analyze::HostMemory::kUnknown) {
        sqlite3_bind_text(s, 24, analyze::Name(copy.host_memory), -1, SQLITE_STATIC);
      }
    }
    db.Step(s);
  }
  analyze::ForEachLaunchArrow(model, [&](const analyze::LaunchArrow& a) {
    s = db.Statement("INSERT INTO flows VALUES(?,?,?,?,?,?,?)");
    sqlite3_bind_int64(s, 1, input);
    if (a.from_event >= 0) sqlite3_bind_int64(s, 2, at.events + a.from_event);
    if (a.to_event >= 0) sqlite3_bind_int64(s, 3, at.events + a.to_event);
    sqlite3_bind_int64(s, 4, at.tracks + a.from_track);
    sqlite3_bind_int64(s, 5, a.from_ns);
    sqlite3_bind_int64(s, 6, at.tracks + a.to_track);
    sqlite3_bind_int64(s, 7, a.to_ns);
    db.Step(s);
    ++counts.flows;
  });
  counts.events += model.size();
  at.strings += static_cast<int64_t>(model.string_count());
  at.tracks += static_cast<int64_t>(model.tracks.size());
  at.events += static_cast<int64_t>(model.size());
}

// Each analysis table as analysis_<section>, its columns those of
// analysis.json (keys and base units); a section whose tables differ in
// columns gets one database table per shape (analysis_<section>_2, ...).
void WriteTables(Database& db, const std::vector<ResultTable>& tables, SqliteExportCounts& counts) {
  std::map<std::string, std::vector<std::string>> made;  // name -> column keys
  for (const ResultTable& table : tables) {
    std::vector<size_t> shown;
    std::vector<std::string> keys;
    for (size_t k = 0; k < table.columns.size(); ++k) {
      if (!table.columns[k].json) continue;
      shown.push_back(k);
      keys.push_back(table.columns[k].key);
    }
    std::string name = "analysis_" + table.section;
    for (int n = 2; made.count(name) && made[name] != keys; ++n) {
      name = "analysis_" + table.section + "_" + std::to_string(n);
    }
    std::string insert = "INSERT INTO " + Quoted(name) + " VALUES(";
    for (size_t k = 0; k < keys.size(); ++k) insert += k == 0 ? "?" : ",?";
    insert += ')';
    if (!made.count(name)) {
      std::string create = "CREATE TABLE " + Quoted(name) + "(";
      for (size_t k = 0; k < keys.size(); ++k) create += (k == 0 ? "" : ",") + Quoted(keys[k]);
      db.Exec(create + ")");
      made[name] = keys;
      ++counts.analysis_tables;
    }
    for (const auto& row : table.rows) {
      sqlite3_stmt* s = db.Statement(insert);
      for (size_t k = 0; k < shown.size(); ++k) {
        BindValue(s, static_cast<int>(k) + 1, row[shown[k]], table.columns[shown[k]].scale);
      }
      db.Step(s);
      ++counts.analysis_rows;
    }
  }
}

}  // namespace

SqliteExportCounts WriteSqlite(const analyze::AnalyzedSet& set,
                               const std::vector<ResultTable>& tables,
                               const std::filesystem::path& path) {
  core::AtomicFileOutput file(path, false);
  if (file.temp_path().empty()) {
    throw Error(ErrorCode::kIo, "cannot write '" + path.string() +
                                    "': an SQLite database is written to a regular file, not "
                                    "a device or a FIFO");
  }
  SqliteExportCounts counts;
  {
    // Written into the output's temporary file, which Commit renames into
    // place; no journal beside it (a failed write leaves nothing to recover).
    Database db(file.temp_path(), path.string());
    db.Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN");
    db.Exec(kSchema);
    Offsets at;
    for (size_t i = 0; i < set.traces.size(); ++i) {
      const analyze::AnalyzedTrace& t = set.traces[i];
      if (t.model) WriteModel(db, static_cast<int64_t>(i), t, *t.model, at, counts);
    }
    WriteTables(db, tables, counts);
    db.Exec(kViews);
    db.Exec("COMMIT");
  }
  file.Commit();
  return counts;
}

}  // namespace opscope::report
