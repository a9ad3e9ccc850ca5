#include "report/diff_tables.h"

#include <fmt/format.h>

#include <algorithm>

namespace opscope::report {

std::vector<ResultTable> DiffTables(const std::string& before, const std::string& after,
                                    const analyze::TraceDiff& d, int top) {
  ResultTable summary;
  summary.section = "summary";
  summary.title = fmt::format("{} -> {}", before, after);
  summary.columns = {{"metric", "Metric"},
                     {"before", "Before", 3},
                     {"after", "After", 3},
                     {"change", "Change", 3},
                     {"change_pct", "Change %", 1}};
  summary.AddRow({d.basis + " (ms)", d.before_ns / 1e6, d.after_ns / 1e6,
                  (d.after_ns - d.before_ns) / 1e6, d.change_pct});
  summary.AddRow({std::string("steps"), static_cast<double>(d.before_steps),
                  static_cast<double>(d.after_steps),
                  static_cast<double>(d.after_steps - d.before_steps), Value{}});
  ResultTable ops;
  ops.section = "operators";
  ops.title = "Operators by change in total time";
  ops.columns = {{"operator", "Operator"},       {"category", "Category"},
                 {"change", "Change"},           {"before_count", "Calls before"},
                 {"after_count", "Calls after"}, {"before_us", "Before us", 3},
                 {"after_us", "After us", 3},    {"delta_us", "Delta us", 3},
                 {"delta_pct", "Delta %", 1}};
  const size_t shown = top == 0 ? d.operators.size()
                                : std::min<size_t>(d.operators.size(), static_cast<size_t>(top));
  for (size_t i = 0; i < shown; ++i) {
    const auto& o = d.operators[i];
    const bool both = o.change != "added" && o.change != "removed";
    ops.AddRow({o.name, std::string(analyze::Name(o.cls)), o.change, o.before_count, o.after_count,
                o.before_ns / 1e3, o.after_ns / 1e3, (o.after_ns - o.before_ns) / 1e3,
                both ? Value{o.change_pct} : Value{}});
  }
  if (shown < d.operators.size())
    ops.notes.push_back(fmt::format("{} more operators", d.operators.size() - shown));
  return {summary, ops};
}

}  // namespace opscope::report
