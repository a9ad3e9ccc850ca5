// The summary files of an Ascend run that are not a timeline (docs/formats/ascend.md 3.3,
// 3.7-3.10 and 5.2): what each holds that the timeline does not, read by column
// name from torch_npu's ASCEND_PROFILER_OUTPUT copies and msprof's
// mindstudio_profiler_output originals alike.
//
// - op_statistic.csv / op_statistic_*.csv: per operator type and core type,
//   the count and the total, min, mean and max task time (the file's own
//   totals, to set beside the timeline's);
// - communication_statistic_*.csv (hccl_statistic_*.csv before): the same per
//   collective type;
// - api_statistic.csv / api_statistic_*.csv: host API calls per level (acl,
//   runtime, node, model, hccl): where online operator compilation
//   (aclopCompile*) shows when the timeline has no CANN layer (Level0);
// - operator_details.csv: framework operators with their host and device time,
//   summed per operator name;
// - npu_module_mem.csv (MB) / npu_module_mem_*.csv (KB) and npu_mem_*.csv (KB):
//   memory reserved per driver module, and the process's and device's memory,
//   each at its peak;
// - step_trace_*.csv: graph-mode iterations (FP/BP, refresh, data wait).
// Sizes: KB = 1024 bytes, MB = 1024 KB (docs/formats/ascend.md 2.4). Times: microseconds in
// the files, nanoseconds here.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_SUMMARIES_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_SUMMARIES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/reported.h"
#include "analyze/source.h"

namespace opscope::analyze {

// Each throws Error(kInvalidInput) naming the file for a header without the
// columns that make the file what it is, and the line, column and text of a
// value that is not what its column holds. Rows are kept in the file's order,
// except operator_details (the operators by device self time, the largest
// first) and memory (by device, then the highest peak first).
std::vector<ReportedTypeStat> ReadTypeStatistic(Source& source);
std::vector<ReportedApiStat> ReadApiStatistic(Source& source);
std::vector<ReportedOp> ReadOperatorDetails(Source& source);
std::vector<ReportedMemoryPeak> ReadModuleMemory(Source& source);
std::vector<ReportedMemoryPeak> ReadNpuMemory(Source& source);
std::vector<ReportedIteration> ReadIterations(Source& source);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_SUMMARIES_H_
