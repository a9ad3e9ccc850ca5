// torch_npu's profiler_info_{rank}.json (docs/formats/ascend.md 1.5): how the run was
// recorded. Its config.common_config (activities, schedule, record_shapes,
// profile_memory, with_stack, with_flops, with_modules) and
// config.experimental_config (profiler level, AI Core metrics, L2 cache,
// export type, ...) and, in newer releases, torch_npu_version and
// cann_version, lowered into the reported recording settings (reported.h).
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_PROFILER_INFO_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_PROFILER_INFO_H_

#include "analyze/reported.h"
#include "analyze/side_files.h"
#include "analyze/source.h"

namespace opscope::analyze {

// Throws Error(kInvalidInput) naming the file for text that is not JSON, a
// file over 16 MiB, or one without a `config` object.
ReportedRecording ReadProfilerInfo(Source& source);

// Its entry in the table of side-file readers (role "profiler_info":
// profiler_info.json, profiler_info_*.json in the rank's folder).
SideFileReader ProfilerInfoReader();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_PROFILER_INFO_H_
