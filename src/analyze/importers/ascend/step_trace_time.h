// torch_npu's step_trace_time.csv (ascend.md, 3.4): per device and step, the
// time the NPU spent computing, communicating without and with overlap, free,
// in pipeline bubbles (hcom_receive) and preparing (from the framework step's
// start to the first device task). Values are microseconds; the columns are
// found by name (Device_id and Preparing are absent in older releases).
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_STEP_TRACE_TIME_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_STEP_TRACE_TIME_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/source.h"

namespace opscope::analyze {

struct AscendStepTime {
  std::string device;  // Device_id; empty in older files
  std::string step;    // empty when the run had no schedule steps
  // Nanoseconds; -1 where the column is absent or the value is N/A.
  int64_t computing_ns = -1;
  int64_t communication_ns = -1;
  int64_t comm_not_overlapped_ns = -1;  // communication during which nothing computed
  int64_t overlapped_ns = -1;           // communication - comm_not_overlapped
  int64_t free_ns = -1;                 // neither computing nor communicating
  int64_t stage_ns = -1;
  int64_t bubble_ns = -1;
  int64_t preparing_ns = -1;

  // The step's wall time as msprof-analyze composes it: computing +
  // communication not overlapped + free; -1 when one of them is absent.
  int64_t StepNs() const;
};

// Throws Error(kInvalidInput) naming the file, line and column of a bad value,
// or a header without Step and Computing.
std::vector<AscendStepTime> ReadStepTraceTime(Source& source);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_STEP_TRACE_TIME_H_
