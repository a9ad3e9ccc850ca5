#include "monitor/cpu_sampler.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace opscope::monitor {
namespace {

namespace fs = std::filesystem;

struct CpuTimes {
  uint64_t busy = 0, total = 0;
};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The first line of a file, or the reason it could not be read.
bool ReadFirstLine(const fs::path& path, std::string& line, std::string& why) {
  std::ifstream in(path);
  if (!in) {
    why = errno == EACCES ? "no permission to read " + path.string() : path.string() + " is absent";
    return false;
  }
  if (!std::getline(in, line)) {
    why = "cannot read " + path.string();
    return false;
  }
  return true;
}

Metric Make(std::string name, std::string help, std::string unit,
            std::vector<std::pair<std::string, std::string>> labels = {},
            MetricKind kind = MetricKind::kGauge) {
  Metric m;
  m.name = std::move(name);
  m.help = std::move(help);
  m.unit = std::move(unit);
  m.kind = kind;
  m.labels.emplace_back("device", "cpu");
  for (auto& l : labels) m.labels.push_back(std::move(l));
  return m;
}

class CpuSampler final : public Sampler {
 public:
  CpuSampler(int pid, CpuSamplerPaths paths) : pid_(pid), paths_(std::move(paths)) {
    ReadStat(previous_);
    previous_ns_ = NowNs();
    ReadEnergy(previous_energy_uj_);
  }

  std::string device() const override { return "cpu"; }
  void TargetProcess(int pid) override { pid_ = pid; }
  std::string description() const override { return "CPU (/proc, /sys)"; }

  std::vector<Metric> Sample() override {
    std::vector<Metric> out;
    const int64_t now = NowNs();
    std::map<std::string, CpuTimes> times;
    const bool stat_ok = ReadStat(times);
    // Utilization: busy share of the jiffies elapsed since the previous sample.
    for (const auto& [cpu, t] : times) {
      const bool total = cpu == "cpu";
      Metric m =
          Make("cpu_utilization_percent",
               "Share of time the CPUs (or one core) were not idle since the previous sample", "%",
               total ? std::vector<std::pair<std::string, std::string>>{}
                     : std::vector<std::pair<std::string, std::string>>{{"core", cpu.substr(3)}});
      const auto prev = previous_.find(cpu);
      if (prev != previous_.end() && t.total > prev->second.total) {
        m.value = 100.0 * static_cast<double>(t.busy - prev->second.busy) /
                  static_cast<double>(t.total - prev->second.total);
      } else {
        m.unavailable = prev == previous_.end() ? "needs a previous sample"
                                                : "no time elapsed since the previous sample";
      }
      out.push_back(std::move(m));
    }
    if (!stat_ok) {
      Metric m = Make("cpu_utilization_percent", "CPU utilization", "%");
      m.unavailable = "cannot read " + (paths_.proc / "stat").string();
      out.push_back(std::move(m));
    }
    previous_ = std::move(times);
    AddMemory(out);
    AddProcess(out);
    AddFrequency(out);
    AddTemperature(out);
    AddEnergy(out, now);
    AddLoad(out);
    previous_ns_ = now;
    return out;
  }

 private:
  bool ReadStat(std::map<std::string, CpuTimes>& times) {
    std::ifstream in(paths_.proc / "stat");
    std::string line;
    bool any = false;
    while (std::getline(in, line)) {
      if (line.compare(0, 3, "cpu") != 0) continue;
      std::istringstream s(line);
      std::string name;
      s >> name;
      uint64_t v[8] = {};
      for (auto& x : v) s >> x;
      CpuTimes t;
      for (const auto x : v) t.total += x;  // user..steal; guest is inside user
      t.busy = t.total - v[3] - v[4];       // minus idle and iowait
      times[name] = t;
      any = true;
    }
    return any;
  }

  // "Key: number ..." lines; lines whose value is not a number are skipped.
  std::map<std::string, uint64_t> ReadKeyValues(const fs::path& path) {
    std::map<std::string, uint64_t> values;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::istringstream rest(line.substr(colon + 1));
      uint64_t value = 0;
      if (rest >> value) values[line.substr(0, colon)] = value;
    }
    return values;
  }

  void AddMemory(std::vector<Metric>& out) {
    const auto mem = ReadKeyValues(paths_.proc / "meminfo");
    Metric total = Make("memory_total_bytes", "Physical memory", "bytes");
    Metric used = Make("memory_used_bytes", "Memory in use: total minus available", "bytes");
    Metric available = Make("memory_available_bytes", "Memory available for new work", "bytes");
    if (mem.count("MemTotal") && mem.count("MemAvailable")) {
      total.value = mem.at("MemTotal") * 1024.0;
      available.value = mem.at("MemAvailable") * 1024.0;
      used.value = *total.value - *available.value;
    } else {
      total.unavailable = used.unavailable = available.unavailable =
          "no MemTotal/MemAvailable in " + (paths_.proc / "meminfo").string();
    }
    out.push_back(std::move(total));
    out.push_back(std::move(used));
    out.push_back(std::move(available));
  }

  void AddProcess(std::vector<Metric>& out) {
    const std::string pid = pid_ > 0 ? std::to_string(pid_) : "self";
    const int shown = pid_ > 0 ? pid_ : static_cast<int>(::getpid());
    Metric rss = Make("process_resident_bytes", "Resident memory of the monitored process", "bytes",
                      {{"pid", std::to_string(shown)}});
    const auto status = ReadKeyValues(paths_.proc / pid / "status");
    if (status.count("VmRSS")) {
      rss.value = status.at("VmRSS") * 1024.0;
    } else {
      rss.unavailable = "process " + std::to_string(shown) + " has no VmRSS (exited?)";
    }
    out.push_back(std::move(rss));
  }

  void AddFrequency(std::vector<Metric>& out) {
    // cpufreq where the kernel has it; else the per-processor "cpu MHz" lines.
    std::map<int, double> mhz;
    std::string source;
    for (int cpu = 0; cpu < 4096; ++cpu) {
      std::string line, why;
      const fs::path p =
          paths_.sys / fmt::format("devices/system/cpu/cpu{}/cpufreq/scaling_cur_freq", cpu);
      if (!ReadFirstLine(p, line, why)) break;
      mhz[cpu] = std::stod(line) / 1000.0;
      source = "cpufreq";
    }
    if (mhz.empty()) {
      std::ifstream in(paths_.proc / "cpuinfo");
      std::string line;
      int cpu = -1;
      while (std::getline(in, line)) {
        if (line.rfind("processor", 0) == 0) cpu = std::stoi(line.substr(line.find(':') + 1));
        if (line.rfind("cpu MHz", 0) == 0 && cpu >= 0) {
          mhz[cpu] = std::stod(line.substr(line.find(':') + 1));
        }
      }
      source = "/proc/cpuinfo";
    }
    for (const auto& [cpu, value] : mhz) {
      Metric m = Make("cpu_frequency_mhz", "Core clock as reported by " + source, "MHz",
                      {{"core", std::to_string(cpu)}});
      m.value = value;
      if (source != "cpufreq") {
        m.note =
            "from /proc/cpuinfo: in a virtual machine, the nominal clock (opscope info measures "
            "the real one)";
      }
      out.push_back(std::move(m));
    }
    if (mhz.empty()) {
      Metric m = Make("cpu_frequency_mhz", "Core clock", "MHz");
      m.unavailable = "neither cpufreq nor cpu MHz in /proc/cpuinfo";
      out.push_back(std::move(m));
    }
  }

  void AddTemperature(std::vector<Metric>& out) {
    Metric m = Make("cpu_temperature_celsius", "CPU package (or first hwmon) temperature", "C");
    std::error_code ec;
    const fs::path hwmon = paths_.sys / "class/hwmon";
    std::string best_why = "no hwmon temperature sensor (common in virtual machines)";
    for (const auto& entry : fs::directory_iterator(hwmon, ec)) {
      std::string name, why;
      ReadFirstLine(entry.path() / "name", name, why);
      std::string value;
      if (!ReadFirstLine(entry.path() / "temp1_input", value, why)) {
        best_why = why;
        continue;
      }
      const double celsius = std::stod(value) / 1000.0;
      const bool cpu = name == "k10temp" || name == "coretemp" || name == "zenpower";
      if (!m.value || cpu) {
        m.value = celsius;
        m.labels.emplace_back("sensor", name);
      }
      if (cpu) break;
    }
    if (!m.value) m.unavailable = best_why;
    out.push_back(std::move(m));
  }

  bool ReadEnergy(uint64_t& microjoules) {
    std::string line;
    if (!ReadFirstLine(paths_.sys / "class/powercap/intel-rapl:0/energy_uj", line, energy_why_)) {
      if (energy_why_.find("absent") != std::string::npos) {
        energy_why_ = "no RAPL package energy counter (powercap) on this machine";
      }
      return false;
    }
    microjoules = std::stoull(line);
    return true;
  }

  void AddEnergy(std::vector<Metric>& out, int64_t now) {
    Metric energy = Make("cpu_package_energy_joules", "Package energy counter (RAPL)", "J", {},
                         MetricKind::kCounter);
    Metric power = Make("cpu_package_power_watts", "Package power since the previous sample", "W");
    uint64_t uj = 0;
    if (ReadEnergy(uj)) {
      energy.value = static_cast<double>(uj) / 1e6;
      if (previous_energy_uj_ > 0 && uj >= previous_energy_uj_ && now > previous_ns_) {
        power.value = static_cast<double>(uj - previous_energy_uj_) / 1e6 /
                      (static_cast<double>(now - previous_ns_) / 1e9);
      } else {
        power.unavailable = "needs a previous sample";
      }
      previous_energy_uj_ = uj;
    } else {
      energy.unavailable = power.unavailable = energy_why_;
    }
    out.push_back(std::move(energy));
    out.push_back(std::move(power));
  }

  void AddLoad(std::vector<Metric>& out) {
    std::ifstream in(paths_.proc / "loadavg");
    double one = 0;
    Metric m =
        Make("load_average_1m", "Runnable and uninterruptible tasks, 1-minute average", "tasks");
    if (in >> one) {
      m.value = one;
    } else {
      m.unavailable = "cannot read " + (paths_.proc / "loadavg").string();
    }
    out.push_back(std::move(m));
  }

  int pid_;
  CpuSamplerPaths paths_;
  std::map<std::string, CpuTimes> previous_;
  int64_t previous_ns_ = 0;
  uint64_t previous_energy_uj_ = 0;
  std::string energy_why_;
};

}  // namespace

std::unique_ptr<Sampler> CreateCpuSampler(int pid, CpuSamplerPaths paths) {
  return std::make_unique<CpuSampler>(pid, std::move(paths));
}

}  // namespace opscope::monitor
