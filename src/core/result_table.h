// The one shape every command's results take: a table of typed values with
// its columns, title and notes. Every layer that contributes results builds
// these (an analysis pass its tables, a command its rows); report/ renders
// them (terminal, CSV, JSON, HTML: report/result_table.h).
#ifndef OPSCOPE_CORE_RESULT_TABLE_H_
#define OPSCOPE_CORE_RESULT_TABLE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "opscope/opscope.h"

namespace opscope::core {

// An absent value renders as "n/a" in tables and CSV and as null in JSON.
using Value = std::variant<std::monostate, int64_t, double, std::string>;

// A column's values carry the unit its key names ("self_us", "size_bytes",
// "peak_mib": unit in the key). JSON and CSV write base units, the unit in the
// key (report's MachineKey: "self_us" 1.5 is "self_ns" 1500); tables for people
// (terminal, HTML) humanise time and byte columns (report's TableView).
struct Column {
  std::string key;       // snake_case JSON key
  std::string header;    // table and CSV header
  int precision = 2;     // decimals for doubles in table and CSV
  bool terminal = true;  // false: in JSON and CSV only, to keep terminal tables narrow
  bool json = true;      // false: a humanised copy of another column, terminal and HTML only
};

struct ResultTable {
  std::string section;  // snake_case name of the table
  std::string title;    // printed above the terminal table
  std::vector<Column> columns;
  std::vector<std::vector<Value>> rows;
  std::vector<std::string> notes;  // printed under the terminal table

  // Throws Error(kInternal) when the row's width is not the columns'.
  void AddRow(std::vector<Value> row) {
    if (row.size() != columns.size()) {
      throw Error(ErrorCode::kInternal, "table '" + section + "': row has " +
                                            std::to_string(row.size()) + " values for " +
                                            std::to_string(columns.size()) + " columns");
    }
    rows.push_back(std::move(row));
  }
};

}  // namespace opscope::core

#endif  // OPSCOPE_CORE_RESULT_TABLE_H_
