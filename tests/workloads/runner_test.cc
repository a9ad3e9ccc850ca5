#include "workloads/runner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "devices/registry.h"
#include "opscope/opscope.h"

namespace opscope::workloads {
namespace {

TEST(Runner, PercentilesInterpolate) {
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  EXPECT_DOUBLE_EQ(Percentile(v, 0.5), 6);
  EXPECT_DOUBLE_EQ(Percentile(v, 0.1), 2);
  EXPECT_DOUBLE_EQ(Percentile(v, 0.9), 10);
  EXPECT_DOUBLE_EQ(Percentile({4, 8}, 0.5), 6);
  const Stats s = Summarize(9, {5, 1, 3});
  EXPECT_DOUBLE_EQ(s.median_ms, 3);
  EXPECT_DOUBLE_EQ(s.min_ms, 1);
  EXPECT_DOUBLE_EQ(s.first_run_ms, 9);
  EXPECT_EQ(s.reps, 3);
}

// The first run is timed apart, warm-up runs are excluded, and the count and time
// minimums both hold.
TEST(Runner, FirstRunAndWarmupStayOutOfTheSamples) {
  auto device = devices::OpenDevice("cpu");
  std::vector<int> calls;
  RunnerOptions options;
  options.warmup = 2;
  options.min_reps = 7;
  options.min_time_ms = 20;
  const Stats s = Measure(
      *device,
      [&](int i) {
        calls.push_back(i);
        std::this_thread::sleep_for(std::chrono::milliseconds(i == 0 ? 40 : i < 3 ? 25 : 2));
      },
      options);
  EXPECT_GE(s.first_run_ms, 40);
  EXPECT_LT(s.median_ms, 20) << "warm-up or first run leaked into the samples";
  EXPECT_GE(s.reps, 7);
  EXPECT_EQ(static_cast<int>(calls.size()), 1 + 2 + s.reps);
  // The time minimum holds for the samples' sum (the median times the count is
  // no bound: one slow sample on a loaded machine lifts the sum, not the median).
  EXPECT_GE(s.mean_ms * s.reps, options.min_time_ms - 1e-9);
}

void Spin(double ms) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
  while (std::chrono::steady_clock::now() < until) {
  }
}

TEST(Runner, NoiseIsASpreadOverAFifthOfTheMedian) {
  EXPECT_FALSE(Noisy({1.0, 1.0}));
  EXPECT_FALSE(Noisy({1.0, 1.05, 0.95, 1.0, 1.02}));
  EXPECT_TRUE(Noisy({1.0, 2.0, 1.0, 2.0, 1.0, 2.0}));
}

// Noisy timings at the minimums make the runner go on, to at most three times the
// time spent by then; steady ones stop at the minimums.
TEST(Runner, NoisyTimingsAreRepeatedLonger) {
  auto device = devices::OpenDevice("cpu");
  RunnerOptions options;
  options.warmup = 0;
  options.min_reps = 10;
  options.min_time_ms = 10;
  const Stats noisy = Measure(
      *device, [](int i) { Spin(i % 2 == 0 ? 0.5 : 1.5); }, options);
  EXPECT_TRUE(noisy.extended);
  EXPECT_GT(noisy.reps, 10);
  // Extended to three times the time of the minimums at most: on a quiet machine
  // about 10 ms then, and never near the 15 s maximum.
  EXPECT_LT(noisy.mean_ms * noisy.reps, 5000);
  // Steady timings stop at the minimums, unless the machine made the first ten
  // noisy (a loaded test machine): then they may go on, within the same bounds.
  const Stats steady = Measure(
      *device, [](int) { Spin(1.0); }, options);
  if (!steady.extended) {
    EXPECT_EQ(steady.reps, 10);
  }
  EXPECT_LT(steady.mean_ms * steady.reps, 5000);
}

TEST(Runner, RotationDefeatsTheCache) {
  devices::DeviceProperties p;
  p.caches = {{"L1d", 48 << 10, 1}, {"L3", 32 << 20, 2}};
  EXPECT_EQ(RotationSets(p, 100 << 20), 1);
  EXPECT_EQ(RotationSets(p, 16 << 20), 4);
  EXPECT_EQ(RotationSets(p, 1 << 10), 16);
  p.caches.clear();
  EXPECT_EQ(RotationSets(p, 1 << 10), 1);
}

TEST(Runner, CheckedOptionsHonourWhatWasAsked) {
  // Above the default caps (10,000 repetitions, 15 s), the caps rise: a
  // --min-reps 20000 was silently cut to 10,000 before.
  const RunnerOptions many = CheckedRunnerOptions(0, 20000, 0);
  EXPECT_EQ(many.min_reps, 20000);
  EXPECT_GE(many.max_reps, 20000);
  const RunnerOptions long_time = CheckedRunnerOptions(0, 1, 60000);
  EXPECT_GE(long_time.max_time_ms, 60000);
  const RunnerOptions defaults = CheckedRunnerOptions(2, 10, 400);
  EXPECT_EQ(defaults.max_reps, RunnerOptions{}.max_reps);
  for (const auto& [warmup, reps, ms] : {std::tuple{-1, 10, 1.0},
                                         {2, 0, 1.0},
                                         {2, 100001, 1.0},
                                         {2, 10, -1.0},
                                         {2, 10, std::nan("")}}) {
    EXPECT_THROW(CheckedRunnerOptions(warmup, reps, ms), Error)
        << warmup << " " << reps << " " << ms;
  }
  // --max-time caps a case's time, noisy repetitions included.
  EXPECT_DOUBLE_EQ(CheckedRunnerOptions(2, 10, 400, 2000).max_time_ms, 2000);
  EXPECT_DOUBLE_EQ(CheckedRunnerOptions(2, 10, 400).max_time_ms, RunnerOptions{}.max_time_ms);
  for (const double bad : {100.0, 0.0, 600001.0, std::nan("")}) {
    EXPECT_THROW(CheckedRunnerOptions(2, 10, 400, bad), Error) << bad;
  }
}

// A noisy case stops at --max-time: extended until then, or stopped by it
// before the minimums were met (a loaded machine).
TEST(Runner, NoisyRepetitionsStopAtTheMaximumTime) {
  auto device = devices::OpenDevice("cpu");
  const RunnerOptions options = CheckedRunnerOptions(0, 10, 10, 60);
  const Stats s = Measure(
      *device, [](int i) { Spin(i % 2 == 0 ? 0.5 : 1.5); }, options);
  const double total = s.mean_ms * s.reps;
  EXPECT_TRUE(s.extended || total >= 60) << total;
  // Not past the maximum by more than the repetition that crossed it (a loaded
  // machine may stretch that one).
  EXPECT_LE(total, 60 + 50) << s.reps << " repetitions";
  EXPECT_LT(s.reps, 200) << "1 ms repetitions stop at 60 ms";
}

}  // namespace
}  // namespace opscope::workloads
