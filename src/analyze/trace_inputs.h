// Which files of the inputs `opscope analyze` reads, and as which rank.
//
// Files named directly are read as given. A folder is searched (a few levels
// deep) for the output trees of Ascend's profilers (../shared/formats/ascend.md,
// section 1):
// - a torch_npu `{worker}_{timestamp}_ascend_pt` or MindSpore `_ascend_ms`
//   folder, its parent holding many ranks, or its `ASCEND_PROFILER_OUTPUT`
//   alone: one rank each, the rank taken from `profiler_info_{rank}.json`'s
//   name (msprof-analyze's rule), else its `rank_id` key, else the SQLite
//   export's name `ascend_pytorch_profiler_{rank}.db`;
// - an msprof `PROF_*` folder: its `mindstudio_profiler_output/msprof_*.json`,
//   else its `op_summary_*.csv`, else its `task_time_*.csv`, else its
//   `msprof_*.db`; the rank from `device_*/info.json.{N}`'s `rank_id`.
// One file is the timeline of a rank (`trace_view.json`, else
// `kernel_details.csv`, which holds the same kernels without the host side, else
// `task_time.csv`, else the SQLite export), with the rank's other files beside
// it: step_trace_time, communication, memory, AI Core metrics, and the
// summaries (op_statistic, api_statistic, operator_details, module memory;
// msprof's communication_statistic, npu_mem and step_trace too). Every other
// file found is listed once with the reason it is not read, never an error.
// When two runs claim one rank, the newest (by the timestamp in the folder's
// name) is read, as msprof-analyze does.
//
// A folder without any of those trees is a folder of trace files, one per
// rank: every file whose name an importer reads (importer.h).
#ifndef OPSCOPE_ANALYZE_TRACE_INPUTS_H_
#define OPSCOPE_ANALYZE_TRACE_INPUTS_H_

#include <string>
#include <vector>

namespace opscope::analyze {

struct TraceInput {
  std::string path;         // the file to import ("-": standard input)
  int rank = -1;            // -1: not known from the files around it
  std::string rank_source;  // what the rank was read from, e.g. "profiler_info_3.json"
  // The same rank's step_trace_time.csv (torch_npu), read beside the timeline.
  std::string step_trace_time;
  // The same rank's per-task PMU figures: kernel_details.csv (torch_npu) or
  // op_summary_*.csv (msprof), and l2_cache.csv; read for the AI Core pipeline.
  std::string ai_core_metrics;
  std::string l2_cache;
  // The same rank's communication.json and communication_matrix.json.
  std::string communication;
  std::string communication_matrix;
  // analysis.db / communication_analyzer.db: steps and communication, read when
  // the text files for them are absent (an export_type=db run).
  std::string analysis_db;
  // operator_memory.csv and memory_record.csv (profile_memory=True), or
  // msprof's operator_memory_*.csv and memory_record_*.csv.
  std::string operator_memory;
  std::string memory_record;
  // The summaries beside the timeline (importers/ascend/summaries.h), torch_npu's
  // names or msprof's: op_statistic, communication_statistic, api_statistic,
  // operator_details, npu_module_mem, npu_mem and step_trace (graph-mode
  // iterations).
  std::string op_statistic;
  std::string communication_statistic;
  std::string api_statistic;
  std::string operator_details;
  std::string module_memory;
  std::string npu_memory;
  std::string iterations;
  // profiler_metadata.json beside the rank's output: its communication groups
  // (parallel_groups.h), for the global ranks of its links.
  std::string profiler_metadata;
  // A CANN run's device_{id}/info.json.{id} (under the rank's PROF_* folder):
  // the chip's AI Core count and clock, for the roofline's peaks.
  std::string device_info;
};

struct UnusedFile {
  std::string path;
  std::string reason;
};

struct TraceInputs {
  std::vector<TraceInput> traces;  // known ranks in rank order first, then the rest as found
  std::vector<UnusedFile> unused;  // sorted by path
};

// Throws Error(kIo) when a folder cannot be listed, Error(kInvalidInput) for a
// folder holding nothing opscope reads (naming what it looked for).
TraceInputs FindTraceInputs(const std::vector<std::string>& inputs);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_TRACE_INPUTS_H_
