// Tests that measure time or load: run alone (ctest RUN_SERIAL), since other
// tests running beside them would busy the cores they observe.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "core/clock.h"
#include "monitor/cpu_sampler.h"
#include "monitor/metric_util.h"
#include "monitor/watch.h"
#include "opscope/opscope.h"

namespace opscope::monitor {
namespace {

TEST(CpuSampler, RealValuesAreWithinPhysicalBoundsAndSeeABusyLoop) {
  auto sampler = CreateCpuSampler();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto idle = ByKey(sampler->Sample());
  EXPECT_LE(*idle["cpu memory_used_bytes"].value, *idle["cpu memory_total_bytes"].value);
  const double baseline = *idle["cpu cpu_utilization_percent"].value;
  if (baseline >= 95.0) {
    GTEST_SKIP() << "other processes keep the CPUs " << baseline
                 << "% busy: a rise under load cannot be observed now";
  }
  EXPECT_GT(*idle["cpu process_resident_bytes"].value, 1e6);
  EXPECT_EQ(idle["cpu process_resident_bytes"].Owner(), "pid=" + std::to_string(::getpid()));
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < cores; ++i) {
    spinners.emplace_back([&] {
      volatile uint64_t x = 0;
      while (!stop.load()) x = x + 1;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto busy = ByKey(sampler->Sample());
  stop = true;
  for (auto& t : spinners) t.join();
  for (const auto* m : {&idle, &busy}) {
    for (const auto& [key, metric] : *m) {
      if (key.find("utilization_percent") != std::string::npos && metric.value) {
        EXPECT_GE(*metric.value, 0.0) << key;
        EXPECT_LE(*metric.value, 100.0) << key;
      }
    }
  }
  EXPECT_GT(*busy["cpu cpu_utilization_percent"].value, 80.0);
  EXPECT_GT(*busy["cpu cpu_utilization_percent"].value, *idle["cpu cpu_utilization_percent"].value);
}

TEST(Watch, HoldsItsIntervalWithoutDrift) {
  std::vector<std::unique_ptr<Sampler>> samplers;
  samplers.push_back(CreateCpuSampler());
  std::vector<int64_t> times;
  std::atomic<bool> stop{false};
  constexpr int64_t kInterval = 20000000;
  const int64_t start = core::MonotonicNs();
  Watch(samplers, kInterval, 25, stop, [&](const Reading& r) { times.push_back(r.monotonic_ns); });
  ASSERT_EQ(times.size(), 25u);
  // Samples keep to their slots: never early, typically within 10 ms, and a late
  // one (the machine is shared) does not delay the ones after it.
  std::vector<int64_t> lateness;
  for (size_t k = 0; k < times.size(); ++k) {
    const int64_t due = start + static_cast<int64_t>(k + 1) * kInterval;
    EXPECT_GE(times[k], due) << k;
    lateness.push_back(times[k] - due);
  }
  std::sort(lateness.begin(), lateness.end());
  EXPECT_LT(lateness[lateness.size() / 2], 10000000);
  EXPECT_LT(lateness.back(), 100000000);
  EXPECT_THROW(ParseDurationNs("0ms", "--watch"), Error);
  EXPECT_THROW(ParseDurationNs("fast", "--watch"), Error);
  EXPECT_EQ(ParseDurationNs("1.5s", "x"), 1500000000);
  EXPECT_EQ(ParseDurationNs("10ms", "x"), 10000000);
  EXPECT_EQ(ParseDurationNs("1h", "--watch"), int64_t{3600} * 1000000000);
  EXPECT_EQ(ParseDurationNs("2d", "--watch"), int64_t{2} * 86400 * 1000000000);
  EXPECT_THROW(ParseDurationNs("400d", "--watch"), Error) << "over a year";
}

}  // namespace
}  // namespace opscope::monitor
