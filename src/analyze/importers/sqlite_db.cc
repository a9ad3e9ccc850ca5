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
  uri += "?immutable=1";
  if (sqlite3_open_v2(uri.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) !=
      SQLITE_OK) {
    const std::string why = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(ErrorCode::kInvalidInput, path_ + ": SQLite cannot open it: " + why);
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
