// Opens a trace in any format opscope reads: sniffs the format, picks the
// importer, and says clearly when none fits.
#ifndef OPSCOPE_ANALYZE_IMPORTER_H_
#define OPSCOPE_ANALYZE_IMPORTER_H_

#include <filesystem>

#include "analyze/trace_model.h"

namespace opscope::analyze {

// Throws Error(kIo) when unreadable, Error(kUnsupported) for an unknown format,
// Error(kInvalidInput) with the byte offset for malformed content.
TraceModel ImportTrace(const std::filesystem::path& path);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTER_H_
