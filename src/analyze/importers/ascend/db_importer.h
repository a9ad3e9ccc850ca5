// The SQLite exports of Ascend's profilers (docs/formats/ascend.md, section 4): the rank's
// `ascend_pytorch_profiler_{rank}.db` (msprof's database renamed, plus
// torch_npu's framework tables), MindSpore's `ascend_mindspore_profiler_*.db`,
// msprof's `msprof_*.db`, and the summaries in `analysis.db` /
// `communication_analyzer.db`.
//
// What is read, by the join recipes of docs/formats/ascend.md 4.5, so that the database and
// the text files of one run give the same figures:
// - device work as kernel_details.csv lists it: COMPUTE_TASK_INFO joined with
//   TASK (name, op type, core type, stream, blocks; ns times), and the
//   communication operations of COMMUNICATION_OP;
// - host work: PYTORCH_API operators (type "op" in ENUM_API_TYPE; their TEXT
//   times cast), CANN_API calls (runtime; connectionId links a launch to its
//   tasks, as the correlation id), STEP_TIME as ProfilerStep#N spans;
// - TASK_PMU_INFO pivoted per task for the AI Core pipeline (ai_core.h);
// - analysis.db: StepTraceTime (microseconds: the code divides ns by 1000,
//   whatever the documentation says), CommAnalyzerTime / Bandwidth / Matrix
//   (ms, MB and GB/s as communication.json).
// Unknown tables and columns (MindStudio Insight adds some) are ignored.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_DB_IMPORTER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_DB_IMPORTER_H_

#include <string>
#include <vector>

#include "analyze/importer.h"
#include "analyze/importers/ascend/ai_core.h"
#include "analyze/importers/ascend/communication.h"
#include "analyze/importers/ascend/step_trace_time.h"

namespace opscope::analyze {

Importer AscendDbImporter();
bool SniffAscendDb(Source& source);
// Throws Error(kInvalidInput) naming the file for a database that SQLite
// cannot read or that lacks STRING_IDS and TASK, and Error(kUnsupported) for a
// database that is not a plain file (a pipe, a gzip: SQLite needs the file).
void ImportAscendDb(Source& source, TraceModel& model);

// The AI Core pipeline per operator from the database's TASK_PMU_INFO.
PipeTable ReadDbPipeline(const std::string& path);

struct AscendAnalysisDb {
  std::vector<ReportedStep> steps;
  std::vector<ReportedCollective> collectives;
  std::vector<ReportedLink> links;
};
AscendAnalysisDb ReadAnalysisDb(const std::string& path);

// True for the names of a rank's trace database (not analysis.db).
bool IsAscendTraceDbName(const std::string& file_name);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_DB_IMPORTER_H_
