// torch_npu's step_trace_time.csv (docs/formats/ascend.md, 3.4): per device and step, the
// time the NPU spent computing, communicating without and with overlap, free,
// in pipeline bubbles (hcom_receive) and preparing (from the framework step's
// start to the first device task). Values are microseconds; the columns are
// found by name (Device_id and Preparing are absent in older releases).
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_STEP_TRACE_TIME_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_STEP_TRACE_TIME_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/importer.h"
#include "analyze/reported.h"
#include "analyze/source.h"

namespace opscope::analyze {

// Throws Error(kInvalidInput) naming the file, line and column of a bad value,
// or a header without Step and Computing.
std::vector<ReportedStep> ReadStepTraceTime(Source& source);

// A rank that left only its summaries (step_trace_time.csv and its
// communication files, what msprof-analyze's cluster analysis reads) is a
// rank too (issue 38): this importer makes step_trace_time.csv the "timeline"
// of such a rank, a model without events (format "ascend-step-trace"), and
// its side-file reader (role step_trace_time, the same file) and the other
// summaries' readers give the rank its tables. Sniffed by the header: Step,
// Computing and Communication(Not Overlapped).
Importer StepTraceTimeImporter();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_STEP_TRACE_TIME_H_
