#include "analyze/importers/ascend/csv_columns.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "analyze/importers/timestamps.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

// One pair of quotes around a number (a re-written file may quote a start time
// with its tab inside the quotes, docs/formats/ascend.md 2.1), then spaces and tabs.
std::string_view Unquoted(std::string_view t) {
  if (t.size() >= 2 && (t.front() == '"' || t.front() == '\'') && t.back() == t.front()) {
    t = TrimField(t.substr(1, t.size() - 2));
  }
  return t;
}

bool ParseDouble(std::string_view t, double& v) {
  const char* end = t.data() + t.size();
  const auto [ptr, ec] = std::from_chars(t.data(), end, v);
  return ec == std::errc() && ptr == end && std::isfinite(v);
}

}  // namespace

bool AbsentField(std::string_view text) { return text.empty() || text == "N/A"; }

CsvColumns::CsvColumns(Source& source, std::initializer_list<const char*> required)
    : path_(source.name()), csv_(source), header_(ReadCsvHeader(csv_, path_)) {
  for (const char* column : required) {
    if (!Has(column)) {
      throw Error(ErrorCode::kInvalidInput,
                  path_ + ": line 1: no '" + std::string(column) + "' column");
    }
  }
}

const char* CsvColumns::FirstOf(std::initializer_list<const char*> columns) const {
  for (const char* c : columns) {
    if (Has(c)) return c;
  }
  return nullptr;
}

std::string_view CsvColumns::Text(std::string_view column) const {
  const size_t at = header_.Find(column);
  return at == SIZE_MAX ? std::string_view() : TrimField(fields_[at]);
}

int64_t CsvColumns::Micros(std::string_view column) const {
  const std::string_view t = Unquoted(Text(column));
  if (AbsentField(t)) return -1;
  int64_t ns = 0;
  if (!MicrosToNs(t, ns)) throw Bad(column, t, "a time in microseconds");
  return ns;
}

int64_t CsvColumns::Size(std::string_view column, double unit, bool allow_negative) const {
  const std::string_view t = Unquoted(Text(column));
  if (AbsentField(t)) return -1;
  double v = 0;
  if (!ParseDouble(t, v) || std::fabs(v * unit) > 9e18 || (!allow_negative && v < 0)) {
    throw Bad(column, t, "a size");
  }
  return std::llround(v * unit);
}

int64_t CsvColumns::Count(std::string_view column) const {
  const std::string_view t = Unquoted(Text(column));
  if (AbsentField(t)) return -1;
  int64_t n = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
  if (ec != std::errc() || ptr != t.data() + t.size() || n < 0) throw Bad(column, t, "a count");
  return n;
}

double CsvColumns::Number(std::string_view column, double absent) const {
  const std::string_view t = Unquoted(Text(column));
  if (AbsentField(t)) return absent;
  double v = 0;
  if (!ParseDouble(t, v)) throw Bad(column, t, "a number");
  return v;
}

Error CsvColumns::Bad(std::string_view column, std::string_view text, const char* what) const {
  return Error(ErrorCode::kInvalidInput, fmt::format("{}: line {}: '{}' is not {}: '{}'", path_,
                                                     csv_.record_line(), column, what, text));
}

}  // namespace opscope::analyze
