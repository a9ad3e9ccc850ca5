#include "workloads/runner.h"

#include <algorithm>
#include <numeric>

#include "opscope/opscope.h"

namespace opscope::workloads {

RunnerOptions CheckedRunnerOptions(int warmup, int min_reps, double min_time_ms,
                                   double max_time_ms) {
  if (warmup < 0 || warmup > 1000 || min_reps < 1 || min_reps > 100000 ||
      !(min_time_ms >= 0 && min_time_ms <= 600000)) {
    throw Error(ErrorCode::kInvalidArgument,
                "--warmup must be 0..1000, --min-reps 1..100000, --min-time 0..600000 ms");
  }
  RunnerOptions o;
  o.warmup = warmup;
  o.min_reps = min_reps;
  o.min_time_ms = min_time_ms;
  o.max_reps = std::max(o.max_reps, min_reps);
  o.max_time_ms = std::max(o.max_time_ms, min_time_ms);
  if (!(max_time_ms < 0)) {
    if (!(max_time_ms >= min_time_ms && max_time_ms > 0 && max_time_ms <= 600000)) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--max-time must be above 0, at least --min-time and at most 600000 ms");
    }
    o.max_time_ms = max_time_ms;
  }
  return o;
}

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t lower = static_cast<size_t>(position);
  const size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

Stats Summarize(double first_run_ms, std::vector<double> samples) {
  Stats stats;
  stats.first_run_ms = first_run_ms;
  std::sort(samples.begin(), samples.end());
  stats.reps = static_cast<int>(samples.size());
  if (samples.empty()) return stats;
  stats.median_ms = Percentile(samples, 0.5);
  stats.p10_ms = Percentile(samples, 0.1);
  stats.p90_ms = Percentile(samples, 0.9);
  stats.min_ms = samples.front();
  stats.mean_ms = std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size();
  return stats;
}

double Spread(const Stats& stats) {
  return stats.median_ms > 0 ? (stats.p90_ms - stats.p10_ms) / stats.median_ms : 0;
}

bool Noisy(std::vector<double> samples) {
  if (samples.size() < 3) return false;
  std::sort(samples.begin(), samples.end());
  const double median = Percentile(samples, 0.5);
  return median > 0 && Percentile(samples, 0.9) - Percentile(samples, 0.1) > kNoisySpread * median;
}

Stats Measure(devices::Device& device, const std::function<void(int)>& run,
              const RunnerOptions& options) {
  auto timer = device.CreateTimer();
  int call = 0;
  timer->Start();
  run(call++);
  const double first = timer->StopMs();
  for (int i = 0; i < options.warmup; ++i) run(call++);
  device.Synchronize();
  std::vector<double> samples;
  double total = 0;
  double extend_until_ms = -1;  // set once the minimums were met with noisy timings
  size_t next_check = 0;
  while (true) {
    const int reps = static_cast<int>(samples.size());
    const bool enough = reps >= options.min_reps && total >= options.min_time_ms;
    const bool too_many = reps >= options.max_reps || (total >= options.max_time_ms && reps >= 3);
    if (too_many) break;
    if (enough) {
      if (extend_until_ms < 0) {
        if (!Noisy(samples)) break;
        extend_until_ms = std::min(options.max_time_ms, 3 * total);
        next_check = 2 * samples.size();
      } else if (total >= extend_until_ms) {
        break;
      } else if (samples.size() >= next_check) {
        if (!Noisy(samples)) break;
        next_check = 2 * samples.size();
      }
    }
    timer->Start();
    run(call++);
    const double ms = timer->StopMs();
    samples.push_back(ms);
    total += ms;
  }
  Stats stats = Summarize(first, std::move(samples));
  stats.extended = extend_until_ms >= 0;
  return stats;
}

int RotationSets(const devices::DeviceProperties& properties, size_t working_set_bytes,
                 int max_sets) {
  uint64_t llc = 0;
  for (const auto& cache : properties.caches) llc = std::max(llc, cache.bytes);
  if (llc == 0 || working_set_bytes == 0 || working_set_bytes >= 2 * llc) return 1;
  const uint64_t sets = (2 * llc + working_set_bytes - 1) / working_set_bytes;
  return static_cast<int>(std::min<uint64_t>(sets, static_cast<uint64_t>(max_sets)));
}

}  // namespace opscope::workloads
