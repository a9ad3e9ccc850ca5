#include "analyze/analyze_files.h"

#include <algorithm>
#include <chrono>

#include "analyze/importer.h"
#include "analyze/importers/ascend/db_importer.h"
#include "analyze/importers/ascend/device_info.h"
#include "analyze/importers/ascend/kernel_details_importer.h"
#include "analyze/pipeline.h"
#include "analyze/trace_inputs.h"
#include "core/ceilings.h"
#include "opscope/opscope.h"

namespace opscope::analyze {

AnalyzedTrace AnalyzeInput(const TraceInput& input, size_t position, const AnalyzeOptions& options,
                           std::vector<UnusedFile>& unused, TraceModel& model) {
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  {
    const std::string& path = input.path;
    const auto t0 = Clock::now();
    // kernel_details.csv (or op_summary) with PMU columns feeds the AI Core
    // pipeline in the same pass as its tasks, whether it is the timeline or
    // enriches trace_view.json's: a large file is read once.
    const bool csv_metrics =
        !input.ai_core_metrics.empty() && !input.ai_core_metrics.ends_with(".db");
    std::optional<KernelDetailsPipeline> fused;
    std::unique_ptr<Source> l2;
    const auto fuse = [&] {
      fused.emplace();
      if (!input.l2_cache.empty()) {
        try {
          l2 = Source::Open(input.l2_cache);
          fused->l2_cache = l2.get();
        } catch (const Error& e) {
          fused->l2_error = e.what();
        }
      }
      return &*fused;
    };
    {
      const auto source = Source::Open(path);
      const Importer* importer = FindImporter(*source);
      if (importer == nullptr) {
        model = ImportTrace(*source);  // the error that names the formats opscope reads
      } else if (importer->name == KernelDetailsImporter().name &&
                 (input.ai_core_metrics.empty() ||
                  (csv_metrics && input.ai_core_metrics == path))) {
        // Also a kernel_details.csv known by its content only (standard input,
        // a pipe, another name): the pipeline comes with its tasks.
        ImportKernelDetails(*source, model, fuse());
      } else {
        importer->import(*source, model);
      }
    }
    // A timeline beside the rank's kernel_details.csv (or op_summary) that is
    // not that file (trace_view.json, msprof_*.json: discovery pairs no other)
    // takes the shapes, data types and formats of the same tasks from it (the
    // layout and fallback rules name formats and types).
    if (csv_metrics && input.ai_core_metrics != path) {
      try {
        const auto details = Source::Open(input.ai_core_metrics);
        EnrichFromKernelDetails(*details, model, fuse());
      } catch (const Error& e) {
        fused.reset();
        unused.push_back({input.ai_core_metrics, std::string("could not be read: ") + e.what()});
      }
    }
    const auto t1 = Clock::now();
    AnalyzedTrace t;
    t.path = path;
    t.rank = input.rank >= 0 ? input.rank : static_cast<int>(position);
    // A rank's side files add tables; one that cannot be read is listed with
    // the error (file, line, column) and the rest of the analysis stands.
    const auto side_file = [&](const std::string& file, auto&& read) {
      if (file.empty()) return;
      try {
        read();
      } catch (const Error& e) {
        unused.push_back({file, std::string("could not be read: ") + e.what()});
      }
    };
    side_file(input.step_trace_time, [&] {
      const auto source = Source::Open(input.step_trace_time);
      t.ascend_steps = ReadStepTraceTime(*source);
    });
    side_file(input.communication, [&] {
      const auto source = Source::Open(input.communication);
      t.ascend_collectives = ReadCommunication(*source);
    });
    side_file(input.communication_matrix, [&] {
      const auto source = Source::Open(input.communication_matrix);
      t.ascend_links = ReadCommunicationMatrix(*source);
    });
    if (fused) {
      // An l2_cache.csv that cannot be read leaves the pipeline without L2 rates.
      if (!fused->l2_error.empty()) {
        unused.push_back({input.l2_cache, "could not be read: " + fused->l2_error});
      }
      if (fused->table) {
        t.ascend_pipeline = std::move(fused->table);
      } else if (!fused->error.empty()) {
        unused.push_back({input.ai_core_metrics.empty() ? path : input.ai_core_metrics,
                          std::string("could not be read: ") + fused->error});
      }
    }
    side_file(fused ? std::string() : input.ai_core_metrics, [&] {
      if (input.ai_core_metrics.ends_with(".db")) {
        t.ascend_pipeline = ReadDbPipeline(input.ai_core_metrics);
        return;
      }
      const auto source = Source::Open(input.ai_core_metrics);
      std::unique_ptr<Source> l2;
      if (!input.l2_cache.empty()) l2 = Source::Open(input.l2_cache);
      t.ascend_pipeline = ReadAiCorePipeline(*source, l2.get());
    });
    side_file(input.operator_memory.empty() ? input.memory_record : input.operator_memory, [&] {
      std::unique_ptr<Source> ops, record;
      if (!input.operator_memory.empty()) ops = Source::Open(input.operator_memory);
      if (!input.memory_record.empty()) record = Source::Open(input.memory_record);
      t.ascend_memory = ReadAscendMemory(ops.get(), record.get());
    });
    std::optional<AscendChip> chip;
    side_file(input.device_info, [&] {
      const auto source = Source::Open(input.device_info);
      chip = ReadDeviceInfo(*source);
    });
    side_file(input.profiler_metadata, [&] {
      const auto source = Source::Open(input.profiler_metadata);
      t.ascend_groups = ReadParallelGroups(*source);
    });
    // The summaries: each file read on its own, so one that fails leaves the others.
    AscendSummaries& sums = t.ascend_summaries;
    const auto summary = [&](const std::string& file, std::string& source, auto&& read) {
      side_file(file, [&] {
        const auto in = Source::Open(file);
        read(*in);
        source = file;
      });
    };
    summary(input.op_statistic, sums.op_types_source,
            [&](Source& in) { sums.op_types = ReadTypeStatistic(in); });
    summary(input.communication_statistic, sums.communication_types_source,
            [&](Source& in) { sums.communication_types = ReadTypeStatistic(in); });
    summary(input.api_statistic, sums.apis_source,
            [&](Source& in) { sums.apis = ReadApiStatistic(in); });
    summary(input.operator_details, sums.framework_ops_source,
            [&](Source& in) { sums.framework_ops = ReadOperatorDetails(in); });
    summary(input.module_memory, sums.module_memory_source,
            [&](Source& in) { sums.module_memory = ReadModuleMemory(in); });
    summary(input.npu_memory, sums.npu_memory_source,
            [&](Source& in) { sums.npu_memory = ReadNpuMemory(in); });
    summary(input.iterations, sums.iterations_source,
            [&](Source& in) { sums.iterations = ReadIterations(in); });
    // The database form of step_trace_time.csv and the communication files.
    side_file(input.analysis_db, [&] {
      AscendAnalysisDb db = ReadAnalysisDb(input.analysis_db);
      if (t.ascend_steps.empty()) t.ascend_steps = std::move(db.steps);
      if (t.ascend_collectives.empty()) t.ascend_collectives = std::move(db.collectives);
      if (t.ascend_links.empty()) t.ascend_links = std::move(db.links);
    });
    t.format = model.format;
    t.events = model.size();
    t.tracks = model.tracks.size();
    const auto t2 = Clock::now();
    t.analysis = AnalyzeTrace(model, {.ceilings = options.ceilings,
                                      .threads = options.threads,
                                      .passes = options.passes,
                                      .ascend_chip = chip});
    t.findings =
        Advise(RuleContext{t.analysis, options.thresholds,
                           t.ascend_pipeline ? &*t.ascend_pipeline : nullptr, &t.ascend_summaries});
    t.import_ms = ms(t1 - t0);
    t.side_files_ms = ms(t2 - t1);
    t.analysis_ms = ms(Clock::now() - t2);
    return t;
  }
}

AnalyzedSet AnalyzeFiles(const AnalyzeOptions& options) {
  AnalyzedSet out;
  std::vector<RankSummary> ranks;
  TraceInputs inputs = FindTraceInputs(options.inputs);
  out.unused = std::move(inputs.unused);
  for (const TraceInput& input : inputs.traces) {
    TraceModel model;
    AnalyzedTrace t = AnalyzeInput(input, out.traces.size(), options, out.unused, model);
    ranks.push_back(SummarizeRank(model, t.rank));
    if (options.keep_models) t.model = std::make_shared<const TraceModel>(std::move(model));
    out.traces.push_back(std::move(t));
  }
  if (ranks.size() > 1) out.ranks = CompareRanks(std::move(ranks));
  std::vector<AscendRankInput> ascend;
  for (const AnalyzedTrace& t : out.traces) {
    if (!t.ascend_steps.empty()) {
      ascend.push_back({t.rank, t.path, &t.ascend_steps});
    }
  }
  if (!ascend.empty()) out.ascend_ranks = CompareAscendSteps(ascend);
  std::vector<AscendCommunicationInput> communication;
  for (const AnalyzedTrace& t : out.traces) {
    if (!t.ascend_collectives.empty() || !t.ascend_links.empty()) {
      communication.push_back(
          {t.rank, t.path, &t.ascend_collectives, &t.ascend_links, &t.ascend_groups});
    }
  }
  if (!communication.empty()) out.ascend_communication = CompareAscendCommunication(communication);
  std::stable_sort(out.unused.begin(), out.unused.end(),
                   [](const UnusedFile& a, const UnusedFile& b) { return a.path < b.path; });
  return out;
}

RooflineCeilings LoadRooflineCeilings(const std::filesystem::path& path) {
  const core::Ceilings c = core::LoadCeilings(path);
  return RooflineCeilings{c.device_name,
                          "measured ceilings in " + path.string() + " (" + c.device_name + ")",
                          c.flops_per_second, c.memory_bytes_per_second};
}

}  // namespace opscope::analyze
