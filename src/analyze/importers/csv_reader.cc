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

bool CsvReader::Get(char& c) {
  if (!PeekChar(c)) return false;
  ++at_;
  return true;
}

bool CsvReader::Next(std::vector<std::string>& fields) {
  fields.clear();
  record_line_ = line_;
  std::string field;
  bool quoted = false, any = false;
  const auto fail = [&](const std::string& what) {
    return Error(ErrorCode::kInvalidInput,
                 source_.name() + ": line " + std::to_string(record_line_) + ": " + what);
  };
  char c;
  size_t record_bytes = 0;
  while (Get(c)) {
    any = true;
    if (++record_bytes > kMaxRecordBytes) {
      throw fail("a record is longer than " + std::to_string(kMaxRecordBytes >> 20) +
                 " MiB (the file is corrupt, or not the CSV it seems)");
    }
    if (quoted) {
      if (c == '"') {
        char next;
        if (PeekChar(next) && next == '"') {
          Get(next);
          field += '"';
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line_;
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      if (fields.size() + 2 > kMaxRecordFields) {  // this field and at least one more
        throw fail("a record has more than " + std::to_string(kMaxRecordFields) + " fields");
      }
      fields.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      ++line_;
      fields.push_back(std::move(field));
      return true;
    } else if (c != '\r') {
      field += c;
    }
  }
  if (quoted) throw fail("a quoted field is not closed before the end of the file");
  if (any) fields.push_back(std::move(field));
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
