// The one measurement discipline every benchmark uses (ARCHITECTURE.md):
// the first run is timed on its own and reported as first-run cost; further
// warm-up runs are excluded; then repetitions until both a minimum count and a
// minimum time are reached (bounded by a maximum of each); the device is
// synchronized around every timed run; the result is the median with p10/p90.
#ifndef OPSCOPE_WORKLOADS_RUNNER_H_
#define OPSCOPE_WORKLOADS_RUNNER_H_

#include <functional>
#include <string>
#include <vector>

#include "devices/device.h"

namespace opscope::workloads {

struct RunnerOptions {
  int warmup = 2;  // excluded runs after the first
  int min_reps = 10;
  double min_time_ms = 400;
  int max_reps = 10000;        // a case stops at whichever of these comes first
  double max_time_ms = 15000;  // (with at least 3 repetitions)
};

// The runner's settings from --warmup, --min-reps and --min-time, checked:
// throws Error(kInvalidArgument) naming the flags (--warmup 0..1000, --min-reps
// 1..100000, --min-time 0..600000 ms). The caps rise to what was asked, so a
// --min-reps above 10,000 or a --min-time above 15 s is honoured, not cut.
// `max_time_ms` (--max-time; negative: not given) caps a case's time, noisy
// repetitions included; it must lie in --min-time..600000 ms.
RunnerOptions CheckedRunnerOptions(int warmup, int min_reps, double min_time_ms,
                                   double max_time_ms = -1);

struct Stats {
  double first_run_ms = 0;  // the first call: allocation, JIT, page faults, cold caches
  double median_ms = 0, p10_ms = 0, p90_ms = 0, min_ms = 0, mean_ms = 0;
  int reps = 0;
  // The minimums were met with noisy timings, so repetitions went on (Measure).
  bool extended = false;
};

// Timings whose p90 - p10 exceeds this share of the median are noisy.
inline constexpr double kNoisySpread = 0.2;
// (p90 - p10) / median of `stats`; 0 without a median.
double Spread(const Stats& stats);
// Whether `samples` are noisy by that rule (3 samples at least).
bool Noisy(std::vector<double> samples);

// Percentile q in [0, 1] of a sorted sample, interpolating between neighbours.
double Percentile(const std::vector<double>& sorted, double q);
Stats Summarize(double first_run_ms, std::vector<double> samples);

// Times run(i) for i = 0, 1, 2, ...; run(i) launches one repetition (cases
// rotate their buffer sets on i). Repeats until options' minimums are met; if
// the timings are noisy then, goes on (Stats::extended) until they are not, or
// until three times the time spent so far, the maximum time or the maximum
// repetitions, whichever comes first.
Stats Measure(devices::Device& device, const std::function<void(int)>& run,
              const RunnerOptions& options);

// How many buffer sets to rotate so that the working set exceeds the last-level
// cache twice over (1 when it already does), capped at `max_sets`.
int RotationSets(const devices::DeviceProperties& properties, size_t working_set_bytes,
                 int max_sets = 16);

}  // namespace opscope::workloads

#endif  // OPSCOPE_WORKLOADS_RUNNER_H_
