#include "analyze/importers/ascend/side_file_readers.h"

#include <memory>
#include <optional>
#include <string>

#include "analyze/importers/ascend/ai_core.h"
#include "analyze/importers/ascend/communication.h"
#include "analyze/importers/ascend/db_importer.h"
#include "analyze/importers/ascend/device_info.h"
#include "analyze/importers/ascend/kernel_details_importer.h"
#include "analyze/importers/ascend/memory.h"
#include "analyze/importers/ascend/parallel_groups.h"
#include "analyze/importers/ascend/step_trace_time.h"
#include "analyze/importers/ascend/summaries.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr std::string_view kAiCoreMetrics = "ai_core_metrics";
constexpr std::string_view kL2Cache = "l2_cache";

// The fused pipeline's outcome: the table, or why there is none (the tasks
// stand either way), and an l2_cache.csv that could not be read.
void Keep(KernelDetailsPipeline& fused, const std::string& metrics, RankFiles& files,
          TraceModel& model) {
  if (!fused.l2_error.empty()) files.CouldNotRead(files.Path(kL2Cache), fused.l2_error);
  if (fused.table) {
    model.reported.pipes = std::move(fused.table);
  } else if (!fused.error.empty()) {
    files.CouldNotRead(metrics, fused.error);
  }
}

// The l2_cache.csv beside the metrics, opened for the fused pipeline; when it
// cannot be opened the pipeline goes on without L2 rates.
std::unique_ptr<Source> OpenL2(RankFiles& files, KernelDetailsPipeline& fused) {
  const std::string& l2 = files.Path(kL2Cache);
  if (l2.empty()) return nullptr;
  try {
    auto source = Source::Open(l2);
    fused.l2_cache = source.get();
    return source;
  } catch (const Error& e) {
    fused.l2_error = e.what();
    return nullptr;
  }
}

// kernel_details.csv (or op_summary) beside a timeline that is not that file
// (trace_view.json, msprof_*.json): the timeline takes the shapes, data types
// and formats of the same tasks from it, and the pipeline comes in the same
// pass; the SQLite export's TASK_PMU_INFO; or the timeline's own file read
// again where its importer did not build the pipeline.
void ReadAiCoreMetrics(RankFiles& files, TraceModel& model) {
  const std::string& metrics = files.Path(kAiCoreMetrics);
  if (metrics.empty()) return;  // an l2_cache.csv alone says nothing
  if (metrics.ends_with(".db")) {
    model.reported.pipes = ReadDbPipeline(metrics);
    return;
  }
  if (metrics != files.timeline()) {
    const auto details = Source::Open(metrics);
    KernelDetailsPipeline fused;
    const auto l2 = OpenL2(files, fused);
    EnrichFromKernelDetails(*details, model, &fused);
    Keep(fused, metrics, files, model);
    return;
  }
  const auto source = Source::Open(metrics);
  std::unique_ptr<Source> l2;
  if (!files.Path(kL2Cache).empty()) l2 = Source::Open(files.Path(kL2Cache));
  model.reported.pipes = ReadAiCorePipeline(*source, l2.get());
}

template <auto Read>
void Into(std::string_view role, RankFiles& files, auto& table) {
  const auto source = Source::Open(files.Path(role));
  table = Read(*source);
}

}  // namespace

void ImportKernelDetailsRank(Source& source, RankFiles& files, TraceModel& model) {
  const std::string& metrics = files.Path(kAiCoreMetrics);
  if (!metrics.empty() && (metrics != files.timeline() || metrics.ends_with(".db"))) {
    ImportKernelDetails(source, model);
    return;
  }
  KernelDetailsPipeline fused;
  const auto l2 = OpenL2(files, fused);
  ImportKernelDetails(source, model, &fused);
  Keep(fused, metrics.empty() ? files.timeline() : metrics, files, model);
  files.Done(kAiCoreMetrics);
}

std::vector<SideFileReader> AscendSideFileReaders() {
  return {
      {"step_trace_time",
       {{"step_trace_time", {"step_trace_time.csv"}}},
       "torch_npu's step_trace_time.csv: each step's computing, communication (not) overlapped, "
       "free, bubble and preparing time -> steps",
       [](RankFiles& f, TraceModel& m) {
         Into<ReadStepTraceTime>("step_trace_time", f, m.reported.steps);
       }},
      {"communication",
       {{"communication", {"communication.json"}}},
       "communication.json: each collective's elapse, transit, wait, synchronisation and idle "
       "time, and bytes per transport -> collectives",
       [](RankFiles& f, TraceModel& m) {
         Into<ReadCommunication>("communication", f, m.reported.collectives);
       }},
      {"communication_matrix",
       {{"communication_matrix", {"communication_matrix.json"}}},
       "communication_matrix.json: bytes and time per link between two ranks -> links",
       [](RankFiles& f, TraceModel& m) {
         Into<ReadCommunicationMatrix>("communication_matrix", f, m.reported.links);
       }},
      {"ai_core_metrics",
       {{kAiCoreMetrics, {}}, {kL2Cache, {}}},
       "kernel_details.csv / op_summary_*.csv (PMU columns) and l2_cache.csv, or the SQLite "
       "export's TASK_PMU_INFO: each operator's pipe ratios and L2 rates -> pipes; the "
       "timeline's shapes, data types and formats from kernel_details.csv",
       ReadAiCoreMetrics},
      {"memory",
       {{"operator_memory", {"operator_memory.csv", "operator_memory_*.csv"}},
        {"memory_record", {"memory_record.csv", "memory_record_*.csv"}}},
       "operator_memory.csv and memory_record.csv: the peak, the operators holding memory at "
       "it, and each component's peak -> memory",
       [](RankFiles& f, TraceModel& m) {
         std::unique_ptr<Source> ops, record;
         if (!f.Path("operator_memory").empty()) ops = Source::Open(f.Path("operator_memory"));
         if (!f.Path("memory_record").empty()) record = Source::Open(f.Path("memory_record"));
         m.reported.memory = ReadAscendMemory(ops.get(), record.get());
       }},
      {"device_info",
       {{"device_info", {}}},
       "a CANN run's device_{id}/info.json.{id}: the AI Core count and clock, and the peaks "
       "they give -> chip",
       [](RankFiles& f, TraceModel& m) {
         const auto source = Source::Open(f.Path("device_info"));
         m.reported.chip = ReadDeviceInfo(*source);
       }},
      {"profiler_metadata",
       {{"profiler_metadata", {"profiler_metadata.json"}}},
       "profiler_metadata.json's parallel_group_info: each communication group's role and "
       "global ranks -> groups; its ENV_VARIABLES -> environment",
       [](RankFiles& f, TraceModel& m) {
         ProfilerMetadata metadata;
         Into<ReadProfilerMetadata>("profiler_metadata", f, metadata);
         m.reported.groups = std::move(metadata.groups);
         m.reported.environment = std::move(metadata.environment);
         m.reported.environment_source = f.Path("profiler_metadata");
       }},
      {"op_statistic",
       {{"op_statistic", {"op_statistic.csv", "op_statistic_*.csv"}}},
       "op_statistic.csv: count and time per operator type and core type -> summaries",
       [](RankFiles& f, TraceModel& m) {
         Into<ReadTypeStatistic>("op_statistic", f, m.reported.summaries.op_types);
         m.reported.summaries.op_types_source = f.Path("op_statistic");
       }},
      {"communication_statistic",
       {{"communication_statistic", {"communication_statistic_*.csv", "hccl_statistic_*.csv"}}},
       "communication_statistic_*.csv: count and time per collective type -> summaries",
       [](RankFiles& f, TraceModel& m) {
         Into<ReadTypeStatistic>("communication_statistic", f,
                                 m.reported.summaries.communication_types);
         m.reported.summaries.communication_types_source = f.Path("communication_statistic");
       }},
      {"api_statistic",
       {{"api_statistic", {"api_statistic.csv", "api_statistic_*.csv"}}},
       "api_statistic.csv: host API calls per level -> summaries",
       [](RankFiles& f, TraceModel& m) {
         Into<ReadApiStatistic>("api_statistic", f, m.reported.summaries.apis);
         m.reported.summaries.apis_source = f.Path("api_statistic");
       }},
      {"operator_details",
       {{"operator_details", {"operator_details.csv"}}},
       "operator_details.csv: framework operators' host and device time -> summaries",
       [](RankFiles& f, TraceModel& m) {
         Into<ReadOperatorDetails>("operator_details", f, m.reported.summaries.framework_ops);
         m.reported.summaries.framework_ops_source = f.Path("operator_details");
       }},
      {"module_memory",
       {{"module_memory", {"npu_module_mem.csv", "npu_module_mem_*.csv"}}},
       "npu_module_mem.csv: memory reserved per driver module, at its peak -> summaries",
       [](RankFiles& f, TraceModel& m) {
         Into<ReadModuleMemory>("module_memory", f, m.reported.summaries.module_memory);
         m.reported.summaries.module_memory_source = f.Path("module_memory");
       }},
      {"npu_memory",
       {{"npu_memory", {"npu_mem_*.csv"}}},
       "npu_mem_*.csv: the process's and the device's memory, at its peak -> summaries",
       [](RankFiles& f, TraceModel& m) {
         Into<ReadNpuMemory>("npu_memory", f, m.reported.summaries.device_memory);
         m.reported.summaries.device_memory_source = f.Path("npu_memory");
       }},
      {"iterations",
       {{"iterations", {"step_trace_*.csv"}}},
       "msprof's step_trace_*.csv: graph-mode iterations -> summaries",
       [](RankFiles& f, TraceModel& m) {
         Into<ReadIterations>("iterations", f, m.reported.summaries.iterations);
         m.reported.summaries.iterations_source = f.Path("iterations");
       }},
      {"analysis_db",
       {{"analysis_db", {}}},
       "analysis.db / communication_analyzer.db (an export_type=db run): steps, collectives "
       "and links where the text files left them empty",
       [](RankFiles& f, TraceModel& m) {
         AscendAnalysisDb db = ReadAnalysisDb(f.Path("analysis_db"));
         ReportedTables& r = m.reported;
         if (r.steps.empty()) r.steps = std::move(db.steps);
         if (r.collectives.empty()) r.collectives = std::move(db.collectives);
         if (r.links.empty()) r.links = std::move(db.links);
       }},
  };
}

}  // namespace opscope::analyze
