// What the steps' critical path (issue 36: the dependency graph walked back
// from each step's end, passes/critical_path.cc) costs the analysis: one
// trace imported, then every pass and the advisor's rules run REPS times,
// with the graph and critical-path passes or without them (every other pass
// as `opscope analyze` runs them, on every core). Prints the import's time, the
// median time of the passes and rules, and the process's peak resident
// memory; bench/critical_path_cost.sh runs both modes alternately and prints
// the ratio.
//   critical_path_cost FILE with|without [REPS]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "analyze/advisor.h"
#include "analyze/importer.h"
#include "analyze/passes/critical_path.h"
#include "analyze/passes/pass.h"
#include "analyze/pipeline.h"
#include "opscope/opscope.h"

int main(int argc, char** argv) {
  using namespace opscope::analyze;
  using Clock = std::chrono::steady_clock;
  if (argc < 3 || (std::strcmp(argv[2], "with") != 0 && std::strcmp(argv[2], "without") != 0)) {
    std::fprintf(stderr, "usage: critical_path_cost FILE with|without [REPS]\n");
    return 2;
  }
  const bool with = std::strcmp(argv[2], "with") == 0;
  const int reps = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  try {
    const auto t0 = Clock::now();
    const TraceModel model = ImportTrace(argv[1]);
    const double import_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    AnalysisOptions options;
    for (const Pass& p : Passes()) {
      if (with || (p.name != kCriticalPathPass && p.name != kCriticalPathGraphPass)) {
        options.passes.push_back(p.name);
      }
    }
    std::vector<double> ms;
    size_t findings = 0;
    for (int r = 0; r < reps; ++r) {
      const auto start = Clock::now();
      const Analysis analysis = AnalyzeTrace(model, options);
      findings = Advise(analysis).size();
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    std::sort(ms.begin(), ms.end());
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf(
        "%s import_ms %.1f analysis_ms %.1f min_ms %.1f max_ms %.1f peak_kib %ld "
        "passes %zu findings %zu\n",
        with ? "with" : "without", import_ms, ms[ms.size() / 2], ms.front(), ms.back(),
        usage.ru_maxrss, options.passes.size(), findings);
  } catch (const opscope::Error& e) {
    std::fprintf(stderr, "critical_path_cost: %s\n", e.what());
    return 1;
  }
  return 0;
}
