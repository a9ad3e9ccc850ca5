#include "core/machine.h"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "core/text.h"

namespace opscope::core {
namespace {

std::string Trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\"");
  const auto last = s.find_last_not_of(" \t\"\r\n");
  return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
}

// The value after `key` and a separator in the first matching line of a file.
std::string ReadKey(const char* path, const std::string& key, char separator) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const auto pos = line.find(separator, key.size());
    if (pos == std::string::npos) continue;
    if (Trim(line.substr(key.size(), pos - key.size())).empty()) return Trim(line.substr(pos + 1));
  }
  return {};
}

MachineInfo Collect() {
  MachineInfo info;
  info.host = HostName();
  utsname names{};
  if (uname(&names) == 0) {
    info.kernel = names.release;
    info.arch = names.machine;
    info.os = names.sysname;
  }
  const std::string pretty = ReadKey("/etc/os-release", "PRETTY_NAME", '=');
  if (!pretty.empty()) info.os = pretty;
  info.cpu_model = ReadKey("/proc/cpuinfo", "model name", ':');
  cpu_set_t set;
  CPU_ZERO(&set);
  info.logical_cpus = sched_getaffinity(0, sizeof set, &set) == 0
                          ? CPU_COUNT(&set)
                          : static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const std::string mem = ReadKey("/proc/meminfo", "MemTotal", ':');
  if (!mem.empty()) info.memory_bytes = std::stoull(mem) * 1024;
  return info;
}

}  // namespace

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string MachineJson() {
  const MachineInfo& m = GetMachineInfo();
  std::string out = "{\"host\":";
  AppendJsonString(out, m.host);
  out += ",\"os\":";
  AppendJsonString(out, m.os);
  out += ",\"kernel\":";
  AppendJsonString(out, m.kernel);
  out += ",\"arch\":";
  AppendJsonString(out, m.arch);
  out += ",\"cpu_model\":";
  AppendJsonString(out, m.cpu_model);
  out += ",\"logical_cpus\":";
  AppendInt(out, m.logical_cpus);
  out += ",\"memory_bytes\":";
  AppendUint(out, m.memory_bytes);
  out += '}';
  return out;
}

const MachineInfo& GetMachineInfo() {
  static const MachineInfo info = Collect();
  return info;
}

}  // namespace opscope::core
