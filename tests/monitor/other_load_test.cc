// Other processes' load, read from /proc: what benchmarks and the idle baseline
// report when the machine was not theirs alone.
#include "monitor/other_load.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>

namespace opscope::monitor {
namespace {

// /proc/<pid>/stat as proc(5) lays it out: pid (comm) state, then fields 4 to
// 52; utime and stime are fields 14 and 15, in clock ticks.
TEST(OtherLoad, ProcessStatLinesAreParsedWhateverTheName) {
  const auto plain = ParseProcessStat(
      "1234 (python3) R 1 1234 1234 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 100 1000 10");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->name, "python3");
  EXPECT_EQ(plain->ticks, 300u);
  const auto odd =
      ParseProcessStat("77 (my (odd) name) S 1 77 77 0 -1 0 0 0 0 0 7 8 0 0 20 0 1 0 100 1000 10");
  ASSERT_TRUE(odd.has_value());
  EXPECT_EQ(odd->name, "my (odd) name");
  EXPECT_EQ(odd->ticks, 15u);
  EXPECT_FALSE(ParseProcessStat("").has_value());
  EXPECT_FALSE(ParseProcessStat("12 (short) R 1 2").has_value());
  EXPECT_FALSE(ParseProcessStat("12 (bad) R 1 2 3 4 5 6 7 8 9 10 x y").has_value());
}

// A child spinning on one CPU is seen, by pid, and this process's own work is not.
TEST(OtherLoad, ABusyProcessIsFoundAndNamed) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(10);
    volatile uint64_t x = 0;
    for (;;) x = x + 1;
  }
  // The child's own share over the same window, from its /proc/<pid>/stat
  // (utime + stime) read here: what it got, however loaded the machine is.
  const auto ticks = [&] {
    std::ifstream in("/proc/" + std::to_string(child) + "/stat");
    std::string line;
    std::getline(in, line);
    const auto stat = ParseProcessStat(line);
    return stat ? static_cast<double>(stat->ticks) : -1.0;
  };
  const double ticks_before = ticks();
  const auto t0 = std::chrono::steady_clock::now();
  const OtherLoad load = MeasureOtherLoad(std::chrono::milliseconds(500), 16);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double own_pct =
      100.0 * (ticks() - ticks_before) / static_cast<double>(::sysconf(_SC_CLK_TCK)) / seconds;
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(load.measured) << load.reason;
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  EXPECT_GE(load.busy_percent, 0.3 * 100.0 / static_cast<double>(cpus))
      << "one spinning process is a whole CPU";
  bool found = false;
  for (const ProcessShare& p : load.top) {
    if (p.pid == child) {
      found = true;
      // The same share as its own counters say (windows of 500 ms measured a
      // few microseconds apart, in 10 ms clock ticks), and a share at all.
      EXPECT_GT(p.cpu_percent, 0);
      EXPECT_NEAR(p.cpu_percent, own_pct, std::max(8.0, 0.25 * own_pct))
          << "its /proc counters gave " << own_pct << "% over the window";
    }
    EXPECT_NE(p.pid, ::getpid()) << "this process is not another";
  }
  EXPECT_TRUE(found) << DescribeOtherLoad(load);
  EXPECT_NE(DescribeOtherLoad(load).find("of the CPUs' time went to other processes"),
            std::string::npos);
}

}  // namespace
}  // namespace opscope::monitor
