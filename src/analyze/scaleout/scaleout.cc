#include "analyze/scaleout/scaleout.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace opscope::analyze {

std::vector<std::string> SummarizeTraces(const std::vector<TraceInput>& traces,
                                         const std::vector<size_t>& positions,
                                         const SummarizeOptions& options,
                                         std::vector<UnusedFile>& unused) {
  const size_t n = traces.size();
  const int threads = std::clamp<int>(options.threads, 1, static_cast<int>(std::max<size_t>(n, 1)));
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  AnalyzeOptions analyze;
  analyze.ceilings = options.ceilings;
  analyze.threads = std::max(1, cores / threads);
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
        out[k] = SerializeSummary(SummarizeTrace(model, t.analysis, t.rank, t.path));
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  for (auto& files : skipped) {
    for (UnusedFile& f : files) unused.push_back(std::move(f));
  }
  return out;
}

ScaleOutResult MergeSummaryDocuments(const std::vector<std::string>& documents,
                                     const std::vector<std::string>& names) {
  SummaryMerger merger;
  for (size_t i = 0; i < documents.size(); ++i) {
    merger.Add(ParseSummary(documents[i], i < names.size() ? names[i] : std::to_string(i)));
  }
  return merger.Finish();
}

ScaleOutResult MergeSummaryFiles(const std::vector<std::string>& paths) {
  SummaryMerger merger;
  for (const std::string& path : paths) merger.Add(ReadSummaryFile(path));
  return merger.Finish();
}

}  // namespace opscope::analyze
