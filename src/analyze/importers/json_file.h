// JSON files read whole: those beside an Ascend timeline (communication summaries,
// profiler_metadata.json, a device's info.json) and rocprofv3's JSON output.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_JSON_FILE_H_
#define OPSCOPE_ANALYZE_IMPORTERS_JSON_FILE_H_

#include <simdjson.h>

#include <cstddef>
#include <string_view>

#include "analyze/source.h"

namespace opscope::analyze {

// `source` parsed by `parser` (the document lives in it). Throws
// Error(kInvalidInput) naming the file when it is larger than `max_bytes`
// ("larger than N MiB: not {what}") or not JSON.
simdjson::dom::element ReadJsonFile(Source& source, simdjson::dom::parser& parser, size_t max_bytes,
                                    std::string_view what);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_JSON_FILE_H_
