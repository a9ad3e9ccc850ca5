// The tables and files of scale-out analysis (`opscope merge`, `opscope
// analyze --scale-out` and `--mpi`): findings, ranks, steps, collectives and
// operators as ResultTables; merge.json (every table, every row), merge.html
// (the findings, a rank x step heat map of step times, the tables) and
// tables/*.csv, each written atomically.
#ifndef OPSCOPE_REPORT_SCALEOUT_REPORT_H_
#define OPSCOPE_REPORT_SCALEOUT_REPORT_H_

#include <filesystem>
#include <vector>

#include "analyze/scaleout/merge.h"
#include "report/result_table.h"

namespace opscope::report {

struct ScaleOutTables {
  std::vector<ResultTable> terminal;  // what is printed: the longest tables cut to `top` rows
  std::vector<ResultTable> all;       // what the files hold: every row, and the step grid
};

// top: rows of the collective and operator tables printed (0: all).
ScaleOutTables MakeScaleOutTables(const analyze::ScaleOutResult& result, int top);

std::string ScaleOutHtml(const analyze::ScaleOutResult& result, const ScaleOutTables& tables);

void WriteScaleOutReport(const std::filesystem::path& dir, const analyze::ScaleOutResult& result,
                         const ScaleOutTables& tables);

}  // namespace opscope::report

#endif  // OPSCOPE_REPORT_SCALEOUT_REPORT_H_
