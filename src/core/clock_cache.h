// One measured clock per machine: a measurement that wanders by a few percent
// from call to call (a VM without cpufreq, where the clock must be measured)
// made `opscope info` print three different peaks on three calls. The first
// measurement is kept in a small file and reused while it describes the same
// machine: the same CPU model, CPUs, threads and boot, and at most a week old.
//
// The file is <dir>/clock-<threads>.json (one per thread count), with dir $OPSCOPE_CACHE_DIR, else
// $XDG_CACHE_HOME/opscope, else $HOME/.cache/opscope. It is a cache: one that is
// missing, unreadable, malformed or stale is measured anew and rewritten, never
// an error; one that cannot be written leaves the measurement uncached.
#ifndef OPSCOPE_CORE_CLOCK_CACHE_H_
#define OPSCOPE_CORE_CLOCK_CACHE_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace opscope::core {

// What a cached clock must match to be reused.
struct ClockKey {
  std::string cpu_model;
  int logical_cpus = 0;
  int threads = 0;
  std::string boot_id;  // /proc/sys/kernel/random/boot_id: a reboot measures again
};

struct CachedClock {
  double ghz = 0;
  std::string method;       // how it was measured
  std::string measured_at;  // UTC, ISO 8601
  int64_t measured_at_s = 0;
};

// This machine's key for `threads` threads.
ClockKey ThisMachineClockKey(int threads);

// The cache file for `threads` threads, or empty when no folder can be named.
std::filesystem::path ClockCachePath(int threads);

// The cached clock for `key`, if `path` holds one for it no older than
// `max_age_s` at `now_s` (seconds since the epoch).
std::optional<CachedClock> LoadCachedClock(const std::filesystem::path& path, const ClockKey& key,
                                           int64_t now_s, int64_t max_age_s = 7 * 86400);

// Writes `clock` for `key` (atomically; creates the folder). False when it
// could not be written.
bool SaveCachedClock(const std::filesystem::path& path, const ClockKey& key,
                     const CachedClock& clock);

}  // namespace opscope::core

#endif  // OPSCOPE_CORE_CLOCK_CACHE_H_
