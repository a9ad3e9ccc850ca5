// `opscope convert --to sqlite`: the analysed inputs written as one SQLite
// database that sqlite3, pandas or DuckDB query: the model (inputs, tracks,
// events, strings, launch flows) and every table of `opscope analyze`, with
// views that join them (docs/commands/convert.md lists each table and view).
#ifndef OPSCOPE_REPORT_SQLITE_EXPORT_H_
#define OPSCOPE_REPORT_SQLITE_EXPORT_H_

#include <cstdint>
#include <filesystem>
#include <vector>

#include "analyze/analyze_files.h"
#include "report/result_table.h"

namespace opscope::report {

struct SqliteExportCounts {
  uint64_t events = 0, flows = 0, analysis_tables = 0, analysis_rows = 0;
};

// Writes `set` (analysed with AnalyzeOptions::keep_models) and its analysis
// tables to `path`: the file appears only when complete (core/output.h), and
// never replaces one of the command's inputs. Throws Error(kIo) naming the
// path when it cannot be written.
SqliteExportCounts WriteSqlite(const analyze::AnalyzedSet& set,
                               const std::vector<ResultTable>& tables,
                               const std::filesystem::path& path);

}  // namespace opscope::report

#endif  // OPSCOPE_REPORT_SQLITE_EXPORT_H_
