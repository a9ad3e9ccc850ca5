#include "analyze/scaleout/scaleout.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "analyze/importer.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace opscope::analyze {
namespace {

void ReleaseFreeMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace

std::vector<std::string> SummarizeTraces(const std::vector<TraceInput>& traces,
                                         const std::vector<size_t>& positions,
                                         const SummarizeOptions& options,
                                         std::vector<UnusedFile>& unused) {
  const size_t n = traces.size();
  const int threads = std::clamp<int>(options.threads, 1, static_cast<int>(std::max<size_t>(n, 1)));
  const int cores = options.cores > 0
                        ? options.cores
                        : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  AnalyzeOptions analyze;
  analyze.ceilings = options.ceilings;
  analyze.threads = std::max(1, cores / threads);
  // Its importers: the same share of the cores, and no operand shapes (no
  // pass of a summary reads them).
  const ImportSettings before = GetImportSettings();
  SetImportSettings({.threads = analyze.threads, .operand_shapes = false});
  // What a summary holds comes from these two passes (and SummarizeRank).
  analyze.passes = {"op_stats", "steps"};
  std::vector<std::string> out(n);
  std::vector<std::vector<UnusedFile>> skipped(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t k; (k = next.fetch_add(1)) < n;) {
      try {
        const size_t position = k < positions.size() ? positions[k] : k;
        TraceModel model;
        const AnalyzedTrace t = AnalyzeInput(traces[k], position, analyze, skipped[k], model);
        out[k] =
            CompressSummary(SerializeSummary(SummarizeTrace(model, t.analysis, t.rank, t.path)));
        model = TraceModel();
        // Hand the trace's freed memory back before the next one: without
        // this, each trace's peak lands on the last one's leftovers.
        ReleaseFreeMemory();
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  SetImportSettings(before);
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  for (auto& files : skipped) {
    for (UnusedFile& f : files) unused.push_back(std::move(f));
  }
  return out;
}

ScaleOutResult MergeSummaryDocuments(const std::vector<std::string_view>& documents,
                                     const std::vector<std::string>& names) {
  SummaryMerger merger;
  for (size_t i = 0; i < documents.size(); ++i) {
    merger.Add(ParseSummaryBytes(documents[i], i < names.size() ? names[i] : std::to_string(i)));
  }
  return merger.Finish();
}

ScaleOutResult MergeSummaryFiles(const std::vector<std::string>& paths) {
  SummaryMerger merger;
  for (const std::string& path : paths) merger.Add(ReadSummaryFile(path));
  return merger.Finish();
}

}  // namespace opscope::analyze
