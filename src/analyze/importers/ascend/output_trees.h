// The output trees of Ascend's profilers in a folder (../shared/docs/formats/ascend.md,
// section 1), as a registered tree finder (trace_inputs.h):
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
// it, each given the role of the side-file reader whose file names it matches
// (side_file_readers.h), plus those found elsewhere: the AI Core metrics and L2
// cache of kernel_details.csv / op_summary, analysis.db, profiler_metadata.json
// and the device's info.json. Every other file found is listed once with the
// reason it is not read. msprof-analyze's cluster output is not a timeline: a
// folder holding only that is an error that says what to give instead.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_OUTPUT_TREES_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_OUTPUT_TREES_H_

#include "analyze/trace_inputs.h"

namespace opscope::analyze {

// Its entry in the table of tree finders.
TreeFinder AscendTreeFinder();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_OUTPUT_TREES_H_
