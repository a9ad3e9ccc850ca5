// Records of a CSV file (RFC 4180: quoted fields may hold commas, doubled
// quotes and line breaks; CRLF or LF line ends) read from a Source in blocks,
// for every importer of a CSV format. The line numbers it reports are the
// file's (a quoted line break counts).
#ifndef OPSCOPE_ANALYZE_IMPORTERS_CSV_READER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_CSV_READER_H_

#include <string>
#include <string_view>
#include <vector>

#include "analyze/source.h"

namespace opscope::analyze {

class CsvReader {
 public:
  explicit CsvReader(Source& source) : source_(source), buffer_(size_t{1} << 20) {}

  // The next record's fields; false at the end of the data. Throws
  // Error(kInvalidInput) naming the source and line when a quoted field is not
  // closed, or a record grows past kMaxRecordBytes or kMaxRecordFields (memory
  // stays bounded by those caps, never by the input).
  bool Next(std::vector<std::string>& fields);
  // The line the last record returned by Next began on (1-based).
  int record_line() const { return record_line_; }

  static constexpr size_t kMaxRecordBytes = size_t{64} << 20;
  static constexpr size_t kMaxRecordFields = size_t{1} << 20;

 private:
  bool Get(char& c);
  bool PeekChar(char& c);

  Source& source_;
  std::vector<char> buffer_;
  size_t at_ = 0, end_ = 0;
  bool eof_ = false;
  int line_ = 1, record_line_ = 0;
};

// Leading and trailing spaces and tabs removed (torch_npu writes a tab after
// its start times).
std::string_view TrimField(std::string_view s);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_CSV_READER_H_
