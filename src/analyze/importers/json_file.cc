#include "analyze/importers/json_file.h"

#include <string>

#include "opscope/opscope.h"

namespace opscope::analyze {

std::string ReadWholeFile(Source& source, size_t max_bytes, std::string_view what) {
  std::string bytes;
  char block[1 << 16];
  while (const size_t n = source.Read(block, sizeof block)) {
    bytes.append(block, n);
    if (bytes.size() > max_bytes) {
      throw Error(ErrorCode::kInvalidInput, source.name() + ": larger than " +
                                                std::to_string(max_bytes >> 20) + " MiB: not " +
                                                std::string(what));
    }
  }
  return bytes;
}

simdjson::dom::element ReadJsonFile(Source& source, simdjson::dom::parser& parser, size_t max_bytes,
                                    std::string_view what) {
  const std::string& path = source.name();
  const std::string bytes = ReadWholeFile(source, max_bytes, what);
  simdjson::dom::element root;
  // The DOM copies what it keeps: the text may go once it is parsed.
  if (const auto error = parser.parse(simdjson::padded_string(bytes)).get(root);
      error != simdjson::SUCCESS) {
    throw Error(ErrorCode::kInvalidInput,
                path + ": not JSON: " + std::string(simdjson::error_message(error)));
  }
  return root;
}

}  // namespace opscope::analyze
