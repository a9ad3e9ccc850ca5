#include "monitor/load_comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

#include "core/clock.h"
#include "core/subprocess.h"
#include "core/text.h"
#include "monitor/other_load.h"
#include "monitor/reading_format.h"
#include "monitor/watch.h"
#include "opscope/opscope.h"

namespace opscope::monitor {
namespace {

struct Window {
  int64_t begin_ns, end_ns;
  std::vector<Metric> metrics;
};

double Overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return static_cast<double>(std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0)));
}

}  // namespace

LoadComparison CompareIdleAndLoad(const LoadComparisonOptions& options, const Load& load) {
  if (options.interval_ns < 10000000) {
    throw Error(ErrorCode::kInvalidArgument, "--interval: the shortest is 10ms");
  }
  std::vector<std::string> notes;
  auto samplers = OpenSamplers("all", 0, notes);

  // Operator intervals, read back from the trace when the profiler stops.
  std::vector<std::pair<int64_t, int64_t>> operators;
  ProfilerOptions profiler_options;
  profiler_options.max_buffer_bytes = size_t{64} << 20;
  profiler_options.on_trace_ready = [&](TraceData& data) {
    data.ForEachEvent([&](const EventView& e) {
      if (e.phase == EventPhase::kComplete && e.category == "cpu_op") {
        operators.emplace_back(e.ts_ns, e.ts_ns + e.dur_ns);
      }
    });
    if (!options.trace_path.empty()) data.Export(options.trace_path);
  };
  Profiler profiler(profiler_options);
  std::atomic<bool> stop_sampling{false};
  std::mutex mutex;
  std::vector<Window> windows;
  int64_t previous = core::MonotonicNs();
  profiler.Start();
  const int64_t trace_base_ns = core::MonotonicNs();
  SetThreadName("opscope monitor");
  std::thread sampler_thread([&] {
    SetThreadName("sampler");
    Watch(samplers, options.interval_ns, 0, stop_sampling, [&](const Reading& r) {
      for (const auto& m : r.metrics) {
        if (m.value) Counter(DeviceOf(m) + " " + m.Key(), *m.value);
      }
      std::lock_guard lock(mutex);
      windows.push_back({previous, r.monotonic_ns, r.metrics});
      previous = r.monotonic_ns;
    });
  });
  const auto stop_sampler = [&] {
    stop_sampling = true;
    if (sampler_thread.joinable()) sampler_thread.join();
  };
  // The baseline window, with what other processes did in it: an idle baseline
  // taken beside another job is no baseline.
  const OtherLoad during_idle =
      MeasureOtherLoad(std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::nanoseconds(options.idle_ns)));
  const int64_t load_begin = core::MonotonicNs();
  std::string work_note;
  std::exception_ptr failure;
  {
    std::atomic<bool> stop_work{false}, finished{false};
    std::thread worker([&] {
      SetThreadName("workload");
      try {
        work_note = load.run(stop_work, samplers);
      } catch (...) {
        failure = std::current_exception();
      }
      finished = true;
    });
    // The load ends at the duration, or earlier when it ends by itself.
    const int64_t deadline = load_begin + options.duration_ns;
    while (!finished && core::MonotonicNs() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    stop_work = true;
    worker.join();
  }
  const int64_t load_end = core::MonotonicNs();
  stop_sampler();
  profiler.Stop();
  if (failure) std::rethrow_exception(failure);

  // Means per metric over the idle and loaded windows.
  struct Sums {
    double idle = 0, load = 0;
    int idle_n = 0, load_n = 0;
    std::string unit, reason;
  };
  std::vector<std::string> order;
  std::map<std::string, Sums> sums;
  double busy_idle = 0, busy_load = 0, busy_min = 100;
  int busy_idle_n = 0, busy_load_n = 0;
  for (const Window& w : windows) {
    const bool in_load = w.begin_ns >= load_begin && w.end_ns <= load_end + options.interval_ns / 2;
    const bool in_idle = w.end_ns <= load_begin;
    if (!in_load && !in_idle) continue;  // straddles the switch
    for (const auto& m : w.metrics) {
      const std::string key = DeviceOf(m) + " " + m.Key();
      if (!sums.count(key)) order.push_back(key);
      Sums& s = sums[key];
      s.unit = m.unit;
      if (!m.value) {
        s.reason = m.unavailable;
        continue;
      }
      (in_load ? s.load : s.idle) += *m.value;
      ++(in_load ? s.load_n : s.idle_n);
    }
    if (load.records_operators) {
      double busy = 0;
      for (const auto& [b, e] : operators) {
        busy += Overlap(b + trace_base_ns, e + trace_base_ns, w.begin_ns, w.end_ns);
      }
      const double pct = 100.0 * busy / static_cast<double>(w.end_ns - w.begin_ns);
      if (in_load) {
        busy_load += pct, ++busy_load_n;
        busy_min = std::min(busy_min, pct);
      } else {
        busy_idle += pct, ++busy_idle_n;
      }
    }
  }
  LoadComparison out;
  out.title = "Idle vs under " + load.description;
  out.loaded_seconds = static_cast<double>(load_end - load_begin) / 1e9;
  const auto mean = [](double sum, int n) { return n > 0 ? std::optional(sum / n) : std::nullopt; };
  if (load.records_operators) {
    out.trace_busy = MetricComparison{
        "trace busy (operator time per window)", mean(busy_idle, busy_idle_n),
        mean(busy_load, busy_load_n), "%",
        busy_load_n ? fmt::format("from the trace's events; lowest window {:.1f}%", busy_min)
                    : std::string("no complete loaded window")};
  }
  for (const std::string& key : order) {
    const Sums& s = sums[key];
    out.metrics.push_back({key, mean(s.idle, s.idle_n), mean(s.load, s.load_n), s.unit,
                           s.idle_n + s.load_n ? std::string() : s.reason});
  }
  if (!work_note.empty()) out.notes.push_back(work_note);
  if (load.records_operators) {
    out.notes.push_back(
        "Sampled figures are rates over each interval; 'trace busy' is the time inside traced "
        "operators per window, so operators shorter than the sampling interval are never "
        "invisible.");
  }
  out.notes.push_back(fmt::format("Idle {:.1f} s, then loaded {:.1f} s; sampled every {:g} ms",
                                  options.idle_ns / 1e9, out.loaded_seconds,
                                  options.interval_ns / 1e6));
  if (during_idle.measured && during_idle.busy_percent > kBusyPercent) {
    out.idle_was_busy = true;
    out.notes.push_back(
        "WARNING: the idle baseline was not idle: " + DescribeOtherLoad(during_idle) +
        "; the idle column is the machine with that load, not at rest");
  } else {
    out.notes.push_back("During the idle baseline, " + DescribeOtherLoad(during_idle) + ".");
  }
  for (const auto& note : notes) out.notes.push_back(note);
  if (!options.trace_path.empty()) {
    out.notes.push_back("Trace with counter tracks and operators: " + options.trace_path);
  }
  return out;
}

Load ProgramLoad(std::vector<std::string> argv) {
  Load load;
  load.description = "`" + core::EscapeForTerminal(argv.empty() ? "" : argv[0]) + "`";
  load.run = [argv = std::move(argv)](const std::atomic<bool>& stop,
                                      std::vector<std::unique_ptr<Sampler>>& samplers) {
    const auto started = core::MonotonicNs();
    core::Subprocess child = core::Subprocess::Spawn(argv);
    for (auto& s : samplers) s->TargetProcess(child.pid());
    int status = -1;
    while ((status = child.Poll()) < 0 && !stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (status < 0) child.WaitUntil(0);  // stopped at the duration: SIGTERM, then reaped
    const double seconds = (core::MonotonicNs() - started) / 1e9;
    return fmt::format("`{}` ran {:.1f} s and {}", core::EscapeForTerminal(argv[0]), seconds,
                       status >= 0 ? fmt::format("exited with status {}", status)
                                   : std::string("was stopped at --duration"));
  };
  return load;
}

}  // namespace opscope::monitor
