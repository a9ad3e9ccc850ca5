// The tables of `opscope diff`: the time basis before and after, and the
// operators by change in total time.
#ifndef OPSCOPE_REPORT_DIFF_TABLES_H_
#define OPSCOPE_REPORT_DIFF_TABLES_H_

#include <string>
#include <vector>

#include "analyze/diff.h"
#include "report/result_table.h"

namespace opscope::report {

// `top`: operators listed (0: all).
std::vector<ResultTable> DiffTables(const std::string& before, const std::string& after,
                                    const analyze::TraceDiff& d, int top);

}  // namespace opscope::report

#endif  // OPSCOPE_REPORT_DIFF_TABLES_H_
