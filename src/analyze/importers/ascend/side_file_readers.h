// The side files of torch_npu's and msprof's output trees (docs/formats/ascend.md, sections
// 3 and 5), each a registered side-file reader (side_files.h) that lowers its
// file into the model's reported tables (reported.h). The roles are the names
// trace_inputs.cc gives the files it finds beside a rank's timeline:
//
//   step_trace_time        step_trace_time.csv                      -> steps
//   communication          communication.json                       -> collectives
//   communication_matrix   communication_matrix.json                -> links
//   ai_core_metrics        kernel_details.csv / op_summary_*.csv /  -> pipes (and the
//    (+ l2_cache)           the SQLite export; l2_cache.csv           timeline's shapes)
//   operator_memory,       operator_memory.csv, memory_record.csv   -> memory
//    memory_record          (msprof's *_{timestamp}.csv too)
//   device_info            PROF_*/device_{id}/info.json.{id}        -> chip
//   profiler_metadata      profiler_metadata.json                   -> groups
//   op_statistic, communication_statistic, api_statistic,           -> summaries
//   operator_details, module_memory, npu_memory, iterations
//   analysis_db            analysis.db / communication_analyzer.db  -> steps, collectives and
//                                                                      links where the text
//                                                                      files left them empty
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_SIDE_FILE_READERS_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_SIDE_FILE_READERS_H_

#include <vector>

#include "analyze/side_files.h"
#include "analyze/source.h"

namespace opscope::analyze {

// Each Ascend reader, in the order they run (analysis_db last: it fills only
// what the text files did not).
std::vector<SideFileReader> AscendSideFileReaders();

// The kernel_details.csv importer's rank form: the AI Core pipeline of
// kernel_details.csv (or op_summary) built in the same pass as its tasks when
// the rank's ai_core_metrics is that file (or none is named: a file known by
// its content only), which it marks Done.
void ImportKernelDetailsRank(Source& source, RankFiles& files, TraceModel& model);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_SIDE_FILE_READERS_H_
