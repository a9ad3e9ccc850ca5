// Escaping of untrusted strings for every place they are rendered.
#ifndef OPSCOPE_CORE_TEXT_H_
#define OPSCOPE_CORE_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::core {

// Appends `text` as a quoted JSON string. Control characters, quotes and backslashes
// are escaped; '<', '>', '&', U+2028 and U+2029 too, so the JSON can sit inside HTML
// <script> blocks; invalid UTF-8 bytes become U+FFFD.
void AppendJsonString(std::string& out, std::string_view text);

// Appends a finite double in the shortest form that reads back exactly; NaN and
// infinities, which JSON cannot hold, as null.
void AppendJsonNumber(std::string& out, double value);
void AppendInt(std::string& out, int64_t value);
void AppendUint(std::string& out, uint64_t value);

// Appends nanoseconds as microseconds with exactly three decimals ("12.345").
void AppendMicros(std::string& out, int64_t ns);

// Returns `text` with invalid UTF-8 replaced by U+FFFD.
std::string SanitizeUtf8(std::string_view text);

// Returns `text` safe to print on a terminal: invalid UTF-8 replaced, and control
// characters (escape sequences included) shown as \n, \t or \xNN.
std::string EscapeForTerminal(std::string_view text);

// Returns `text` as one CSV field (RFC 4180 quoting). Text that a spreadsheet would
// run as a formula (leading = + - @ tab CR) is prefixed with a single quote;
// control characters other than tab and line breaks are shown as \xNN.
std::string EscapeCsvField(std::string_view text);

// Returns `text` with HTML's special characters as entities, invalid UTF-8 replaced.
std::string EscapeHtml(std::string_view text);

// Returns `text` whole when it holds `max_bytes` bytes or fewer, else its first
// `max_bytes` bytes (fewer, to end on a whole UTF-8 character) and "…".
std::string CutUtf8(std::string_view text, size_t max_bytes);

// Splits "a,b,c"; throws Error(kInvalidArgument) naming `option` on an empty item.
std::vector<std::string> SplitList(const std::string& text, const std::string& option);

}  // namespace opscope::core

#endif  // OPSCOPE_CORE_TEXT_H_
