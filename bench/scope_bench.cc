// The cost of one profiler scope (begin + end), the figure that decides whether
// users can leave scopes in hot code. Goals on the 2-core development machine:
// <= 20 ns with a session recording, <= 1 ns with none, nothing when compiled out.
// For scale: Tracy publishes 2.25 ns per zone; torch's record_function costs
// microseconds.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>

#include "opscope/opscope.h"

namespace {

constexpr int64_t kScopesPerRun = 10000000;  // 320 MB of records, under the cap

void BM_EmptyLoop(benchmark::State& state) {
  for (auto _ : state) benchmark::ClobberMemory();
}
BENCHMARK(BM_EmptyLoop)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_ScopeInactive(benchmark::State& state) {
  for (auto _ : state) {
    OPSCOPE_SCOPE("bench_scope");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_ScopeInactive)->Repetitions(5)->ReportAggregatesOnly(true);

template <bool kDynamic>
void ScopeActive(benchmark::State& state) {
  uint64_t dropped = 0, events = 0;
  opscope::ProfilerOptions options;
  options.max_buffer_bytes = size_t{1} << 30;
  options.on_trace_ready = [&](opscope::TraceData& trace) {
    dropped = trace.DroppedCount();
    events = trace.EventCount();
  };
  {
    opscope::Profiler profiler(options);
    profiler.Start();
    for (auto _ : state) {
      if constexpr (kDynamic) {
        OPSCOPE_SCOPE_DYN(std::string_view("conv2d_forward"));
      } else {
        OPSCOPE_SCOPE("bench_scope");
      }
      benchmark::ClobberMemory();
    }
  }
  if (dropped != 0 || events != static_cast<uint64_t>(state.iterations())) {
    state.SkipWithError("events were dropped: the measurement is not of the recording path");
  }
}

void BM_ScopeActive(benchmark::State& state) { ScopeActive<false>(state); }
void BM_DynamicScopeActive(benchmark::State& state) { ScopeActive<true>(state); }
BENCHMARK(BM_ScopeActive)->Iterations(kScopesPerRun)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_DynamicScopeActive)
    ->Iterations(kScopesPerRun)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

// Keeps each benchmark's median for the verdict printed at the end.
class MedianReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") {
        medians[run.run_name.function_name] = run.GetAdjustedRealTime();
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> medians;
};

void Verdict(const char* what, double ns, double goal) {
  std::printf("%-28s %7.2f ns   goal <= %4.1f ns   %s\n", what, ns, goal,
              ns <= goal ? "met" : "NOT MET");
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  MedianReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const auto& m = reporter.medians;
  if (m.count("BM_ScopeActive") && m.count("BM_ScopeInactive") && m.count("BM_EmptyLoop")) {
    const double loop = m.at("BM_EmptyLoop");
    std::printf("\nscope cost, median of 5 runs, empty-loop time (%.2f ns) subtracted:\n", loop);
    Verdict("active (session recording)", m.at("BM_ScopeActive") - loop, 20.0);
    if (m.count("BM_DynamicScopeActive")) {
      std::printf("%-28s %7.2f ns   (copies a runtime name; no goal)\n", "active, runtime name",
                  m.at("BM_DynamicScopeActive") - loop);
    }
    Verdict("inactive (no session)", m.at("BM_ScopeInactive") - loop, 1.0);
    if (m.count("BM_ScopeCompiledOut")) {
      Verdict("compiled out", m.at("BM_ScopeCompiledOut") - loop, 1.0);
    }
  }
  benchmark::Shutdown();
  return 0;
}
