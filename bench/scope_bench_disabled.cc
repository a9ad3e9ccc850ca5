// Built as users' code is with OPSCOPE_ENABLE_PROFILING=OFF: the macros vanish.
#undef OPSCOPE_ENABLED
#define OPSCOPE_ENABLED 0
#include <benchmark/benchmark.h>

#include "opscope/opscope.h"

void BM_ScopeCompiledOut(benchmark::State& state) {
  for (auto _ : state) {
    OPSCOPE_SCOPE("bench_scope");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_ScopeCompiledOut)->Repetitions(5)->ReportAggregatesOnly(true);
