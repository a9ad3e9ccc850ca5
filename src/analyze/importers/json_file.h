// Files read whole: the JSON beside an Ascend timeline (communication summaries,
// profiler_metadata.json, a device's info.json), rocprofv3's JSON output, XPlane.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_JSON_FILE_H_
#define OPSCOPE_ANALYZE_IMPORTERS_JSON_FILE_H_

#include <simdjson.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "analyze/source.h"

namespace opscope::analyze {

// All of `source`; throws Error(kInvalidInput) naming the file when it is
// larger than `max_bytes` ("larger than N MiB: not {what}").
std::string ReadWholeFile(Source& source, size_t max_bytes, std::string_view what);

// `source` parsed by `parser` (the document lives in it). Throws
// Error(kInvalidInput) naming the file when it is larger than `max_bytes`
// ("larger than N MiB: not {what}") or not JSON.
simdjson::dom::element ReadJsonFile(Source& source, simdjson::dom::parser& parser, size_t max_bytes,
                                    std::string_view what);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_JSON_FILE_H_
