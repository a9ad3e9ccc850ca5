// Kineto's own log of a recording: libkineto's logger collector writes the
// lines of each severity it kept as a top-level array of the trace ("INFO",
// "WARNING", "ERROR"; each line "SEVERITY:date time pid:tid file:line] text",
// libkineto/src/Logger.cpp). Its warnings and errors are said in the report
// (TraceModel::import_notes), each distinct text once with how often; two of
// them say device activity is missing, and are said so: CUPTI's buffers
// filled and Kineto stopped recording ("Exceeded max GPU buffer count (N >=
// M) - terminating tracing", CuptiActivityApi::bufferRequested), and CUPTI
// dropped records ("Dropped N activity records", bufferCompleted, logged in
// verbose mode).
#ifndef OPSCOPE_ANALYZE_IMPORTERS_CHROME_JSON_KINETO_LOG_H_
#define OPSCOPE_ANALYZE_IMPORTERS_CHROME_JSON_KINETO_LOG_H_

#include <map>
#include <string>

#include "analyze/trace_model.h"

namespace opscope::analyze {

// `members`: the trace's top-level members other than its events, as raw
// JSON (JsonEventReader's). Lines that are not strings are left aside.
void ReadKinetoLog(const std::map<std::string, std::string>& members, TraceModel& model);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_CHROME_JSON_KINETO_LOG_H_
