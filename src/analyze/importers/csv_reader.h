// Records of a CSV file (RFC 4180: quoted fields may hold commas, doubled
// quotes and line breaks; CRLF or LF line ends) read from a Source in blocks,
// for every importer of a CSV format. The line numbers it reports are the
// file's (a quoted line break counts).
#ifndef OPSCOPE_ANALYZE_IMPORTERS_CSV_READER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_CSV_READER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyze/source.h"

namespace opscope::analyze {

class CsvReader {
 public:
  explicit CsvReader(Source& source)
      : source_(&source), name_(source.name()), buffer_(size_t{1} << 20) {}
  // The records of bytes in memory (a CsvBatch's), named `name` in errors, the
  // first beginning on line `first_line` of that file. `bytes` must outlive
  // the reader.
  CsvReader(std::string name, std::string_view bytes, int first_line)
      : source_(nullptr),
        name_(std::move(name)),
        memory_(bytes.data()),
        end_(bytes.size()),
        eof_(true),
        line_(first_line) {}

  // The next record's fields; false at the end of the data. Throws
  // Error(kInvalidInput) naming the source and line when a quoted field is not
  // closed, or a record grows past kMaxRecordBytes or kMaxRecordFields (memory
  // stays bounded by those caps, never by the input).
  bool Next(std::vector<std::string>& fields);
  // The same record as Next would give, as views valid until the next call:
  // into the reader's buffer where a field is one run of bytes, else into its
  // scratch (a field with doubled quotes, or one split by quotes or a CR).
  // Copies nothing for plain fields; the same errors and caps as Next.
  bool NextViews(std::vector<std::string_view>& fields);
  // The line the last record returned by Next began on (1-based).
  int record_line() const { return record_line_; }
  // Bytes of the input consumed so far (for estimating how many records follow).
  uint64_t consumed() const { return consumed_ + at_; }

  static constexpr size_t kMaxRecordBytes = size_t{64} << 20;
  static constexpr size_t kMaxRecordFields = size_t{1} << 20;

 private:
  bool PeekChar(char& c);
  // Parses one record at the front of [at_, end_) into `fields`: 1 done (at_
  // moved past it), 0 the buffered bytes end inside it (more are needed), -1
  // no data is left.
  int ParseViews(std::vector<std::string_view>& fields);
  // Moves the unread bytes to the front, growing the buffer when one record
  // fills it, and reads more; false at the end of the data.
  bool Refill();

  const char* data() const { return memory_ != nullptr ? memory_ : buffer_.data(); }

  Source* source_;  // null for bytes in memory
  std::string name_;
  std::vector<char> buffer_;
  const char* memory_ = nullptr;  // the bytes in memory, else null
  size_t at_ = 0, end_ = 0;
  uint64_t consumed_ = 0;  // bytes dropped from the buffer's front before at_
  bool eof_ = false;
  int line_ = 1, record_line_ = 0;
  std::deque<std::string> scratch_;  // stable addresses for the views into it
};

// A run of whole records of a CSV input, for parsing apart from the others.
struct CsvBatch {
  std::vector<char> buffer;  // bytes [0, size) hold the records
  size_t size = 0;
  int first_line = 1;  // the input's line its first record begins on
  std::string_view bytes() const { return {buffer.data(), size}; }
};

// Cuts a CSV input into runs of whole records of about `batch_bytes` each, for
// parsers running at once. A run ends at a line end outside quotes, which the
// parity of the quotes before it tells (a doubled quote counts twice), so a
// quoted line break never splits a record. Records past kMaxRecordBytes are an
// error (naming the input and line), as for CsvReader; an unclosed quote at
// the end is left for the reader of the last run to report.
class CsvBatcher {
 public:
  CsvBatcher(Source& source, size_t batch_bytes) : source_(source), batch_bytes_(batch_bytes) {}
  // The next run; false, with an empty batch, at the end of the data.
  bool Next(CsvBatch& batch);

 private:
  Source& source_;
  size_t batch_bytes_;
  std::vector<char> carry_;  // the bytes read past the last run's end
  int line_ = 1;
  bool eof_ = false;
};

// Leading and trailing spaces and tabs removed (torch_npu writes a tab after
// its start times).
std::string_view TrimField(std::string_view s);

// The header record: each column name (trimmed, a UTF-8 byte-order mark
// removed) to its index. Throws Error(kInvalidInput) naming the source for an
// empty file or a name that appears twice (records would be read past their end).
struct CsvHeader {
  std::map<std::string, size_t, std::less<>> column;
  size_t fields = 0;  // every record must have as many
  // The index of a column, or SIZE_MAX when the header lacks it.
  size_t Find(std::string_view name) const;
  // The next data record, blank lines skipped; false at the end. Throws
  // Error(kInvalidInput) naming `name` and the line when its field count is not
  // the header's.
  bool NextRecord(CsvReader& csv, std::vector<std::string>& fields, const std::string& name) const;
  bool NextRecord(CsvReader& csv, std::vector<std::string_view>& fields,
                  const std::string& name) const;
};
CsvHeader ReadCsvHeader(CsvReader& csv, const std::string& name);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_CSV_READER_H_
