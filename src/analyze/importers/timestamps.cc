#include "analyze/importers/timestamps.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>

namespace opscope::analyze {

bool MicrosToNs(std::string_view text, int64_t& ns) {
  if (text.empty()) return false;
  size_t i = 0;
  const bool negative = text[0] == '-';
  if (negative) ++i;
  int64_t whole = 0;
  const size_t digits_start = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (whole > (INT64_MAX - 9) / 10) return false;
    whole = whole * 10 + (text[i++] - '0');
  }
  if (i == digits_start) return false;
  int64_t fraction = 0;
  int fraction_digits = 0;
  bool round_up = false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (fraction_digits < 3) {
        fraction = fraction * 10 + (text[i] - '0');
        ++fraction_digits;
      } else if (fraction_digits == 3) {
        round_up = text[i] >= '5';
        ++fraction_digits;
      }
      ++i;
    }
  }
  if (i < text.size()) {
    // An exponent or other notation: fall back to a double.
    double value = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
    if (result.ec != std::errc() || result.ptr != text.data() + text.size() ||
        !std::isfinite(value) || std::abs(value) * 1000 > static_cast<double>(kMaxTimeNs)) {
      return false;
    }
    ns = static_cast<int64_t>(std::llround(value * 1000.0));
    return true;
  }
  for (int d = std::min(fraction_digits, 3); d < 3; ++d) fraction *= 10;
  // Beyond +-4e18 ns (126 years) sums and differences of two times could overflow.
  if (whole > kMaxTimeNs / 1000) return false;
  ns = whole * 1000 + fraction + (round_up ? 1 : 0);
  if (negative) ns = -ns;
  return true;
}

bool MicrosOutOfRange(std::string_view text) {
  // A plain decimal ([-]digits[.digits]) or what from_chars reads as a number.
  size_t i = text.starts_with('-') ? 1 : 0;
  const size_t digits = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i > digits && (i == text.size() || text[i] == '.')) {
    size_t j = i + (i < text.size() ? 1 : 0);
    while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
    if (j == text.size()) return true;  // a number, refused: too large
  }
  double value = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ptr != text.data() + text.size()) return false;
  return result.ec == std::errc::result_out_of_range ||
         (result.ec == std::errc() && std::isfinite(value) &&
          std::abs(value) * 1000 > static_cast<double>(kMaxTimeNs));
}

std::string WhyNotMicros(std::string_view text, std::string_view otherwise) {
  return MicrosOutOfRange(text) ? "out of range (beyond 4e18 ns, about 126 years)"
                                : std::string(otherwise);
}

}  // namespace opscope::analyze
