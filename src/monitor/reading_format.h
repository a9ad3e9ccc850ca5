// A reading as the streams of `opscope smi --watch` write it: one JSON object
// per line (schema and tool version, index, time, every metric with its unit,
// or why it is unavailable), or a header and a line of columns (table or CSV).
#ifndef OPSCOPE_MONITOR_READING_FORMAT_H_
#define OPSCOPE_MONITOR_READING_FORMAT_H_

#include <string>

#include "monitor/watch.h"

namespace opscope::monitor {

// `time_s`: seconds since the stream began.
std::string ReadingJsonLine(const Reading& reading, double time_s);
std::string ReadingHeader(const Reading& first, bool csv);
std::string ReadingLine(const Reading& reading, double time_s, bool csv);

// The device label of a metric ("cpu", "cuda:0").
std::string DeviceOf(const Metric& metric);

}  // namespace opscope::monitor

#endif  // OPSCOPE_MONITOR_READING_FORMAT_H_
