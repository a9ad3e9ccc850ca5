// Times as trace files write them, for every importer: microseconds in decimal
// text to integer nanoseconds, exactly, and the range every time must lie in.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_TIMESTAMPS_H_
#define OPSCOPE_ANALYZE_IMPORTERS_TIMESTAMPS_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace opscope::analyze {

// The largest time or duration accepted, in nanoseconds (about 126 years): any
// sum or difference of two stays within int64.
constexpr int64_t kMaxTimeNs = 4000000000000000000;

// Microseconds as JSON or CSV writes them ("12", "12.3456", "1.2e3"), to integer
// nanoseconds, exactly when there are at most 3 decimals (more are rounded half
// up); false for anything else or a value beyond kMaxTimeNs.
bool MicrosToNs(std::string_view text, int64_t& ns);

// For a text MicrosToNs refused: whether it is a number all the same, only one
// beyond kMaxTimeNs (or beyond a double), so that its error can say "out of
// range" rather than "not a time".
bool MicrosOutOfRange(std::string_view text);

// The words for a refused time: "out of range (beyond 4e18 ns, about 126
// years)" or `otherwise` ("not a time").
std::string WhyNotMicros(std::string_view text, std::string_view otherwise);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_TIMESTAMPS_H_
