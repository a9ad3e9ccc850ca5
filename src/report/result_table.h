// The one shape every command's results take, and its renderings.
//
// A command builds ResultTables; the reporter renders them as an aligned terminal
// table, CSV, or JSON. Every JSON output is one object with `schema_version`,
// `opscope_version`, `command`, `machine` and a `results` array whose objects use
// the tables' column keys (snake_case); with several tables, each object also
// names its table in `section`.
#ifndef OPSCOPE_REPORT_RESULT_TABLE_H_
#define OPSCOPE_REPORT_RESULT_TABLE_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/result_table.h"

namespace opscope::report {

enum class Format { kTable, kJson, kCsv };

// Throws Error(kInvalidArgument) for anything but table, json or csv.
Format ParseFormat(std::string_view text);

// The table types themselves are core's (core/result_table.h), so that any
// layer can build tables (an analysis pass its own); report/ renders them.
using core::Column;
using core::ResultTable;
using core::Unit;
using core::Value;

// A number in its column's base unit: `v * scale`, rounded to a thousandth of
// the base unit when scaled (the noise of the unit change left out), as JSON,
// CSV and Python have it.
double MachineNumber(double v, double scale);
// A value as JSON has it, as one CSV field: base units, every digit; empty
// when absent.
std::string CsvValue(const Value& value, const Column& column);

// A value as tables and CSV show it ("n/a" when absent).
std::string RenderValue(const Value& value, int precision);

// A duration as tables show it, in the unit that suits it (ns, µs, ms or s,
// four significant digits at most): "1.355 ms"; whole microseconds as such.
std::string HumanDuration(double ns, bool whole_us = false);

// A table as people read it. Time and byte columns (Unit::kTime, kBytes) show
// each value in the unit that suits it, with four significant digits at most
// ("1.355 ms", "29.93 s", "1.50 GiB"; whole microseconds, from integer-µs
// timestamps, never get decimals they do not have: "9 µs"), the unit gone from
// the header.
// With max_width > 0 (the terminal): control characters escaped
// (EscapeForTerminal), then names (demangled kernels) shortened, templates and
// argument lists first, and other text wrapped ('\n' between lines), until
// the table fits.
struct TableView {
  std::vector<size_t> columns;  // the table's columns shown, in order
  std::vector<std::string> headers;
  std::vector<bool> numeric;                    // right-aligned
  std::vector<std::vector<std::string>> cells;  // per row, per shown column
};
TableView ViewOf(const ResultTable& table, bool terminal_columns_only, size_t max_width = 0);

// `text` in at most `width` code points: template arguments and parameter
// lists collapsed first ("f<…>(…)"), then the middle elided.
std::string ShortenName(std::string_view text, size_t width);
// The rows of `tables` as JSON objects, comma-separated, appended to `out`;
// each begins with "section" (its table's) when `name_sections`.
void AppendRowsJson(std::string& out, const std::vector<ResultTable>& tables, bool name_sections);

// The members every JSON output opens with: `{"schema_version":...,
// "opscope_version":..., "command":..., "machine":{...}` (the object left open).
std::string JsonHead(std::string_view command);

// Tables of one shape (the same column keys) as one CSV: a header of the
// column keys (snake_case, unique, the units in them as analysis.json has
// them), then every row, numbers at full precision; an absent value is an
// empty field. Loads with pandas.read_csv unchanged.
std::string TablesCsv(const std::vector<const ResultTable*>& tables);

// How tables go into tables/*.csv files: the tables of a section (one per
// trace, rank or step) share their columns and go in one file,
// "<section>.csv"; a section whose tables differ in shape gets one file per
// shape ("<section>_2.csv", ...). In the order of the tables' first appearance.
struct CsvFile {
  std::string name;
  std::vector<const ResultTable*> tables;
};
std::vector<CsvFile> SplitCsvFiles(const std::vector<const ResultTable*>& tables);

void WriteTable(std::ostream& out, const std::vector<ResultTable>& tables);
void WriteCsv(std::ostream& out, const std::vector<ResultTable>& tables);
void WriteJson(std::ostream& out, std::string_view command, const std::vector<ResultTable>& tables);
void Write(std::ostream& out, Format format, std::string_view command,
           const std::vector<ResultTable>& tables);

}  // namespace opscope::report

#endif  // OPSCOPE_REPORT_RESULT_TABLE_H_
