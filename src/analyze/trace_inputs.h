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
#include <string_view>
#include <vector>

namespace opscope::analyze {

// A file of a rank beside its timeline, and the role it plays: the side-file
// reader (side_files.h) that reads it, or a companion file that reader also
// reads ("l2_cache" beside "ai_core_metrics").
struct SideFile {
  std::string role;
  std::string path;
};

struct TraceInput {
  std::string path;         // the file to import ("-": standard input)
  int rank = -1;            // -1: not known from the files around it
  std::string rank_source;  // what the rank was read from, e.g. "profiler_info_3.json"
  // The same rank's other files, found beside the timeline; one per role.
  std::vector<SideFile> files;

  // The file of a role; "" none.
  const std::string& File(std::string_view role) const;
  // Sets (or replaces) the file of a role.
  void SetFile(std::string_view role, std::string file);
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
