// The report of `opscope run`: every step's tables in one results.json (with
// its schema in docs/results.schema.json), one CSV per table (tables/), one
// summary.csv of every value, and one self-contained index.html (its script
// inline, no network requests, SVG charts, sortable tables each linked to its
// CSV, every string escaped).
#ifndef OPSCOPE_REPORT_RUN_REPORT_H_
#define OPSCOPE_REPORT_RUN_REPORT_H_

#include <string>
#include <vector>

#include "report/result_table.h"

namespace opscope::report {

struct RunStep {
  std::string command;  // "bench matmul --sizes 1024,2048"
  std::string title;    // "Matrix multiplication"
  std::string status;   // "ok" or "failed"
  std::string error;    // why it failed
  double seconds = 0;
  std::vector<ResultTable> tables;
};

std::string RunResultsJson(const std::vector<RunStep>& steps);
// Every value of every table, one per row: step,section,row,column,value.
std::string RunSummaryCsv(const std::vector<RunStep>& steps);
// The tables/*.csv files of the run (SplitCsvFiles over every step's tables).
std::vector<CsvFile> RunCsvFiles(const std::vector<RunStep>& steps);
// `links`: (relative path, label) pairs shown at the top (traces, the analysis page).
std::string RunIndexHtml(const std::vector<RunStep>& steps, const std::string& device,
                         const std::vector<std::pair<std::string, std::string>>& links);

}  // namespace opscope::report

#endif  // OPSCOPE_REPORT_RUN_REPORT_H_
