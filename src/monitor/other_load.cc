#include "monitor/other_load.h"

#include <dirent.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "core/text.h"

namespace opscope::monitor {
namespace {

struct CpuTicks {
  uint64_t busy = 0, total = 0;
};

std::optional<CpuTicks> ReadCpuTicks() {
  std::ifstream in("/proc/stat");
  std::string label;
  in >> label;
  if (label != "cpu") return std::nullopt;
  CpuTicks t;
  uint64_t idle = 0;
  for (int field = 0; field < 10; ++field) {
    uint64_t v = 0;
    if (!(in >> v)) {
      if (field < 4) return std::nullopt;
      break;
    }
    if (field >= 8) continue;  // guest time is already counted in user time
    t.total += v;
    if (field == 3 || field == 4) idle += v;  // idle, iowait
  }
  t.busy = t.total - idle;
  return t;
}

std::map<int, ProcessTicks> ReadProcesses() {
  std::map<int, ProcessTicks> processes;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return processes;
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || pid <= 0) continue;
    std::ifstream in(std::string("/proc/") + entry->d_name + "/stat");
    std::string line;
    if (!std::getline(in, line)) continue;  // it ended meanwhile
    if (auto ticks = ParseProcessStat(line)) processes[static_cast<int>(pid)] = std::move(*ticks);
  }
  ::closedir(proc);
  return processes;
}

}  // namespace

std::optional<ProcessTicks> ParseProcessStat(std::string_view line) {
  // pid (comm) state ppid ... utime(14) stime(15): comm ends at the last ')'.
  const size_t open = line.find('(');
  const size_t close = line.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  std::istringstream rest{std::string(line.substr(close + 1))};
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int n = 3; n <= 15; ++n) {
    if (!(rest >> field)) return std::nullopt;
    if (n == 14 || n == 15) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(field.c_str(), &end, 10);
      if (end == field.c_str() || *end != '\0') return std::nullopt;
      (n == 14 ? utime : stime) = v;
    }
  }
  return ProcessTicks{std::string(line.substr(open + 1, close - open - 1)), utime + stime};
}

OtherLoad MeasureOtherLoad(std::chrono::milliseconds window, size_t top_n) {
  OtherLoad load;
  const auto cpu0 = ReadCpuTicks();
  const auto before = ReadProcesses();
  std::this_thread::sleep_for(window);
  const auto cpu1 = ReadCpuTicks();
  const auto after = ReadProcesses();
  if (!cpu0 || !cpu1 || cpu1->total <= cpu0->total) {
    load.reason = "/proc/stat could not be read";
    return load;
  }
  const int self = static_cast<int>(::getpid());
  uint64_t own = 0;
  const auto own_before = before.find(self), own_after = after.find(self);
  if (own_before != before.end() && own_after != after.end() &&
      own_after->second.ticks >= own_before->second.ticks) {
    own = own_after->second.ticks - own_before->second.ticks;
  }
  const double total = static_cast<double>(cpu1->total - cpu0->total);
  const uint64_t busy = cpu1->busy - cpu0->busy;
  load.measured = true;
  load.busy_percent = 100.0 * static_cast<double>(busy > own ? busy - own : 0) / total;
  // /proc/stat counts every CPU's ticks; a process's ticks are of one CPU.
  const long cpus = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
  const double window_ticks = total / static_cast<double>(cpus);
  for (const auto& [pid, ticks] : after) {
    if (pid == self) continue;
    const auto was = before.find(pid);
    if (was == before.end() || ticks.ticks <= was->second.ticks) continue;
    load.top.push_back(
        {pid, ticks.name,
         100.0 * static_cast<double>(ticks.ticks - was->second.ticks) / window_ticks});
  }
  std::sort(load.top.begin(), load.top.end(), [](const ProcessShare& a, const ProcessShare& b) {
    return a.cpu_percent > b.cpu_percent;
  });
  if (load.top.size() > top_n) load.top.resize(top_n);
  return load;
}

std::string DescribeOtherLoad(const OtherLoad& load) {
  if (!load.measured) return "other processes' load unknown: " + load.reason;
  std::string text =
      fmt::format("{:.0f}% of the CPUs' time went to other processes", load.busy_percent);
  if (!load.top.empty()) {
    text += " (";
    for (size_t i = 0; i < load.top.size(); ++i) {
      if (i > 0) text += ", ";
      text += fmt::format("{} {}: {:.0f}% of a CPU", core::EscapeForTerminal(load.top[i].name),
                          load.top[i].pid, load.top[i].cpu_percent);
    }
    text += ")";
  }
  return text;
}

}  // namespace opscope::monitor
