// The tables of `opscope analyze` (findings, operators, busy time and gaps,
// steps, transfers, layout conversions, long tail, CPU fallback, launches,
// roofline, fusion, ranks), built once for the terminal, CSV, JSON and HTML.
#ifndef OPSCOPE_REPORT_ANALYSIS_TABLES_H_
#define OPSCOPE_REPORT_ANALYSIS_TABLES_H_

#include <vector>

#include "analyze/analyze_files.h"
#include "report/result_table.h"

namespace opscope::report {

struct AnalysisTableOptions {
  int top = 20;  // operators per trace; 0: all
};

std::vector<ResultTable> AnalysisTables(const analyze::AnalyzedSet& set,
                                        const AnalysisTableOptions& options = {});

// The tables of what producers reported (reported_tables.cc): per trace, and
// across the set's ranks.
void AddReportedTables(const analyze::AnalyzedTrace& t, const AnalysisTableOptions& options,
                       std::vector<ResultTable>& tables);
void AddReportedRankTables(const analyze::AnalyzedSet& set, const AnalysisTableOptions& options,
                           std::vector<ResultTable>& tables);

// The first `top` rows of `rows` (all with top 0), and a note in `table` for the rest.
size_t Shown(size_t rows, const AnalysisTableOptions& options, ResultTable& table);

}  // namespace opscope::report

#endif  // OPSCOPE_REPORT_ANALYSIS_TABLES_H_
