// torch_npu's profiler_info_{rank}.json (docs/formats/ascend.md 1.5): how the run was
// recorded. Its config.common_config (activities, schedule, record_shapes,
// profile_memory, with_stack, with_flops, with_modules) and
// config.experimental_config (profiler level, AI Core metrics, L2 cache,
// export type, ...) and, in newer releases, torch_npu_version and
// cann_version. A side-file reader whose whole analysis is its own files:
// it keeps its settings in a type of its own (ReportedTables::own) and
// brings the table that shows them ("recording"), registered with one line
// in importers/registry.cc (docs/seams.md).
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_PROFILER_INFO_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_PROFILER_INFO_H_

#include <string>
#include <vector>

#include "analyze/side_files.h"
#include "analyze/source.h"

namespace opscope::analyze {

// One of the producer's recording settings as it wrote it: what it collected
// (activities, shapes, memory, stacks, modules, hardware counters), its
// level, schedule and export, its versions. Keys are the producer's, its own
// decoration (leading '_') dropped; values its text (lists joined with ", ",
// objects as "key=value, ...").
struct RecordingSetting {
  std::string key;
  std::string value;
};

// How the run was recorded: the reader's value in ReportedTables::own.
struct Recording {
  std::string source;
  std::vector<RecordingSetting> settings;  // in the file's order
};

// Throws Error(kInvalidInput) naming the file for text that is not JSON, a
// file over 16 MiB, or one without a `config` object.
Recording ReadProfilerInfo(Source& source);

// Its entry in the table of side-file readers (role "profiler_info":
// profiler_info.json, profiler_info_*.json in the rank's folder), with its
// table, "recording".
SideFileReader ProfilerInfoReader();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_PROFILER_INFO_H_
