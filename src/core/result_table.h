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

// What a column's numbers measure. A column declares it; nothing reads a unit
// from a key's spelling.
enum class Unit : uint8_t {
  kNone,
  kTime,            // base: nanoseconds
  kBytes,           // base: bytes
  kFlop,            // base: floating-point operations
  kFlopPerSecond,   // base: FLOP/s
  kBytesPerSecond,  // base: bytes/s
  kPercent,         // a share, 0-100
  kCount,           // a number of things (calls, events, blocks)
};

// A column of a table. Its key is what JSON, CSV and Python call it and names
// the base unit ("self_ns", "peak_bytes", "bytes_per_s"); JSON, CSV and Python
// hold every number in that base unit. A table's own values may be in a
// multiple of it (scale: 1e3 for microseconds of a kTime column, 1e9 for GB/s):
// those writers multiply by scale. Tables for people (terminal, HTML) show
// time and byte columns in the unit that suits each value (report's TableView).
struct Column {
  std::string key;       // snake_case JSON key, in the base unit
  std::string header;    // table header (CSV files use the key)
  int precision = 2;     // decimals for doubles in tables
  bool terminal = true;  // false: in JSON and CSV only, to keep terminal tables narrow
  bool json = true;      // false: a humanised copy of another column, terminal and HTML only
  Unit unit = Unit::kNone;
  double scale = 1;  // base units per value in this table (1e3: values in µs)
};

struct ResultTable {
  std::string section;  // snake_case name of the table
  std::string title;    // printed above the terminal table
  std::vector<Column> columns;
  std::vector<std::vector<Value>> rows;
  std::vector<std::string> notes;  // printed under the terminal table
  // A table of an analysis that found nothing to list (no transfers in a CPU
  // trace): it keeps its columns in the files (JSON's `tables`, tables/*.csv,
  // the Python DataFrames), and the terminal and HTML leave it out when empty.
  bool hidden_when_empty = false;

  // Left out of the terminal and HTML: an empty table of that kind.
  bool Hidden() const { return hidden_when_empty && rows.empty(); }

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
