// Read-only SQLite databases, for the importers of producers that write
// SQLite (Ascend's exports, Nsight Systems' export).
#ifndef OPSCOPE_ANALYZE_IMPORTERS_SQLITE_DB_H_
#define OPSCOPE_ANALYZE_IMPORTERS_SQLITE_DB_H_

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyze/source.h"
#include "core/cancel.h"
#include "opscope/opscope.h"

namespace opscope::analyze {

// A read-only connection. immutable=1: no locks, no -wal/-shm files created,
// so a database on read-only media (or being copied) opens too.
class SqliteDb {
 public:
  // Throws Error(kInvalidInput) naming the file when SQLite cannot open it.
  explicit SqliteDb(std::string path);
  // The source's database: Error(kUnsupported) for one that is not a plain
  // file (a pipe, a gzip: SQLite needs to seek in it).
  static SqliteDb Of(Source& source);
  ~SqliteDb() { sqlite3_close(db_); }
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  const std::string& path() const { return path_; }
  // The row Query is at (1: the first), for errors that name it.
  int64_t row() const { return row_; }

  // Runs `sql`, calling `row(stmt)` for each result row.
  template <typename F>
  void Query(const std::string& sql, F&& row) const {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      const std::string why = sqlite3_errmsg(db_);
      sqlite3_finalize(stmt);
      throw Error(ErrorCode::kInvalidInput, path_ + ": SQLite: " + why);
    }
    int rc = SQLITE_ROW;
    row_ = 0;
    steps_ = 0;
    try {
      while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) ++row_, row(stmt);
    } catch (...) {
      sqlite3_finalize(stmt);
      throw;
    }
    const std::string why = rc == SQLITE_DONE ? "" : sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    if (rc == SQLITE_INTERRUPT) core::ThrowIfCancelled();
    if (rc == SQLITE_INTERRUPT && steps_ > budget_) {
      throw Error(ErrorCode::kInvalidInput,
                  path_ + ": SQLite: a query ran past its work bound (" +
                      std::to_string(budget_ / 1000000) +
                      "M steps for a database of this size): a damaged database, or one "
                      "built to make its reader run forever");
    }
    if (rc != SQLITE_DONE) throw Error(ErrorCode::kInvalidInput, path_ + ": SQLite: " + why);
  }

  // A table of that name: a view is not read (a view can join without end).
  bool HasTable(const std::string& table) const {
    bool found = false;
    Query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '" + table + "'",
          [&](sqlite3_stmt*) { found = true; });
    return found;
  }

  std::vector<std::string> Columns(const std::string& table) const {
    std::vector<std::string> columns;
    Query("PRAGMA table_info(\"" + table + "\")", [&](sqlite3_stmt* s) {
      columns.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 1)));
    });
    return columns;
  }

 private:
  // A query's work is bounded: SQLite's progress handler counts its virtual
  // machine steps (in units of kStepsPerCall) and interrupts it past
  // budget_, set by the file's size (kStepsPerByte a byte, and a floor), so
  // a scan of every row fits with room and an endless join does not.
  static constexpr int kStepsPerCall = 10000;
  static constexpr uint64_t kStepsPerByte = 2000, kMinSteps = 20000000;
  static int Progress(void* self);

  std::string path_;
  mutable int64_t row_ = 0;
  mutable uint64_t steps_ = 0;
  uint64_t budget_ = kMinSteps;
  sqlite3* db_ = nullptr;
};

inline bool Has(const std::vector<std::string>& columns, const std::string& name) {
  return std::find(columns.begin(), columns.end(), name) != columns.end();
}

inline std::string_view Text(sqlite3_stmt* s, int col) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, col));
  return p == nullptr ? std::string_view() : std::string_view(p, sqlite3_column_bytes(s, col));
}

inline bool IsNull(sqlite3_stmt* s, int col) { return sqlite3_column_type(s, col) == SQLITE_NULL; }

// A table of id -> text (Ascend's STRING_IDS, Nsight Systems' StringIds),
// read once: a column holding an id reads as its text; NULL and ids the table
// lacks read "". A missing table reads every id as "".
class SqliteStrings {
 public:
  SqliteStrings(const SqliteDb& db, const std::string& table) {
    if (!db.HasTable(table)) return;
    db.Query("SELECT id, value FROM " + table, [&](sqlite3_stmt* s) {
      values_.emplace(sqlite3_column_int64(s, 0), std::string(Text(s, 1)));
    });
  }
  std::string_view operator()(sqlite3_stmt* s, int col) const {
    if (IsNull(s, col)) return {};
    const auto it = values_.find(sqlite3_column_int64(s, col));
    return it == values_.end() ? std::string_view() : std::string_view(it->second);
  }

 private:
  std::unordered_map<int64_t, std::string> values_;
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_SQLITE_DB_H_
