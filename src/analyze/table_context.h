// What the tables an analysis pass or a side-file reader contributes are
// built for (Pass::tables, SideFileReader::tables).
#ifndef OPSCOPE_ANALYZE_TABLE_CONTEXT_H_
#define OPSCOPE_ANALYZE_TABLE_CONTEXT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/result_table.h"

namespace opscope::analyze {

// What a table is built for: the trace's path (each table's first column),
// its format and complete events (the operator tables carry them), its rank
// (-1 none), and how many rows a ranked table shows (0: all).
struct TableContext {
  std::string_view path;
  int top = 20;
  std::string_view format = {};
  int64_t events = 0;
  int rank = -1;

  // How many of `rows` a ranked table shows (all with top 0); a note in
  // `table` says how many more there are.
  size_t Shown(size_t rows, core::ResultTable& table) const {
    const size_t shown = top <= 0 ? rows : std::min<size_t>(rows, static_cast<size_t>(top));
    if (shown < rows) {
      table.notes.push_back(std::to_string(rows - shown) + " more (--top 0 lists all)");
    }
    return shown;
  }
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_TABLE_CONTEXT_H_
