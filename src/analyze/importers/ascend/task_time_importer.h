// Importer for msprof's task_time_*.csv (and the task_time.csv torch_npu
// copies; docs/formats/ascend.md 3.10, 5.2): every device task of the run, compute or not,
// with its kernel name (N/A for a task that is not a kernel), kernel type
// (KERNEL_AICORE, KERNEL_AIVEC, KERNEL_AICPU, or the task's own type such as
// MEMCPY_ASYNC, EVENT_RECORD), stream, start and stop in microseconds. It is the
// timeline of a run that has neither msprof_*.json nor op_summary_*.csv.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_TASK_TIME_IMPORTER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_TASK_TIME_IMPORTER_H_

#include "analyze/importer.h"
#include "analyze/source.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

// Its entry in the importer table.
Importer TaskTimeImporter();

// True when the header line names kernel_name, kernel_type and task_start(us).
bool SniffTaskTime(Source& source);
// Throws Error(kInvalidInput) naming the line and column of a bad value.
void ImportTaskTime(Source& source, TraceModel& model);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_TASK_TIME_IMPORTER_H_
