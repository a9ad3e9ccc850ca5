// The summary files of an Ascend run that are not a timeline (ascend.md 3.3,
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
// Sizes: KB = 1024 bytes, MB = 1024 KB (ascend.md 2.4). Times: microseconds in
// the files, nanoseconds here.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_SUMMARIES_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_SUMMARIES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/source.h"

namespace opscope::analyze {

// One row of op_statistic or communication_statistic. -1: absent (N/A).
struct AscendTypeStat {
  std::string device;     // Device_id; empty in older files
  std::string op_type;    // OP Type
  std::string core_type;  // Core Type (op_statistic only): AI_CORE, AI_VECTOR_CORE, AI_CPU, ...
  int64_t count = -1;
  int64_t total_ns = -1, min_ns = -1, avg_ns = -1, max_ns = -1;
  double ratio_pct = -1;  // the type's share of the file's total, as the file says
};

// One row of api_statistic.
struct AscendApiStat {
  std::string device;  // Device_id ("host" for host APIs); empty in older files
  std::string level;   // acl, runtime, node, model, hccl / communication
  std::string api;
  int64_t total_ns = -1, count = -1, avg_ns = -1, min_ns = -1, max_ns = -1;
};

// A framework operator of operator_details.csv, its rows (one per input shapes
// and call stack) summed.
struct AscendFrameworkOp {
  std::string name;
  int64_t rows = 0;
  int64_t host_self_ns = 0, host_total_ns = 0;
  int64_t device_self_ns = 0, device_total_ns = 0;
  int64_t device_self_aicore_ns = 0, device_total_aicore_ns = 0;
};

// The highest value a memory series reached, and when.
struct AscendMemoryPeak {
  std::string device;  // Device_id or Device ("NPU:0")
  std::string name;    // the component (npu_module_mem) or event and kind (npu_mem: "app hbm")
  int64_t peak_bytes = -1, peak_ns = -1;
  int64_t samples = 0;
};

// A graph-mode iteration of step_trace_*.csv; -1 where N/A.
struct AscendIteration {
  std::string device, model_id, iteration;
  int64_t iteration_ns = -1;  // Iteration Time(us)
  int64_t fp_to_bp_ns = -1;   // FP to BP Time(us): forward and backward
  int64_t refresh_ns = -1;    // Iteration Refresh(us): the update after BP
  int64_t data_aug_ns = -1;   // Data Aug Bound(us): waiting for data before FP
};

// A rank's summaries, each with the file it came from; empty where the rank
// has no such file.
struct AscendSummaries {
  std::vector<AscendTypeStat> op_types;
  std::string op_types_source;
  std::vector<AscendTypeStat> communication_types;
  std::string communication_types_source;
  std::vector<AscendApiStat> apis;
  std::string apis_source;
  std::vector<AscendFrameworkOp> framework_ops;
  std::string framework_ops_source;
  std::vector<AscendMemoryPeak> module_memory;
  std::string module_memory_source;
  std::vector<AscendMemoryPeak> npu_memory;
  std::string npu_memory_source;
  std::vector<AscendIteration> iterations;
  std::string iterations_source;
};

// Each throws Error(kInvalidInput) naming the file for a header without the
// columns that make the file what it is, and the line, column and text of a
// value that is not what its column holds. Rows are kept in the file's order,
// except operator_details (the operators by device self time, the largest
// first) and memory (by device, then the highest peak first).
std::vector<AscendTypeStat> ReadTypeStatistic(Source& source);
std::vector<AscendApiStat> ReadApiStatistic(Source& source);
std::vector<AscendFrameworkOp> ReadOperatorDetails(Source& source);
std::vector<AscendMemoryPeak> ReadModuleMemory(Source& source);
std::vector<AscendMemoryPeak> ReadNpuMemory(Source& source);
std::vector<AscendIteration> ReadIterations(Source& source);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_SUMMARIES_H_
