// The tables of `opscope diff`: the time basis before and after, and the
// operators by change in total time.
#ifndef OPSCOPE_REPORT_DIFF_TABLES_H_
#define OPSCOPE_REPORT_DIFF_TABLES_H_

#include <optional>
#include <string>
#include <vector>

#include "analyze/diff.h"
#include "report/result_table.h"

namespace opscope::report {

// `top`: operators listed (0: all).
std::vector<ResultTable> DiffTables(const std::string& before, const std::string& after,
                                    const analyze::TraceDiff& d, int top);

// What `opscope diff BEFORE AFTER` computes: two traces, or two folders of
// rank traces paired in order (a "ranks" table then, one row per rank), with
// the gate `--fail-if-slower` when `fail_if_slower` is set.
struct DiffOutcome {
  std::vector<ResultTable> tables;
  std::vector<analyze::TraceDiff> diffs;  // one per pair of traces, in rank order
  bool failed = false;                    // the gate failed
  std::string failure;                    // why, for the first pair that failed
};
// Throws Error(kInvalidArgument) when folders hold different numbers of
// ranks, and what ImportTrace throws.
DiffOutcome DiffFiles(const std::string& before, const std::string& after, int top,
                      std::optional<double> fail_if_slower);

}  // namespace opscope::report

#endif  // OPSCOPE_REPORT_DIFF_TABLES_H_
