// How busy the machine is with work that is not ours: the share of all CPUs'
// time that other processes used over a window, and the processes that used the
// most. A benchmark that starts on a busy machine, or an idle baseline that was
// not idle, says so with these figures instead of printing its numbers as fact.
#ifndef OPSCOPE_MONITOR_OTHER_LOAD_H_
#define OPSCOPE_MONITOR_OTHER_LOAD_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::monitor {

struct ProcessShare {
  int pid = 0;
  std::string name;
  double cpu_percent = 0;  // of one CPU
};

struct OtherLoad {
  bool measured = false;  // false: /proc could not be read (then `reason`)
  std::string reason;
  double busy_percent = 0;        // of all CPUs' time, by other processes
  std::vector<ProcessShare> top;  // the busiest others, busiest first
};

// Above this share of all CPUs' time used by others, a machine is busy.
inline constexpr double kBusyPercent = 10;

// Samples /proc/stat and every /proc/<pid>/stat at the start and the end of
// `window` (sleeping in between); this process is left out.
OtherLoad MeasureOtherLoad(std::chrono::milliseconds window, size_t top_n = 3);

// "12% of the CPUs' time went to other processes (make 1234: 95% of a CPU, ...)".
std::string DescribeOtherLoad(const OtherLoad& load);

// The utime + stime ticks and the name in a /proc/<pid>/stat line (the name may
// hold spaces and parentheses); nullopt when the line is not one.
struct ProcessTicks {
  std::string name;
  uint64_t ticks = 0;
};
std::optional<ProcessTicks> ParseProcessStat(std::string_view line);

}  // namespace opscope::monitor

#endif  // OPSCOPE_MONITOR_OTHER_LOAD_H_
