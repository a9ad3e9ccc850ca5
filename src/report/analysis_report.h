// The files of `opscope analyze`: summary.csv (one row per operator and class),
// tables/*.csv (one per table), analysis.json (every section, schema-versioned)
// and analysis.html (one self-contained page: its script inline, no network
// request, SVG charts, a canvas timeline drawn from a bounded summary, every
// table sortable, every string from a trace escaped).
#ifndef OPSCOPE_REPORT_ANALYSIS_REPORT_H_
#define OPSCOPE_REPORT_ANALYSIS_REPORT_H_

#include <filesystem>
#include <string>
#include <vector>

#include "analyze/analyze_files.h"
#include "report/result_table.h"

namespace opscope::report {

using analyze::AnalyzedTrace;

std::string SummaryCsv(const std::vector<AnalyzedTrace>& traces);
// The page: per trace its findings, timeline and charts, then every table.
std::string AnalysisHtml(const std::vector<AnalyzedTrace>& traces,
                         const std::vector<ResultTable>& tables);

// The traces' findings and charts as a fragment for another page (a Jupyter
// cell's output): its style scoped to it, no script, so no timeline.
std::string AnalysisFragmentHtml(const std::vector<AnalyzedTrace>& traces);

// Where a report goes by default: into the current folder, named after the
// first input ("data/t.json.gz" -> "t.opscope-analysis", "runs/rank0_ascend_pt/"
// -> "rank0_ascend_pt.opscope-analysis", "-" -> "stdin.opscope-analysis"). Never
// into the data's folder, which may be read-only, shared, or /dev/fd.
std::filesystem::path DefaultAnalysisDir(const std::filesystem::path& first_input);

// Writes summary.csv, analysis.json, analysis.html and tables/<section>.csv
// into `dir` (created if needed), each atomically. analysis.html shows
// `shown` (the top rows of each table, with a note for the rest); analysis.json
// and tables/*.csv hold `every_row` (AnalysisTables with top 0).
void WriteAnalysisReport(const std::filesystem::path& dir, const std::vector<AnalyzedTrace>& traces,
                         const std::vector<ResultTable>& shown,
                         const std::vector<ResultTable>& every_row);

}  // namespace opscope::report

#endif  // OPSCOPE_REPORT_ANALYSIS_REPORT_H_
