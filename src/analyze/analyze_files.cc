#include "analyze/analyze_files.h"

#include <chrono>

#include "analyze/importer.h"
#include "analyze/pipeline.h"
#include "analyze/trace_inputs.h"
#include "core/ceilings.h"

namespace opscope::analyze {

AnalyzedSet AnalyzeFiles(const AnalyzeOptions& options) {
  AnalyzedSet out;
  std::vector<RankSummary> ranks;
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  TraceInputs inputs = FindTraceInputs(options.inputs);
  out.unused = std::move(inputs.unused);
  for (const TraceInput& input : inputs.traces) {
    const std::string& path = input.path;
    const auto t0 = Clock::now();
    const TraceModel model = ImportTrace(path);
    const auto t1 = Clock::now();
    AnalyzedTrace t;
    t.path = path;
    t.rank = input.rank >= 0 ? input.rank : static_cast<int>(out.traces.size());
    if (!input.step_trace_time.empty()) {
      const auto source = Source::Open(input.step_trace_time);
      t.ascend_steps = ReadStepTraceTime(*source);
    }
    t.format = model.format;
    t.events = model.size();
    t.tracks = model.tracks.size();
    t.analysis = AnalyzeTrace(model, {.ceilings = options.ceilings});
    t.findings = Advise(t.analysis, options.thresholds);
    ranks.push_back(SummarizeRank(model, t.rank));
    t.import_ms = ms(t1 - t0);
    t.analysis_ms = ms(Clock::now() - t1);
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
  return out;
}

RooflineCeilings LoadRooflineCeilings(const std::filesystem::path& path) {
  const core::Ceilings c = core::LoadCeilings(path);
  return RooflineCeilings{c.device_name,
                          "measured ceilings in " + path.string() + " (" + c.device_name + ")",
                          c.flops_per_second, c.memory_bytes_per_second};
}

}  // namespace opscope::analyze
