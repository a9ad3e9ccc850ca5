// Kineto's own log of a recording (kineto_log.h).
#include "analyze/importers/chrome_json/kineto_log.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <charconv>
#include <cstdint>
#include <string_view>
#include <vector>

#include "analyze/importers/counted_texts.h"

namespace opscope::analyze {
namespace {

constexpr size_t kTextBytes = 300;  // of each line, in the note
constexpr size_t kListed = 5;       // distinct lines named; the rest counted

// "WARNING:2026-01-08 08:51:59 865:3386 File.cpp:47] text" -> "text".
std::string_view Text(std::string_view line) {
  const size_t bracket = line.find("] ");
  return bracket == std::string_view::npos ? line : line.substr(bracket + 2);
}

// N of "Dropped N activity records", else -1.
int64_t Dropped(std::string_view text) {
  constexpr std::string_view kLead = "Dropped ";
  const size_t at = text.find(kLead);
  if (at == std::string_view::npos ||
      text.find(" activity records", at) == std::string_view::npos) {
    return -1;
  }
  int64_t n = -1;
  const char* begin = text.data() + at + kLead.size();
  if (std::from_chars(begin, text.data() + text.size(), n).ec != std::errc()) return -1;
  return n;
}

}  // namespace

void ReadKinetoLog(const std::map<std::string, std::string>& members, TraceModel& model) {
  std::map<std::string, int64_t> said;  // "warning: text" -> how often, in order of text
  int64_t dropped = 0;
  std::string stopped;  // the line that says tracing stopped
  simdjson::dom::parser parser;
  for (const char* severity : {"WARNING", "ERROR"}) {
    const auto member = members.find(severity);
    if (member == members.end()) continue;
    simdjson::dom::element doc;
    if (parser.parse(member->second).get(doc) != simdjson::SUCCESS) continue;
    simdjson::dom::array array;
    if (doc.get_array().get(array) != simdjson::SUCCESS) continue;
    for (simdjson::dom::element e : array) {
      std::string_view line;
      if (e.get_string().get(line) != simdjson::SUCCESS) continue;
      const std::string_view text = Text(line);
      if (const int64_t n = Dropped(text); n >= 0) {
        dropped =
            n > INT64_MAX - dropped ? INT64_MAX : dropped + n;  // saturating: untrusted counts
        continue;
      }
      if (text.find("Exceeded max GPU buffer count") != std::string_view::npos && stopped.empty()) {
        stopped = std::string(text.substr(0, kTextBytes));
        continue;
      }
      ++said[fmt::format("{}: {}", severity[0] == 'W' ? "warning" : "error",
                         text.substr(0, kTextBytes))];
    }
  }
  model.producer_dropped += static_cast<uint64_t>(dropped);
  model.producer_stopped |= !stopped.empty();
  if (!stopped.empty()) {
    model.import_notes.push_back(fmt::format(
        "Kineto stopped recording device activity when CUPTI's buffers filled ('{}', its log): "
        "device work after that point is missing from this trace, and every device figure is "
        "short by it; record fewer steps or raise the buffer limit",
        stopped));
  }
  if (dropped > 0) {
    model.import_notes.push_back(fmt::format(
        "CUPTI dropped {} activity record{} while recording (Kineto's log: 'Dropped N activity "
        "records'): device work is missing from this trace, and the figures that need it are "
        "short by what they held",
        dropped, dropped == 1 ? "" : "s"));
  }
  if (said.empty()) return;
  const CountedTexts listed = ListCounted(said, kListed);
  model.import_notes.push_back(fmt::format(
      "Kineto logged {} warning{} or error{} while recording (the trace's WARNING and ERROR "
      "lists): {}",
      listed.total, listed.total == 1 ? "" : "s", listed.total == 1 ? "" : "s", listed.list));
}

}  // namespace opscope::analyze
