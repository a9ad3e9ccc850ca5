// Read-only SQLite databases (sqlite_db.h).
#include "analyze/importers/sqlite_db.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/cancel.h"
#include "core/output.h"

namespace opscope::analyze {

SqliteDb::SqliteDb(std::string path) : path_(std::move(path)) {
  std::string uri = "file:";
  for (const char c : path_) {
    if (c == '%' || c == '?' || c == '#') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      uri += c;
    }
  }
  // A write-ahead log beside the file (a writer still open, or stopped before
  // a checkpoint) may hold changes the file does not: read through it, as
  // SQLite does for any reader; an immutable open would ignore it and read
  // stale tables without a word. Without one, nothing can change under us.
  std::error_code wal_ec;
  const bool wal = std::filesystem::file_size(path_ + "-wal", wal_ec) > 0 && !wal_ec;
  uri += wal ? "?mode=ro" : "?immutable=1";
  const auto fail = [&](const std::string& why) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(
        ErrorCode::kInvalidInput,
        path_ + ": SQLite cannot " +
            (wal ? "read it through its write-ahead log (" + path_ + "-wal): " : "open it: ") +
            why);
  };
  if (sqlite3_open_v2(uri.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) !=
      SQLITE_OK) {
    fail(db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory");
  }
  if (wal && sqlite3_exec(db_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) !=
                 SQLITE_OK) {
    fail(sqlite3_errmsg(db_));
  }
  core::ProtectInput(path_);  // a database is an input: no output replaces it
  std::error_code ec;
  const auto size = std::filesystem::file_size(path_, ec);
  if (!ec) budget_ = std::max<uint64_t>(kMinSteps, static_cast<uint64_t>(size) * kStepsPerByte);
  sqlite3_progress_handler(db_, kStepsPerCall, &SqliteDb::Progress, this);
}

SqliteDb SqliteDb::Of(Source& source) {
  if (source.container() != Container::kPlain || source.name() == "standard input") {
    throw Error(ErrorCode::kUnsupported,
                source.name() +
                    ": an SQLite database is read from a plain file (SQLite needs to seek): "
                    "decompress it first");
  }
  return SqliteDb(source.name());
}

int SqliteDb::Progress(void* self) {
  auto* db = static_cast<SqliteDb*>(self);
  db->steps_ += kStepsPerCall;
  // Non-zero interrupts the query: past its work bound, or cancelled (Query throws
  // core::Cancelled).
  return db->steps_ > db->budget_ || core::IsCancelled() ? 1 : 0;
}

}  // namespace opscope::analyze
