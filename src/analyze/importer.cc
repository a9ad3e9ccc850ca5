#include "analyze/importer.h"

#include <fmt/format.h>
#include <fnmatch.h>
#include <simdjson.h>

#include <algorithm>
#include <mutex>

#include "analyze/trace_inputs.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {
std::mutex settings_mutex;
ImportSettings settings;
}  // namespace

void SetImportSettings(const ImportSettings& s) {
  std::lock_guard lock(settings_mutex);
  settings = s;
  settings.threads = std::max(0, s.threads);
}

ImportSettings GetImportSettings() {
  std::lock_guard lock(settings_mutex);
  return settings;
}

const Importer* FindImporter(Source& source) {
  for (const Importer& importer : Importers()) {
    if (importer.sniff(source)) return &importer;
  }
  return nullptr;
}

namespace {

// What is wrong with an input no importer recognised, when its first bytes
// tell: empty, white space only, not text, or JSON that does not parse (the
// byte where it goes wrong, for the mistakes that show one). "" when they do
// not: the input is well-formed text of a format opscope does not read.
// Sets `code` to kInvalidInput for a broken file.
std::string WhatIsWrong(Source& source, ErrorCode& code) {
  code = ErrorCode::kInvalidInput;
  const std::string_view head = source.Peek(kMaxPeekBytes);
  const std::string name = "'" + source.name() + "'";
  if (head.empty() && source.PeekedAll()) return name + " is empty (0 bytes)";
  const size_t text = head.find_first_not_of(" \t\r\n");
  if (text == std::string_view::npos && source.PeekedAll()) {
    return fmt::format("{} holds only white space ({} bytes)", name, head.size());
  }
  // A database of another kind: the list of formats says which ones opscope reads.
  if (head.starts_with(std::string_view("SQLite format 3\0", 16))) return "";
  // An archive that its name does not say is one (or read from standard
  // input): opscope unpacks archives it can name (archive_input.h).
  if (head.size() >= 262 && head.substr(257, 5) == "ustar") {
    code = ErrorCode::kUnsupported;
    return name +
           " is a tar archive: give it a name ending in .tar, .tar.gz or .tgz (opscope "
           "unpacks those) or unpack it";
  }
  if (head.starts_with("PK\x03\x04")) {
    code = ErrorCode::kUnsupported;
    return name +
           " is a zip archive: give it a name ending in .zip (opscope unpacks those) or "
           "unpack it";
  }
  // A Python pickle of something other than what opscope reads from one.
  if (head.size() >= 2 && static_cast<uint8_t>(head[0]) == 0x80 &&
      static_cast<uint8_t>(head[1]) >= 2 && static_cast<uint8_t>(head[1]) <= 5) {
    code = ErrorCode::kUnsupported;
    return name +
           " is a Python pickle but not a PyTorch memory snapshot (its top-level dict does not "
           "begin with 'segments' or 'device_traces'; torch.cuda.memory._dump_snapshot writes "
           "those)";
  }
  // Not text: a NUL or another control byte (the first 64 KiB are enough to tell).
  const std::string_view sample = head.substr(0, size_t{64} << 10);
  for (size_t i = 0; i < sample.size(); ++i) {
    const auto c = static_cast<unsigned char>(sample[i]);
    if (c == 0 || (c < 0x20 && c != '\t' && c != '\r' && c != '\n' && c != '\f')) {
      code = ErrorCode::kUnsupported;
      return fmt::format("{} is not text: byte {} is {} (0x{:02x})", name, i,
                         c == 0 ? "a NUL" : "a control character", c);
    }
  }
  if (text == std::string_view::npos) return "";
  const char first = head[text];
  const bool json_like =
      first == '{' || first == '[' || first == '"' || head.substr(text).starts_with("null") ||
      head.substr(text).starts_with("true") || head.substr(text).starts_with("false");
  if (!json_like) return "";
  // A single-quoted key or string, as Python's repr writes: the first quote
  // outside a double-quoted string.
  bool in_string = false;
  for (size_t i = text; i < head.size(); ++i) {
    const char c = head[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '\'') {
      return fmt::format(
          "{} is not JSON: byte {} is a single quote (JSON strings take double quotes; Python's "
          "repr() or str() wrote it, json.dump writes JSON)",
          name, i);
    }
  }
  if (!source.PeekedAll()) return "";  // larger than a peek: the format's own reader says
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (const auto error = parser.parse(head.data(), head.size()).get(root); error) {
    return fmt::format("{} is not JSON: {}", name, simdjson::error_message(error));
  }
  code = ErrorCode::kUnsupported;
  switch (root.type()) {
    case simdjson::dom::element_type::OBJECT:
    case simdjson::dom::element_type::ARRAY: return "";  // JSON of another kind: the list below
    default:
      return fmt::format(
          "{} is JSON but holds a single {} value, not a trace (a Chrome trace is an object with "
          "\"traceEvents\" or an array of events)",
          name,
          root.type() == simdjson::dom::element_type::NULL_VALUE ? "null"
          : root.type() == simdjson::dom::element_type::STRING   ? "string"
          : root.type() == simdjson::dom::element_type::BOOL     ? "true/false"
                                                                 : "number");
  }
}

}  // namespace

std::string MissingCsvColumns(Source& source, const std::vector<std::string_view>& required,
                              size_t enough, std::string_view what) {
  std::string_view header = source.Peek(size_t{64} << 10);
  header = header.substr(0, header.find('\n'));
  if (header.ends_with('\r')) header.remove_suffix(1);
  if (header.starts_with("\xEF\xBB\xBF")) header.remove_prefix(3);  // a UTF-8 byte-order mark
  std::vector<std::string_view> columns;
  for (size_t at = 0; at <= header.size();) {
    const size_t comma = std::min(header.find(',', at), header.size());
    std::string_view column = header.substr(at, comma - at);
    if (column.size() >= 2 && column.front() == '"' && column.back() == '"') {
      column = column.substr(1, column.size() - 2);
    }
    columns.push_back(column);
    at = comma + 1;
  }
  std::string missing;
  size_t present = 0;
  for (const std::string_view column : required) {
    if (std::find(columns.begin(), columns.end(), column) != columns.end()) {
      ++present;
    } else {
      missing += (missing.empty() ? "'" : ", '") + std::string(column) + "'";
    }
  }
  if (present < enough || missing.empty()) return {};
  return fmt::format("'{}': line 1: the header lacks {}, {} of {} (its header: {})", source.name(),
                     missing, required.size() - present == 1 ? "a column" : "columns", what,
                     core::EscapeForTerminal(header.substr(0, 300)));
}

TraceModel ImportTrace(Source& source) {
  const Importer* importer = FindImporter(source);
  if (importer == nullptr) {
    // A CSV header with most of a format's columns first: a quoted header
    // ("Kind","Kernel_Name",...) would otherwise be judged as JSON text.
    for (const Importer& i : Importers()) {
      if (i.near_miss == nullptr) continue;
      if (const std::string missing = i.near_miss(source); !missing.empty()) {
        throw Error(ErrorCode::kInvalidInput, missing);
      }
    }
    ErrorCode code = ErrorCode::kUnsupported;
    if (const std::string wrong = WhatIsWrong(source, code); !wrong.empty()) {
      throw Error(code, wrong);
    }
    std::string formats;
    for (const Importer& i : Importers()) {
      formats += (formats.empty() ? "" : "; ") + std::string(i.description);
    }
    throw Error(ErrorCode::kUnsupported, "'" + source.name() +
                                             "' is not a trace format opscope reads (" + formats +
                                             "; plain, gzip or zip); it begins: " +
                                             core::EscapeForTerminal(std::string(source.Peek(40))));
  }
  TraceModel model;
  importer->import(source, model);
  return model;
}

TraceModel ImportTrace(const std::filesystem::path& path) {
  const auto source = Source::Open(path);
  return ImportTrace(*source);
}

std::string_view WithoutContainerSuffix(std::string_view file_name) {
  for (const std::string_view suffix : {std::string_view(".gz"), std::string_view(".zip")}) {
    if (file_name.size() > suffix.size() && file_name.ends_with(suffix)) {
      return file_name.substr(0, file_name.size() - suffix.size());
    }
  }
  return file_name;
}

bool MatchesTraceName(std::string_view file_name) {
  const std::string name(WithoutContainerSuffix(file_name));
  for (const Importer& importer : Importers()) {
    for (const std::string_view pattern : importer.file_patterns) {
      if (fnmatch(std::string(pattern).c_str(), name.c_str(), 0) == 0) return true;
    }
  }
  return false;
}

std::vector<std::string> FindTraceFiles(const std::vector<std::string>& inputs) {
  std::vector<std::string> out;
  for (TraceInput& input : FindTraceInputs(inputs).traces) out.push_back(std::move(input.path));
  return out;
}

}  // namespace opscope::analyze
