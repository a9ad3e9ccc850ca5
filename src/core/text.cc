#include "core/text.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "opscope/opscope.h"

namespace opscope::core {
namespace {

constexpr char kHex[] = "0123456789abcdef";
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the valid UTF-8 sequence starting at text[i], or 0 if it is invalid.
size_t ValidSequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t length = 0;
  uint32_t min_code = 0;
  uint32_t code = 0;
  if ((c & 0xE0) == 0xC0) {
    length = 2, min_code = 0x80, code = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    length = 3, min_code = 0x800, code = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    length = 4, min_code = 0x10000, code = c & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    const unsigned char cc = byte(i + k);
    if ((cc & 0xC0) != 0x80) return 0;
    code = (code << 6) | (cc & 0x3F);
  }
  if (code < min_code || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

template <typename Emit>
void ForEachValidated(std::string_view text, Emit&& emit) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t length = ValidSequenceLength(text, i);
    if (length == 0) {
      emit(kReplacement, true);
      ++i;
    } else {
      emit(text.substr(i, length), false);
      i += length;
    }
  }
}

void AppendUnicodeEscape(std::string& out, unsigned code) {
  out += "\\u";
  out += kHex[(code >> 12) & 0xF];
  out += kHex[(code >> 8) & 0xF];
  out += kHex[(code >> 4) & 0xF];
  out += kHex[code & 0xF];
}

bool IsPlainJsonByte(unsigned char c) {
  return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view text) {
  out += '"';
  size_t i = 0;
  while (i < text.size()) {
    // Fast path: a run of plain ASCII.
    size_t run = i;
    while (run < text.size() && IsPlainJsonByte(static_cast<unsigned char>(text[run]))) ++run;
    out.append(text.data() + i, run - i);
    i = run;
    if (i >= text.size()) break;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default: AppendUnicodeEscape(out, c); break;
      }
      ++i;
      continue;
    }
    const size_t length = ValidSequenceLength(text, i);
    if (length == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    // U+2028 and U+2029 end lines in JavaScript source.
    if (length == 3 && c == 0xE2 && static_cast<unsigned char>(text[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(text[i + 2]) == 0xA8 ||
         static_cast<unsigned char>(text[i + 2]) == 0xA9)) {
      AppendUnicodeEscape(out, static_cast<unsigned char>(text[i + 2]) == 0xA8 ? 0x2028 : 0x2029);
    } else {
      out.append(text.data() + i, length);
    }
    i += length;
  }
  out += '"';
}

void AppendJsonNumber(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

void AppendInt(std::string& out, int64_t value) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

void AppendUint(std::string& out, uint64_t value) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

void AppendMicros(std::string& out, int64_t ns) {
  uint64_t magnitude = static_cast<uint64_t>(ns);
  if (ns < 0) {
    out += '-';
    magnitude = 0 - magnitude;
  }
  AppendUint(out, magnitude / 1000);
  const unsigned fraction = static_cast<unsigned>(magnitude % 1000);
  out += '.';
  out += static_cast<char>('0' + fraction / 100);
  out += static_cast<char>('0' + fraction / 10 % 10);
  out += static_cast<char>('0' + fraction % 10);
}

std::string CutUtf8(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "…";
}

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ForEachValidated(text, [&](std::string_view piece, bool) { out += piece; });
  return out;
}

std::string EscapeForTerminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ForEachValidated(text, [&](std::string_view piece, bool) {
    const unsigned char c = static_cast<unsigned char>(piece[0]);
    if (piece.size() == 1 && (c < 0x20 || c == 0x7F)) {
      if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c == '\r') {
        out += "\\r";
      } else {
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
      }
    } else if (piece.size() == 2 && c == 0xC2 && static_cast<unsigned char>(piece[1]) < 0xA0) {
      // C1 controls (U+0080..U+009F) include CSI, which terminals obey.
      out += "\\u00";
      out += kHex[static_cast<unsigned char>(piece[1]) >> 4];
      out += kHex[static_cast<unsigned char>(piece[1]) & 0xF];
    } else {
      out += piece;
    }
  });
  return out;
}

std::string EscapeCsvField(std::string_view text) {
  // Control characters other than tab and line breaks (legal inside quotes) are
  // shown as \xNN: a CSV printed on a terminal must not run escape sequences.
  std::string clean;
  for (const char c : SanitizeUtf8(text)) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7F) {
      clean += "\\x";
      clean += kHex[u >> 4];
      clean += kHex[u & 0xF];
    } else {
      clean += c;
    }
  }
  const bool formula = !clean.empty() && std::strchr("=+-@\t\r", clean[0]) != nullptr;
  if (formula) clean.insert(clean.begin(), '\'');
  if (clean.find_first_of(",\"\n\r") == std::string::npos) return clean;
  std::string out = "\"";
  for (const char c : clean) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ForEachValidated(text, [&](std::string_view piece, bool) {
    switch (piece[0]) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: {
        // Control characters (NUL, BEL, ESC, ...) are not allowed in HTML text:
        // shown as their Unicode control pictures (U+2400 + code), DEL as U+2421;
        // tab, newline and carriage return stay.
        const auto c = static_cast<unsigned char>(piece[0]);
        if (piece.size() == 1 && (c < 0x20 || c == 0x7F) && c != '\t' && c != '\n' && c != '\r') {
          char entity[16];
          std::snprintf(entity, sizeof entity, "&#x%X;", c == 0x7F ? 0x2421u : 0x2400u + c);
          out += entity;
        } else {
          out += piece;
        }
        break;
      }
    }
  });
  return out;
}

std::vector<std::string> SplitList(const std::string& text, const std::string& option) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) {
      throw Error(ErrorCode::kInvalidArgument,
                  option + " '" + EscapeForTerminal(text) + "': empty item in the list");
    }
    items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

}  // namespace opscope::core
