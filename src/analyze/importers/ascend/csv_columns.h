// The records of one of Ascend's CSV files, read by column name (docs/formats/ascend.md,
// section 0: never by position), with the conversions every such file needs:
// text trimmed of the spaces and tabs the writers add, "N/A" and empty as
// absent, times and durations in microseconds to exact nanoseconds, sizes in
// a unit to bytes. A value that is present and not what its column holds is an
// error naming the file, line, column and text.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_CSV_COLUMNS_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_CSV_COLUMNS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/importers/csv_reader.h"
#include "analyze/source.h"
#include "opscope/opscope.h"

namespace opscope::analyze {

// "N/A" or empty: not collected (docs/formats/ascend.md 2.2).
bool AbsentField(std::string_view text);

class CsvColumns {
 public:
  // Throws Error(kInvalidInput) naming the file for an empty file, or line 1
  // for a header without one of `required`.
  CsvColumns(Source& source, std::initializer_list<const char*> required);

  // The next data record; false at the end. Throws for a record whose field
  // count is not the header's.
  bool Next() { return header_.NextRecord(csv_, fields_, path_); }
  bool Has(std::string_view column) const { return header_.Find(column) != SIZE_MAX; }
  // The first of `columns` the header has, or nullptr.
  const char* FirstOf(std::initializer_list<const char*> columns) const;

  // Trimmed text; empty when the header lacks the column.
  std::string_view Text(std::string_view column) const;
  // -1 when absent (or the header lacks the column); throws for anything but a
  // number of microseconds (at most 3 decimals exact).
  int64_t Micros(std::string_view column) const;
  // A size in units of `unit` bytes, as bytes; -1 when absent. Negative values
  // are kept (they mean something in some files) as long as allow_negative.
  int64_t Size(std::string_view column, double unit, bool allow_negative = true) const;
  // A non-negative integer; -1 when absent.
  int64_t Count(std::string_view column) const;
  // A finite number; `absent` when absent.
  double Number(std::string_view column, double absent = -1) const;

  const std::string& path() const { return path_; }
  int line() const { return csv_.record_line(); }

 private:
  Error Bad(std::string_view column, std::string_view text, const char* what) const;

  std::string path_;
  CsvReader csv_;
  CsvHeader header_;
  std::vector<std::string> fields_;
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_CSV_COLUMNS_H_
