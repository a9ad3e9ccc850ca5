#include "analyze/importers/csv_reader.h"

#include "opscope/opscope.h"

namespace opscope::analyze {

std::string_view TrimField(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool CsvReader::PeekChar(char& c) {
  if (at_ == end_) {
    if (eof_) return false;
    end_ = source_.Read(buffer_.data(), buffer_.size());
    at_ = 0;
    if (end_ == 0) {
      eof_ = true;
      return false;
    }
  }
  c = buffer_[at_];
  return true;
}

// Scans runs of ordinary characters in the buffer at once and appends them
// whole; the strings of `fields` keep their capacity from record to record, so
// a file of like records allocates almost nothing after its first.
bool CsvReader::Next(std::vector<std::string>& fields) {
  record_line_ = line_;
  size_t n = 0;  // fields of this record so far, the current one excluded
  const auto next_field = [&]() -> std::string& {
    if (n == fields.size()) fields.emplace_back();
    std::string& f = fields[n];
    f.clear();
    return f;
  };
  const auto fail = [&](const std::string& what) {
    return Error(ErrorCode::kInvalidInput,
                 source_.name() + ": line " + std::to_string(record_line_) + ": " + what);
  };
  std::string* field = &next_field();
  bool quoted = false, any = false;
  size_t record_bytes = 0;
  const auto consumed = [&](size_t k) {
    record_bytes += k;
    if (record_bytes > kMaxRecordBytes) {
      throw fail("a record is longer than " + std::to_string(kMaxRecordBytes >> 20) +
                 " MiB (the file is corrupt, or not the CSV it seems)");
    }
  };
  char c;
  while (PeekChar(c)) {
    any = true;
    const char* begin = buffer_.data() + at_;
    const char* end = buffer_.data() + end_;
    const char* q = begin;
    if (quoted) {
      while (q < end && *q != '"' && *q != '\n') ++q;
    } else {
      while (q < end && *q != ',' && *q != '\n' && *q != '"' && *q != '\r') ++q;
    }
    consumed(static_cast<size_t>(q - begin));
    field->append(begin, q);
    at_ += static_cast<size_t>(q - begin);
    if (q == end) continue;  // the buffer ended inside a run: read on
    c = *q;
    ++at_;
    consumed(1);
    if (quoted) {
      if (c == '\n') {
        ++line_;
        field->push_back('\n');
      } else {  // a quote: doubled, it is one; alone, it closes the field
        char after;
        if (PeekChar(after) && after == '"') {
          ++at_;
          consumed(1);
          field->push_back('"');
        } else {
          quoted = false;
        }
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      if (n + 2 > kMaxRecordFields) {  // this field and at least one more
        throw fail("a record has more than " + std::to_string(kMaxRecordFields) + " fields");
      }
      ++n;
      field = &next_field();
    } else if (c == '\n') {
      ++line_;
      fields.resize(n + 1);
      return true;
    }  // '\r' outside quotes is dropped
  }
  if (quoted) throw fail("a quoted field is not closed before the end of the file");
  fields.resize(any ? n + 1 : 0);
  return any;
}

size_t CsvHeader::Find(std::string_view name) const {
  const auto it = column.find(name);
  return it == column.end() ? SIZE_MAX : it->second;
}

bool CsvHeader::NextRecord(CsvReader& csv, std::vector<std::string>& fields,
                           const std::string& name) const {
  while (csv.Next(fields)) {
    if (fields.size() == 1 && TrimField(fields[0]).empty()) continue;  // a blank line
    if (fields.size() != this->fields) {
      throw Error(ErrorCode::kInvalidInput, name + ": line " + std::to_string(csv.record_line()) +
                                                ": " + std::to_string(fields.size()) +
                                                " fields where the header has " +
                                                std::to_string(this->fields));
    }
    return true;
  }
  return false;
}

CsvHeader ReadCsvHeader(CsvReader& csv, const std::string& name) {
  std::vector<std::string> fields;
  if (!csv.Next(fields)) {
    throw Error(ErrorCode::kInvalidInput, name + ": line 1: the file is empty");
  }
  if (!fields.empty() && fields[0].starts_with("\xEF\xBB\xBF")) fields[0].erase(0, 3);
  CsvHeader header;
  header.fields = fields.size();
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string column(TrimField(fields[i]));
    if (!header.column.emplace(column, i).second) {
      throw Error(ErrorCode::kInvalidInput,
                  name + ": line 1: the column '" + column + "' appears twice");
    }
  }
  return header;
}

}  // namespace opscope::analyze
