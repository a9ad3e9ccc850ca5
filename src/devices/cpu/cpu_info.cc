#include "devices/cpu/cpu_info.h"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/clock_cache.h"
#include "core/machine.h"

namespace opscope::devices::cpu {
namespace {

std::string FirstValue(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = line.substr(0, colon);
    k.erase(k.find_last_not_of(" \t") + 1);
    if (k == key) {
      const auto start = line.find_first_not_of(" \t", colon + 1);
      return start == std::string::npos ? std::string() : line.substr(start);
    }
  }
  return {};
}

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

uint64_t ParseCacheSize(const std::string& text) {
  if (text.empty()) return 0;
  uint64_t value = std::stoull(text);
  if (text.back() == 'K') value <<= 10;
  if (text.back() == 'M') value <<= 20;
  return value;
}

int CountList(const std::string& list) {  // "0-3,8" -> 5
  int count = 0;
  std::stringstream s(list);
  std::string part;
  while (std::getline(s, part, ',')) {
    const auto dash = part.find('-');
    if (dash == std::string::npos) {
      ++count;
    } else {
      count += std::stoi(part.substr(dash + 1)) - std::stoi(part.substr(0, dash)) + 1;
    }
  }
  return std::max(count, 1);
}

std::vector<CacheLevel> ReadCaches() {
  std::vector<CacheLevel> caches;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string type = ReadLine(dir + "type");
    if (type.empty()) break;
    if (type == "Instruction") continue;
    CacheLevel level;
    level.name = "L" + ReadLine(dir + "level") + (type == "Data" ? "d" : "");
    level.bytes = ParseCacheSize(ReadLine(dir + "size"));
    level.shared_by = CountList(ReadLine(dir + "shared_cpu_list"));
    caches.push_back(level);
  }
  return caches;
}

#if defined(__x86_64__) || defined(__i386__)
// CPUID's cache leaves: Intel's 4, or AMD's 0x8000001D where the processor has
// topology extensions (CPUID 0x80000001 ECX bit 22).
std::vector<CacheLevel> CpuidLeaves(std::string& source) {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return {};
  const bool amd = ebx == 0x68747541;  // "Auth" of AuthenticAMD
  uint32_t leaf = 4;
  if (amd) {
    if (!__get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx) || (ecx & (1u << 22)) == 0) return {};
    leaf = 0x8000001D;
    source = "CPUID leaf 0x8000001D";
  } else {
    if (eax < 4) return {};
    source = "CPUID leaf 4";
  }
  std::vector<CacheLevel> caches;
  for (uint32_t index = 0; index < 16; ++index) {
    if (!__get_cpuid_count(leaf, index, &eax, &ebx, &ecx, &edx)) break;
    if ((eax & 0x1F) == 0) break;  // no more caches
    CacheLevel cache;
    if (CacheFromCpuid(eax, ebx, ecx, cache)) caches.push_back(cache);
  }
  return caches;
}
#else
std::vector<CacheLevel> CpuidLeaves(std::string&) { return {}; }
#endif

bool Has(const std::vector<std::string>& flags, const char* flag) {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

}  // namespace

bool CacheFromCpuid(uint32_t eax, uint32_t ebx, uint32_t ecx, CacheLevel& cache) {
  const uint32_t type = eax & 0x1F;  // 1 data, 2 instruction, 3 unified
  if (type != 1 && type != 3) return false;
  const uint32_t level = (eax >> 5) & 0x7;
  const uint64_t ways = ((ebx >> 22) & 0x3FF) + 1;
  const uint64_t partitions = ((ebx >> 12) & 0x3FF) + 1;
  const uint64_t line = (ebx & 0xFFF) + 1;
  const uint64_t sets = uint64_t{ecx} + 1;
  cache.name = "L" + std::to_string(level) + (type == 1 ? "d" : "");
  cache.bytes = ways * partitions * line * sets;
  // The most logical processors that may share it: an upper bound of the sharers.
  cache.shared_by = static_cast<int>(((eax >> 14) & 0xFFF) + 1);
  return true;
}

std::vector<CacheLevel> CachesFromCpuid(std::string& source) {
  source.clear();
  return CpuidLeaves(source);
}

CoreModel ModelCore(const std::string& vendor, int family, int model,
                    const std::vector<std::string>& flags) {
  CoreModel core;
  core.has_fma = Has(flags, "fma");
  core.has_avx512 = Has(flags, "avx512f");
  core.has_avx512_bf16 = Has(flags, "avx512_bf16");
  core.has_amx_bf16 = Has(flags, "amx_bf16");
  const bool avx2 = Has(flags, "avx2");
  core.fma_units = 2;
  core.fma_width_bits = avx2 || core.has_fma ? 256 : 128;
  if (vendor == "AuthenticAMD") {
    if (family == 0x1A) {
      // Zen 5: the server and desktop parts have full 512-bit FMA pipes; the
      // mobile parts (models 0x20-0x2F, 0x60-0x7F) keep 256-bit ones.
      const bool mobile = (model >= 0x20 && model <= 0x2F) || (model >= 0x60 && model <= 0x7F);
      core.microarchitecture = "Zen 5";
      core.fma_width_bits = core.has_avx512 && !mobile ? 512 : 256;
    } else if (family == 0x19) {
      // Zen 3 and Zen 4: two 256-bit FMA pipes; Zen 4 runs AVX-512 on them twice.
      core.microarchitecture = core.has_avx512 ? "Zen 4" : "Zen 3";
      core.fma_width_bits = 256;
    } else if (family == 0x17) {
      core.microarchitecture = "Zen / Zen 2";
      core.fma_width_bits = 256;
    } else {
      core.microarchitecture = "AMD family " + std::to_string(family);
    }
  } else if (vendor == "GenuineIntel") {
    // Xeon cores with AVX-512 have two 512-bit FMA pipes (some low SKUs have one).
    core.microarchitecture = core.has_amx_bf16 ? "Sapphire Rapids or later"
                             : core.has_avx512 ? "AVX-512 core"
                                               : "AVX2 core";
    core.fma_width_bits = core.has_avx512 ? 512 : core.fma_width_bits;
  } else {
    core.microarchitecture = vendor.empty() ? "unknown" : vendor;
  }
  return core;
}

std::vector<Peak> TheoreticalPeaks(const CoreModel& core, int cores, double ghz) {
  std::vector<Peak> peaks;
  const int lanes = core.fma_width_bits / 32;
  const int flop_per_op = core.has_fma ? 2 : 1;
  const double fp32_per_cycle = static_cast<double>(core.fma_units) * lanes * flop_per_op;
  const double fp32 = cores * ghz * 1e9 * fp32_per_cycle;
  peaks.push_back(Peak{DType::kF32, fp32,
                       fmt::format("{} cores x {:.2f} GHz x {} FMA pipes x {} fp32 lanes x {} "
                                   "FLOP = {:.1f} GFLOP/s",
                                   cores, ghz, core.fma_units, lanes, flop_per_op, fp32 / 1e9)});
  if (core.has_amx_bf16) {
    const double bf16 = cores * ghz * 1e9 * 2048;
    peaks.push_back(Peak{DType::kBF16, bf16,
                         fmt::format("{} cores x {:.2f} GHz x 1024 bf16 FMA per cycle (AMX) x 2 "
                                     "FLOP = {:.1f} GFLOP/s",
                                     cores, ghz, bf16 / 1e9)});
  } else if (core.has_avx512_bf16) {
    // VDPBF16PS: each fp32 lane accumulates two bf16 products per instruction.
    const double bf16 = fp32 * 2;
    peaks.push_back(Peak{DType::kBF16, bf16,
                         fmt::format("{} cores x {:.2f} GHz x {} pipes x {} fp32 lanes x 2 bf16 "
                                     "pairs x 2 FLOP (VDPBF16PS) = {:.1f} GFLOP/s",
                                     cores, ghz, core.fma_units, lanes, bf16 / 1e9)});
  } else {
    peaks.push_back(
        Peak{DType::kBF16, fp32,
             "no bf16 arithmetic: bf16 is converted and computed in fp32 (= fp32 peak)"});
  }
  return peaks;
}

bool KernelReportsMaxClock() {
  return !ReadLine("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").empty();
}

MeasuredClock MachineClock(int threads, const std::function<double()>& measure_round) {
  const core::ClockKey key = core::ThisMachineClockKey(threads);
  const std::filesystem::path path = core::ClockCachePath(threads);
  const auto now = std::chrono::system_clock::now();
  const int64_t now_s =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  if (const auto cached = core::LoadCachedClock(path, key, now_s)) {
    return {cached->ghz, cached->method + "; measured at " + cached->measured_at +
                             " and reused from " + path.string()};
  }
  constexpr int kMaxRounds = 10;
  constexpr double kAgreement = 0.005;
  double previous = measure_round(), ghz = previous;
  int rounds = 1;
  bool converged = false;
  while (rounds < kMaxRounds && !converged) {
    const double current = measure_round();
    ++rounds;
    converged = std::abs(current - previous) <= kAgreement * std::max(current, previous);
    ghz = converged ? std::max(current, previous) : std::max(ghz, current);
    previous = current;
  }
  core::CachedClock clock;
  clock.ghz = ghz;
  clock.method = converged ? fmt::format("{} rounds, the last two within 0.5%", rounds)
                           : fmt::format(
                                 "did not settle within 0.5% in {} rounds: the fastest "
                                 "round is kept",
                                 rounds);
  clock.measured_at_s = now_s;
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  clock.measured_at = stamp;
  const bool saved = core::SaveCachedClock(path, key, clock);
  return {ghz, clock.method + (saved ? "; cached in " + path.string()
                                     : std::string("; not cached (no writable cache folder)"))};
}

DeviceProperties ProbeCpu(int threads, const MeasuredClock& measured) {
  DeviceProperties p;
  p.id = "cpu";
  p.kind = "cpu";
  const core::MachineInfo& machine = core::GetMachineInfo();
  p.name = machine.cpu_model.empty() ? "CPU" : machine.cpu_model;
  p.compute_units_available = machine.logical_cpus;
  p.compute_units = threads;
  std::stringstream flags_line(FirstValue("flags"));
  std::vector<std::string> flags;
  for (std::string f; flags_line >> f;) flags.push_back(f);
  for (const char* f :
       {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
        "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8"}) {
    if (Has(flags, f)) p.features.emplace_back(f);
  }
  const std::string vendor = FirstValue("vendor_id");
  const std::string family = FirstValue("cpu family");
  const std::string model = FirstValue("model");
  const CoreModel core = ModelCore(vendor, family.empty() ? 0 : std::stoi(family),
                                   model.empty() ? 0 : std::stoi(model), flags);
  p.microarchitecture = core.microarchitecture;
  const std::string max_khz = ReadLine("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  if (!max_khz.empty()) {
    p.clock_ghz = std::stod(max_khz) / 1e6;
    p.clock_source = "cpufreq maximum";
  } else {
    const std::string mhz = FirstValue("cpu MHz");
    const double nominal = mhz.empty() ? 0 : std::stod(mhz) / 1e3;
    if (measured.ghz > 0) {
      p.clock_ghz = measured.ghz;
      p.clock_source = fmt::format(
          "measured: all {} threads running dependent one-cycle adds ({}); /proc/cpuinfo says "
          "{:.2f} GHz nominal, and there is no cpufreq to ask",
          threads, measured.how, nominal);
    } else {
      p.clock_ghz = nominal;
      p.clock_source = "cpu MHz in /proc/cpuinfo (nominal; boost unknown)";
    }
  }
  p.peaks = TheoreticalPeaks(core, threads, p.clock_ghz);
  p.caches = ReadCaches();
  p.caches_source = "sysfs (/sys/devices/system/cpu/cpu0/cache)";
  if (p.caches.empty()) {
    std::string source;
    p.caches = CachesFromCpuid(source);
    p.caches_source = p.caches.empty() ? "unknown: /sys/devices/system/cpu/cpu0/cache is absent "
                                         "and CPUID lists no cache on this processor"
                                       : source + " (/sys/devices/system/cpu/cpu0/cache is absent)";
    // Sharers from CPUID are the most that may share a cache; at most the CPUs here.
    for (CacheLevel& cache : p.caches) {
      cache.shared_by = std::min(cache.shared_by, std::max(1, machine.logical_cpus));
    }
  }
  p.memory_bytes = machine.memory_bytes;
  return p;
}

}  // namespace opscope::devices::cpu
