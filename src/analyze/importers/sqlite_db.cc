// Read-only SQLite databases (sqlite_db.h).
#include "analyze/importers/sqlite_db.h"

#include <fmt/format.h>

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
}

}  // namespace opscope::analyze
