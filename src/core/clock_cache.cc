#include "core/clock_cache.h"

#include <simdjson.h>

#include <cstdlib>
#include <fstream>
#include <system_error>

#include "core/machine.h"
#include "core/output.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::core {
namespace {

constexpr std::string_view kKind = "opscope-clock";

std::string ReadFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

ClockKey ThisMachineClockKey(int threads) {
  const MachineInfo& machine = GetMachineInfo();
  return ClockKey{machine.cpu_model, machine.logical_cpus, threads,
                  ReadFirstLine("/proc/sys/kernel/random/boot_id")};
}

std::filesystem::path ClockCachePath(int threads) {
  const std::string name = "clock-" + std::to_string(threads) + ".json";
  const char* own = std::getenv("OPSCOPE_CACHE_DIR");
  if (own != nullptr && *own != '\0') return std::filesystem::path(own) / name;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg == '/') return std::filesystem::path(xdg) / "opscope" / name;
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home == '/')
    return std::filesystem::path(home) / ".cache" / "opscope" / name;
  return {};
}

std::optional<CachedClock> LoadCachedClock(const std::filesystem::path& path, const ClockKey& key,
                                           int64_t now_s, int64_t max_age_s) {
  if (path.empty()) return std::nullopt;
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path.string()).get(text) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(text).get(doc) != simdjson::SUCCESS) return std::nullopt;
  std::string_view kind, model, boot, method, at;
  int64_t cpus = 0, threads = 0, at_s = 0;
  double ghz = 0;
  if (doc["kind"].get(kind) || kind != kKind || doc["cpu_model"].get(model) ||
      doc["logical_cpus"].get(cpus) || doc["threads"].get(threads) || doc["boot_id"].get(boot) ||
      doc["clock_ghz"].get(ghz) || doc["method"].get(method) || doc["measured_at"].get(at) ||
      doc["measured_at_s"].get(at_s)) {
    return std::nullopt;
  }
  if (model != key.cpu_model || cpus != key.logical_cpus || threads != key.threads ||
      boot != key.boot_id || !(ghz > 0.1 && ghz < 20) || at_s > now_s || now_s - at_s > max_age_s) {
    return std::nullopt;
  }
  return CachedClock{ghz, std::string(method), std::string(at), at_s};
}

bool SaveCachedClock(const std::filesystem::path& path, const ClockKey& key,
                     const CachedClock& clock) {
  if (path.empty()) return false;
  std::string s = "{\"kind\":\"opscope-clock\",\"opscope_version\":\"" OPSCOPE_VERSION_STRING "\"";
  s += ",\"cpu_model\":";
  AppendJsonString(s, key.cpu_model);
  s += ",\"logical_cpus\":";
  AppendInt(s, key.logical_cpus);
  s += ",\"threads\":";
  AppendInt(s, key.threads);
  s += ",\"boot_id\":";
  AppendJsonString(s, key.boot_id);
  s += ",\"clock_ghz\":";
  AppendJsonNumber(s, clock.ghz);
  s += ",\"method\":";
  AppendJsonString(s, clock.method);
  s += ",\"measured_at\":";
  AppendJsonString(s, clock.measured_at);
  s += ",\"measured_at_s\":";
  AppendInt(s, clock.measured_at_s);
  s += "}\n";
  try {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    AtomicFileOutput out(path, false);
    out.buffer() = std::move(s);
    out.Commit();
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace opscope::core
