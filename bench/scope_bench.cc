// The cost of one profiler scope (begin + end), the figure that decides whether
// users can leave scopes in hot code, in the steady state and from a fresh start.
//
// Steady state (Google Benchmark, median of 5 runs of 10,000,000 scopes each):
// an active literal scope, a runtime-named scope with a repeated name, one with
// 4,096 distinct names, an inactive scope, a compiled-out scope, and the floor
// under them all, two reads of the profiler's clock.
//
// Fresh process: the program re-runs itself (`--fresh-child=CASE:N`) once per
// measurement, so that each child starts a session in a process that has never
// recorded, and times its first N scopes; the median of 5 children is reported.
// Right before each child, this process times the steady state of the same scope
// (a warm session's 400,000-scope block), and the verdict is on the median of
// the children's ratios to those adjacent blocks: a child and the Google
// Benchmark median can be a minute and a drift of the VM's speed apart.
//
// Paired blocks: a literal scope and a repeated runtime name, each timed in a
// 400,000-iteration block right after a block of the floor, in one session, 21
// rounds, so that the machine's drift between runs cancels out of the difference.
//
// Goals on the 2-core development machine, checked from the same run: a fresh
// process's mean cost <= 1.25x the steady state; an active literal scope <= two
// clock reads + 3 ns (paired blocks); a runtime-named scope with a repeated name
// <= 2x a literal.
// For scale: Tracy publishes 2.25 ns per zone; torch's record_function costs
// microseconds.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "opscope/opscope.h"

namespace {

constexpr int64_t kScopesPerRun = 10000000;  // 320 MB of records, under the cap
constexpr int kChildren = 5;
constexpr int kDistinctNames = 4096;

opscope::ProfilerOptions CountingOptions(uint64_t& events, uint64_t& dropped) {
  opscope::ProfilerOptions options;
  options.max_buffer_bytes = size_t{1} << 30;
  options.on_trace_ready = [&](opscope::TraceData& trace) {
    dropped = trace.DroppedCount();
    events = trace.EventCount();
  };
  return options;
}

const std::vector<std::string>& DistinctNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int i = 0; i < kDistinctNames; ++i) v.push_back("layer" + std::to_string(i) + ".forward");
    return v;
  }();
  return names;
}

void BM_EmptyLoop(benchmark::State& state) {
  for (auto _ : state) benchmark::ClobberMemory();
}
BENCHMARK(BM_EmptyLoop)->Repetitions(5)->ReportAggregatesOnly(true);

// The floor: a scope reads the clock at its start and at its end.
void BM_TwoClockReads(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(opscope::detail::Ticks());
    benchmark::DoNotOptimize(opscope::detail::Ticks());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_TwoClockReads)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_ScopeInactive(benchmark::State& state) {
  for (auto _ : state) {
    OPSCOPE_SCOPE("bench_scope");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_ScopeInactive)->Repetitions(5)->ReportAggregatesOnly(true);

enum class Name { kLiteral, kRepeated, kDistinct };

template <Name kName>
void ScopeActive(benchmark::State& state) {
  uint64_t dropped = 0, events = 0;
  const std::vector<std::string>& names = DistinctNames();
  size_t next = 0;
  {
    opscope::Profiler profiler(CountingOptions(events, dropped));
    profiler.Start();
    for (auto _ : state) {
      if constexpr (kName == Name::kLiteral) {
        OPSCOPE_SCOPE("bench_scope");
      } else if constexpr (kName == Name::kRepeated) {
        OPSCOPE_SCOPE_DYN(std::string_view("conv2d_forward"));
      } else {
        OPSCOPE_SCOPE_DYN(names[next]);
        next = next + 1 == names.size() ? 0 : next + 1;
      }
      benchmark::ClobberMemory();
    }
  }
  if (dropped != 0 || events != static_cast<uint64_t>(state.iterations())) {
    state.SkipWithError("events were dropped: the measurement is not of the recording path");
  }
}

void BM_ScopeActive(benchmark::State& state) { ScopeActive<Name::kLiteral>(state); }
// The same with the chunks left as 4 KiB pages (OPSCOPE_HUGE_PAGES=0, read when
// a session starts), for the choice of the default.
void BM_ScopeActiveNoHugePages(benchmark::State& state) {
  ::setenv("OPSCOPE_HUGE_PAGES", "0", 1);
  ScopeActive<Name::kLiteral>(state);
  ::unsetenv("OPSCOPE_HUGE_PAGES");
}
void BM_DynamicScopeActive(benchmark::State& state) { ScopeActive<Name::kRepeated>(state); }
void BM_DynamicScopeDistinctNames(benchmark::State& state) { ScopeActive<Name::kDistinct>(state); }
BENCHMARK(BM_ScopeActive)->Iterations(kScopesPerRun)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_ScopeActiveNoHugePages)
    ->Iterations(kScopesPerRun)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_DynamicScopeActive)
    ->Iterations(kScopesPerRun)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_DynamicScopeDistinctNames)
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

// ---- Fresh process ------------------------------------------------------------

// The cases a child can run: the first N scopes of a session in a process that
// never recorded, literal or runtime-named; or, as a user's program does, four
// threads record 50,000 scopes each first and then one thread's next N are timed.
enum class FreshCase { kLiteral, kRuntimeName, kAfterThreads };

constexpr int kWarmThreads = 4;
constexpr int64_t kWarmScopesPerThread = 50000;

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <bool kDynamic>
void RecordScopes(int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (kDynamic) {
      OPSCOPE_SCOPE_DYN(std::string_view("conv2d_forward"));
    } else {
      OPSCOPE_SCOPE("bench_scope");
    }
    benchmark::ClobberMemory();
  }
}

// Child side: prints "start_ns loop_ns events dropped expected".
int RunFreshChild(FreshCase which, int64_t scopes) {
  uint64_t events = 0, dropped = 0;
  int64_t start_ns = 0, loop_ns = 0;
  int64_t expected = scopes;
  {
    opscope::Profiler profiler(CountingOptions(events, dropped));
    const int64_t t0 = SteadyNs();
    profiler.Start();
    start_ns = SteadyNs() - t0;
    if (which == FreshCase::kAfterThreads) {
      std::vector<std::thread> threads;
      for (int t = 0; t < kWarmThreads; ++t)
        threads.emplace_back(RecordScopes<false>, kWarmScopesPerThread);
      for (std::thread& t : threads) t.join();
      expected += kWarmThreads * kWarmScopesPerThread;
    }
    const int64_t t1 = SteadyNs();
    if (which == FreshCase::kRuntimeName) {
      RecordScopes<true>(scopes);
    } else {
      RecordScopes<false>(scopes);
    }
    loop_ns = SteadyNs() - t1;
  }
  std::printf("%" PRId64 " %" PRId64 " %" PRIu64 " %" PRIu64 " %" PRId64 "\n", start_ns, loop_ns,
              events, dropped, expected);
  return 0;
}

const char* CaseKey(FreshCase which) {
  switch (which) {
    case FreshCase::kLiteral: return "literal";
    case FreshCase::kRuntimeName: return "runtime-name";
    case FreshCase::kAfterThreads: return "after-threads";
  }
  return "?";
}

bool ParseFreshSpec(const char* spec, FreshCase& which, int64_t& scopes) {
  const char* colon = std::strchr(spec, ':');
  if (colon == nullptr) return false;
  const std::string key(spec, colon);
  bool found = false;
  for (FreshCase c : {FreshCase::kLiteral, FreshCase::kRuntimeName, FreshCase::kAfterThreads}) {
    if (key == CaseKey(c)) {
      which = c;
      found = true;
    }
  }
  char* end = nullptr;
  scopes = std::strtoll(colon + 1, &end, 10);
  return found && end != colon + 1 && *end == '\0' && scopes > 0 && scopes <= 20000000;
}

struct FreshFigures {
  double per_scope_ns = 0;  // median over children of the mean per scope
  double start_ns = 0;      // median over children of Start()'s cost
  // Median over children of (child's mean per scope / the steady state's, timed
  // in this process right before that child), when asked for.
  double paired_ratio = 0;
  std::string error;
};

// The steady state of `which`'s scope timed right now: a session whose first
// block (its first chunks and name cache) is not counted, then one timed block;
// mean per scope, loop included. Negative when events were dropped.
double SteadyBlockNs(FreshCase which);

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

FreshFigures MeasureFresh(const std::string& self, FreshCase which, int64_t scopes,
                          bool huge_pages = true, bool paired = false) {
  FreshFigures figures;
  std::vector<double> per_scope, start, ratios;
  for (int child = 0; child < kChildren; ++child) {
    double steady = 0;
    if (paired) {
      steady = SteadyBlockNs(which);
      if (steady <= 0) {
        figures.error = "the steady block dropped events: not the recording path";
        return figures;
      }
    }
    const std::string command = std::string(huge_pages ? "" : "OPSCOPE_HUGE_PAGES=0 ") + "'" +
                                self + "' --fresh-child=" + CaseKey(which) + ":" +
                                std::to_string(scopes);
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) {
      figures.error = "cannot start a child process";
      return figures;
    }
    int64_t start_ns = 0, loop_ns = 0, expected = 0;
    uint64_t events = 0, dropped = 0;
    const int fields = std::fscanf(pipe, "%" SCNd64 " %" SCNd64 " %" SCNu64 " %" SCNu64 " %" SCNd64,
                                   &start_ns, &loop_ns, &events, &dropped, &expected);
    const int status = ::pclose(pipe);
    if (fields != 5 || status != 0) {
      figures.error = "a child process failed";
      return figures;
    }
    if (dropped != 0 || events != static_cast<uint64_t>(expected)) {
      figures.error = "a child dropped events: not the recording path";
      return figures;
    }
    per_scope.push_back(static_cast<double>(loop_ns) / static_cast<double>(scopes));
    start.push_back(static_cast<double>(start_ns));
    if (paired) ratios.push_back(per_scope.back() / steady);
  }
  figures.per_scope_ns = Median(per_scope);
  figures.start_ns = Median(start);
  if (paired) figures.paired_ratio = Median(ratios);
  return figures;
}

std::string SelfPath() {
  char path[PATH_MAX] = {};
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

bool Verdict(const char* what, double value, double goal, const char* unit) {
  const bool met = value <= goal;
  std::printf("  %-44s %8.2f %-3s goal <= %6.2f %-3s %s\n", what, value, unit, goal, unit,
              met ? "met" : "NOT MET");
  return met;
}

// ---- Paired blocks ------------------------------------------------------------

// On a shared VM the machine's speed drifts by 20% or more between Google
// Benchmark's runs, more than the 3 ns the goal allows, so the medians of
// separate runs can put the scope under its own floor or 5 ns over it. Here the
// loops run in adjacent blocks inside one recording session: each round sleeps
// 20 ms (so that the session's chunk helper is idle and the floor is timed on a
// quiet core), times the floor, then a literal scope; sleeps again, times the
// floor, then a repeated runtime name. A block of 400,000 scopes fills 12.8 MB,
// more than the helper keeps ready (four 2 MiB chunks), so its page zeroing for
// the refills falls inside the scope's block, as it does in a long run. The
// median over rounds of (scope - floor) is the overhead, with the drift
// cancelled.
constexpr int kPairedRounds = 21;
constexpr int64_t kPairedBlock = 400000;

template <int kKind>  // 0: two clock reads, 1: literal scope, 2: runtime name
int64_t TimeBlock() {
  const int64_t t0 = SteadyNs();
  for (int64_t i = 0; i < kPairedBlock; ++i) {
    if constexpr (kKind == 0) {
      benchmark::DoNotOptimize(opscope::detail::Ticks());
      benchmark::DoNotOptimize(opscope::detail::Ticks());
    } else if constexpr (kKind == 1) {
      OPSCOPE_SCOPE("bench_scope");
    } else {
      OPSCOPE_SCOPE_DYN(std::string_view("conv2d_forward"));
    }
    benchmark::ClobberMemory();
  }
  return SteadyNs() - t0;
}

double SteadyBlockNs(FreshCase which) {
  uint64_t events = 0, dropped = 0;
  int64_t ns = 0;
  {
    opscope::Profiler profiler(CountingOptions(events, dropped));
    profiler.Start();
    if (which == FreshCase::kRuntimeName) {
      TimeBlock<2>();
      ns = TimeBlock<2>();
    } else {
      TimeBlock<1>();
      ns = TimeBlock<1>();
    }
  }
  if (dropped != 0 || events != 2 * static_cast<uint64_t>(kPairedBlock)) return -1;
  return static_cast<double>(ns) / static_cast<double>(kPairedBlock);
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

void ReportPaired() {
  uint64_t events = 0, dropped = 0;
  std::vector<double> floor, literal, repeated, over, ratio;
  {
    opscope::Profiler profiler(CountingOptions(events, dropped));
    profiler.Start();
    // One round unrecorded in the figures: the first chunks and the name cache.
    TimeBlock<1>();
    TimeBlock<2>();
    const auto quiet = [] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); };
    const double per = 1.0 / static_cast<double>(kPairedBlock);
    for (int round = 0; round < kPairedRounds; ++round) {
      quiet();
      const double floor_a = static_cast<double>(TimeBlock<0>()) * per;
      const double lit = static_cast<double>(TimeBlock<1>()) * per;
      quiet();
      const double floor_b = static_cast<double>(TimeBlock<0>()) * per;
      const double rep = static_cast<double>(TimeBlock<2>()) * per;
      floor.push_back(floor_a);
      floor.push_back(floor_b);
      literal.push_back(lit);
      repeated.push_back(rep);
      over.push_back(lit - floor_a);
      ratio.push_back(rep / lit);
    }
  }
  const uint64_t expected = static_cast<uint64_t>(2 * (kPairedRounds + 1)) * kPairedBlock;
  std::printf("\npaired blocks: %d rounds of %" PRId64
              " iterations, each scope's block right after a floor block (a quiet helper "
              "before it); medians over rounds, loop included:\n",
              kPairedRounds, kPairedBlock);
  if (dropped != 0 || events != expected) {
    std::printf("  skipped: the session dropped events, so this is not the recording path\n");
    return;
  }
  std::printf("  %-44s %8.2f ns\n", "two clock reads", Median(floor));
  std::printf("  %-44s %8.2f ns\n", "active literal", Median(literal));
  std::printf("  %-44s %8.2f ns\n", "active runtime name, repeated", Median(repeated));
  Verdict("literal minus floor, same round", Median(over), 3.0, "ns");
  std::printf("  %-44s %8.2f .. %.2f ns (p10 .. p90 over rounds)\n", "", Percentile(over, 0.1),
              Percentile(over, 0.9));
  const double r = Median(ratio);
  std::printf("  %-44s %8.2fx        goal <= 2x  %s\n", "runtime name over literal, same round", r,
              r <= 2 ? "met" : "NOT MET");
}

void ReportFresh(const std::map<std::string, double>& m) {
  const std::string self = SelfPath();
  if (self.empty()) {
    std::printf("\nfresh process: skipped (cannot read /proc/self/exe)\n");
    return;
  }
  std::printf(
      "\nfresh process: each child starts a session and times its first N scopes; right before "
      "each child this process times the steady state of the same scope (a warm session's "
      "block of %" PRId64
      "), so that the machine's drift between them cancels. Medians of %d "
      "children, mean per scope, loop included; 'paired' is the median of the children's "
      "ratios, 'separate' compares with the Google Benchmark median above:\n",
      kPairedBlock, kChildren);
  double start_cost = -1;
  struct Row {
    FreshCase which;
    int64_t scopes;
    const char* steady;
    const char* label;
  };
  const Row rows[] = {
      {FreshCase::kLiteral, 300000, "BM_ScopeActive", "literal, first 300,000"},
      {FreshCase::kLiteral, 1000000, "BM_ScopeActive", "literal, first 1,000,000"},
      {FreshCase::kRuntimeName, 300000, "BM_DynamicScopeActive", "runtime name, first 300,000"},
      {FreshCase::kRuntimeName, 1000000, "BM_DynamicScopeActive", "runtime name, first 1,000,000"},
      {FreshCase::kAfterThreads, 300000, "BM_ScopeActive",
       "literal, 300,000 after 4 threads x 50,000"},
  };
  for (const Row& row : rows) {
    if (m.count(row.steady) == 0) continue;
    const FreshFigures f = MeasureFresh(self, row.which, row.scopes, true, true);
    if (!f.error.empty()) {
      std::printf("  %-44s not measured: %s\n", row.label, f.error.c_str());
      continue;
    }
    const double steady = m.at(row.steady);
    std::printf(
        "  %-44s %8.2f ns  paired %5.2fx  goal <= 1.25x  %-7s  (separate: steady %.2f ns, "
        "%.2fx)\n",
        row.label, f.per_scope_ns, f.paired_ratio, f.paired_ratio <= 1.25 ? "met" : "NOT MET",
        steady, f.per_scope_ns / steady);
    if (row.which == FreshCase::kLiteral && row.scopes == 300000) start_cost = f.start_ns;
  }
  if (start_cost >= 0) {
    std::printf("  %-44s %8.1f us  (a session's start in a fresh process, buffers included)\n",
                "Profiler::Start()", start_cost / 1000.0);
  }
  // Huge pages or not: the default is whichever is faster here on first use and
  // in the steady state; both sides come from this run.
  if (m.count("BM_ScopeActive") && m.count("BM_ScopeActiveNoHugePages")) {
    const FreshFigures huge = MeasureFresh(self, FreshCase::kLiteral, 1000000, true);
    const FreshFigures small = MeasureFresh(self, FreshCase::kLiteral, 1000000, false);
    if (huge.error.empty() && small.error.empty()) {
      std::printf(
          "\nchunks as huge pages (default) or as 4 KiB pages (OPSCOPE_HUGE_PAGES=0), "
          "literal scope, loop included:\n");
      std::printf("  %-44s %8.2f ns  4 KiB pages %6.2f ns  ratio %5.2fx\n",
                  "steady state, huge pages", m.at("BM_ScopeActive"),
                  m.at("BM_ScopeActiveNoHugePages"),
                  m.at("BM_ScopeActiveNoHugePages") / m.at("BM_ScopeActive"));
      std::printf("  %-44s %8.2f ns  4 KiB pages %6.2f ns  ratio %5.2fx\n",
                  "fresh process, first 1,000,000, huge pages", huge.per_scope_ns,
                  small.per_scope_ns, small.per_scope_ns / huge.per_scope_ns);
      std::printf("  %-44s %8.1f us  4 KiB pages %6.1f us\n", "Profiler::Start(), huge pages",
                  huge.start_ns / 1000.0, small.start_ns / 1000.0);
    }
  }
}

// The share of the machine's CPU time in use over half a second before the run
// (from /proc/stat), or a negative value when it cannot be read. Another job
// running beside the benchmark makes every figure above doubtful.
double BusyShareBeforeRun() {
  const auto read = [](uint64_t& busy, uint64_t& total) {
    std::FILE* f = std::fopen("/proc/stat", "r");
    if (f == nullptr) return false;
    uint64_t v[8] = {};
    const int n = std::fscanf(f,
                              "cpu %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                              " %" SCNu64 " %" SCNu64 " %" SCNu64,
                              &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    std::fclose(f);
    if (n != 8) return false;
    total = 0;
    for (const uint64_t x : v) total += x;
    busy = total - v[3] - v[4];  // less idle and iowait
    return true;
  };
  uint64_t busy0 = 0, total0 = 0, busy1 = 0, total1 = 0;
  if (!read(busy0, total0)) return -1;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  if (!read(busy1, total1) || total1 <= total0) return -1;
  return static_cast<double>(busy1 - busy0) / static_cast<double>(total1 - total0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strncmp(argv[1], "--fresh-child=", 14) == 0) {
    FreshCase which{};
    int64_t scopes = 0;
    if (!ParseFreshSpec(argv[1] + 14, which, scopes)) {
      std::fprintf(stderr, "scope_bench: bad %s\n", argv[1]);
      return 2;
    }
    return RunFreshChild(which, scopes);
  }
  // The repetitions of all cases interleaved in random order, so that a drift of
  // the machine's speed (a shared VM's) falls on the floor and the scopes alike.
  std::vector<char*> args(argv, argv + argc);
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  bool asked = false;
  for (char* arg : args) asked |= std::strstr(arg, "random_interleaving") != nullptr;
  if (!asked) args.push_back(interleave.data());
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&count, args.data());
  const double busy = BusyShareBeforeRun();
  if (busy > 0.10) {
    std::printf(
        "WARNING: the machine was %.0f%% busy before the run (other processes, /proc/stat): "
        "every figure below is doubtful; run it on a quiet machine\n\n",
        100 * busy);
  } else if (busy >= 0) {
    std::printf("machine %.0f%% busy before the run (/proc/stat)\n\n", 100 * busy);
  }
  MedianReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const auto& m = reporter.medians;
  if (m.count("BM_ScopeActive") && m.count("BM_ScopeInactive") && m.count("BM_EmptyLoop") &&
      m.count("BM_TwoClockReads")) {
    const double loop = m.at("BM_EmptyLoop");
    const double clock = m.at("BM_TwoClockReads") - loop;
    const double literal = m.at("BM_ScopeActive") - loop;
    std::printf("\nscope cost, median of 5 runs, empty-loop time (%.2f ns) subtracted:\n", loop);
    std::printf("  %-44s %8.2f ns  (the floor: a scope's begin and end timestamps)\n",
                "two clock reads", clock);
    // No verdict here: these medians come from separate runs, and the drift of a
    // shared machine between runs is of the size of the goal; the paired blocks
    // below decide.
    std::printf("  %-44s %8.2f ns  (%+.2f ns over the floor, separate runs: see paired blocks)\n",
                "active literal (session recording)", literal, literal - clock);
    if (m.count("BM_DynamicScopeActive")) {
      const double repeated = m.at("BM_DynamicScopeActive") - loop;
      std::printf("  %-44s %8.2f ns  %.2fx the literal, goal <= 2x  %s\n",
                  "active runtime name, repeated", repeated, repeated / literal,
                  repeated <= 2 * literal ? "met" : "NOT MET");
    }
    if (m.count("BM_DynamicScopeDistinctNames")) {
      std::printf("  %-44s %8.2f ns  (no goal: each name is new to the cache)\n",
                  "active runtime name, 4,096 distinct names",
                  m.at("BM_DynamicScopeDistinctNames") - loop);
    }
    Verdict("inactive (no session)", m.at("BM_ScopeInactive") - loop, 1.0, "ns");
    if (m.count("BM_ScopeCompiledOut")) {
      Verdict("compiled out", m.at("BM_ScopeCompiledOut") - loop, 1.0, "ns");
    }
  }
  ReportPaired();
  ReportFresh(m);
  benchmark::Shutdown();
  return 0;
}
