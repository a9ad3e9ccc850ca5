// `opscope monitor`: an idle baseline, then the same metrics under a built-in
// workload or a command, side by side; with the built-in workload, the busy
// share derived from its traced operators next to what sampling saw.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "cli/common.h"
#include "core/clock.h"
#include "core/text.h"
#include "monitor/watch.h"
#include "workloads/workload.h"

namespace opscope::cli {
namespace {

using report::Value;

struct Window {
  int64_t begin_ns, end_ns;
  bool loaded;
  std::vector<monitor::Metric> metrics;
};

double Overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return static_cast<double>(std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0)));
}

struct MonitorCommand {
  CommonOptions common;
  std::string workload = "matmul:2048";
  std::string duration = "3s";
  std::string idle = "1s";
  std::string interval = "100ms";
  std::string trace;
  std::vector<std::string> command;

  void Run() const {
    const int64_t interval_ns = monitor::ParseDurationNs(interval, "--interval");
    const int64_t duration_ns = monitor::ParseDurationNs(duration, "--duration");
    const int64_t idle_ns = monitor::ParseDurationNs(idle, "--idle");
    if (interval_ns < 10000000)
      throw Error(ErrorCode::kInvalidArgument, "--interval: the shortest is 10ms");
    const bool external = !command.empty();
    workloads::WorkloadSpec spec;
    std::unique_ptr<devices::Device> device;
    if (!external) {
      spec = workloads::ParseWorkload(workload);
      device = OpenDevice(common);
    }
    std::vector<std::string> notes;
    auto samplers = monitor::OpenSamplers("all", 0, notes);

    // Operator intervals, read back from the trace when the profiler stops.
    std::vector<std::pair<int64_t, int64_t>> operators;
    int64_t trace_base_ns = 0;
    ProfilerOptions options;
    options.max_buffer_bytes = size_t{64} << 20;
    options.on_trace_ready = [&](TraceData& data) {
      data.ForEachEvent([&](const EventView& e) {
        if (e.phase == EventPhase::kComplete && e.category == "cpu_op") {
          operators.emplace_back(e.ts_ns, e.ts_ns + e.dur_ns);
        }
      });
      if (!trace.empty()) data.Export(trace);
    };
    Profiler profiler(options);
    std::atomic<bool> loaded{false}, stop_sampling{false};
    std::mutex mutex;
    std::vector<Window> windows;
    int64_t previous = core::MonotonicNs();
    profiler.Start();
    trace_base_ns = core::MonotonicNs();
    SetThreadName("opscope monitor");
    std::thread sampler_thread([&] {
      SetThreadName("sampler");
      monitor::Watch(samplers, interval_ns, 0, stop_sampling, [&](const monitor::Reading& r) {
        for (const auto& m : r.metrics) {
          if (m.value) Counter(m.labels[0].second + " " + m.Key(), *m.value);
        }
        std::lock_guard lock(mutex);
        windows.push_back({previous, r.monotonic_ns, loaded.load(), r.metrics});
        previous = r.monotonic_ns;
      });
    });
    std::this_thread::sleep_for(std::chrono::nanoseconds(idle_ns));
    const int64_t load_begin = core::MonotonicNs();
    loaded = true;
    workloads::WorkloadResult work;
    int child_status = -1;
    std::string failure;
    try {
      if (external) {
        child_status = RunCommand(samplers, duration_ns);
      } else {
        std::atomic<bool> stop_work{false};
        std::thread worker([&] {
          SetThreadName("workload");
          try {
            work = workloads::RunWorkload(*device, spec, stop_work);
          } catch (const std::exception& e) {
            failure = e.what();
          }
        });
        std::this_thread::sleep_for(std::chrono::nanoseconds(duration_ns));
        stop_work = true;
        worker.join();
      }
    } catch (...) {
      stop_sampling = true;
      sampler_thread.join();
      throw;
    }
    const int64_t load_end = core::MonotonicNs();
    stop_sampling = true;
    sampler_thread.join();
    profiler.Stop();
    if (!failure.empty()) throw Error(ErrorCode::kFailedPrecondition, "workload: " + failure);

    // Means per metric over the idle and loaded windows.
    struct Sums {
      double idle = 0, load = 0;
      int idle_n = 0, load_n = 0;
      std::string unit, device, reason;
    };
    std::vector<std::string> order;
    std::map<std::string, Sums> sums;
    double busy_idle = 0, busy_load = 0, busy_min = 100;
    int busy_idle_n = 0, busy_load_n = 0;
    for (const Window& w : windows) {
      const bool in_load = w.begin_ns >= load_begin && w.end_ns <= load_end + interval_ns / 2;
      const bool in_idle = w.end_ns <= load_begin;
      if (!in_load && !in_idle) continue;  // straddles the switch
      for (const auto& m : w.metrics) {
        const std::string key = m.labels[0].second + " " + m.Key();
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
      if (!external) {
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
    report::ResultTable table;
    table.section = "monitor";
    table.title = external ? "Idle vs under `" + core::EscapeForTerminal(command[0]) + "`"
                           : "Idle vs under the built-in workload " + spec.Describe();
    table.columns = {{"metric", "Metric"},    {"idle", "Idle", 1}, {"loaded", "Loaded", 1},
                     {"change", "Change", 1}, {"unit", "Unit"},    {"note", "Note"}};
    if (!external) {
      const Value idle_busy = busy_idle_n ? Value{busy_idle / busy_idle_n} : Value{};
      const Value load_busy = busy_load_n ? Value{busy_load / busy_load_n} : Value{};
      table.AddRow(
          {std::string("trace busy (operator time per window)"), idle_busy, load_busy,
           busy_idle_n && busy_load_n ? Value{busy_load / busy_load_n - busy_idle / busy_idle_n}
                                      : Value{},
           std::string("%"),
           busy_load_n ? fmt::format("from the trace's events; lowest window {:.1f}%", busy_min)
                       : std::string("no complete loaded window")});
    }
    for (const std::string& key : order) {
      const Sums& s = sums[key];
      const Value idle_v = s.idle_n ? Value{s.idle / s.idle_n} : Value{};
      const Value load_v = s.load_n ? Value{s.load / s.load_n} : Value{};
      const Value change =
          s.idle_n && s.load_n ? Value{s.load / s.load_n - s.idle / s.idle_n} : Value{};
      table.AddRow(
          {key, idle_v, load_v, change, s.unit, s.idle_n + s.load_n ? std::string() : s.reason});
    }
    const double seconds = static_cast<double>(load_end - load_begin) / 1e9;
    if (external) {
      table.notes.push_back(
          fmt::format("`{}` ran {:.1f} s and {}", core::EscapeForTerminal(command[0]), seconds,
                      child_status >= 0 ? fmt::format("exited with status {}", child_status)
                                        : std::string("was stopped at --duration")));
    } else {
      table.notes.push_back(
          fmt::format("Work completed: {:.1f} s, {} matmuls of {}^3 {}, {:.1f} GFLOP/s",
                      work.seconds, work.operations, spec.size, devices::Name(spec.dtype),
                      work.seconds > 0 ? work.flops / work.seconds / 1e9 : 0.0));
      table.notes.push_back(
          "Sampled figures are rates over each interval; 'trace busy' is the time inside traced "
          "operators per "
          "window, so operators shorter than the sampling interval are never invisible.");
    }
    table.notes.push_back(fmt::format("Idle {:.1f} s, then loaded {:.1f} s; sampled every {}",
                                      idle_ns / 1e9, seconds, interval));
    for (const auto& note : notes) table.notes.push_back(note);
    if (!trace.empty()) table.notes.push_back("Trace with counter tracks and operators: " + trace);
    Emit(common, "monitor", {table});
  }

  // Runs the command with the CPU sampler watching its memory; returns its exit
  // status, or -1 when --duration ran out first (it is then terminated).
  int RunCommand(std::vector<std::unique_ptr<monitor::Sampler>>& samplers,
                 int64_t duration_ns) const {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw Error(ErrorCode::kIo, "pipe failed");
    const pid_t pid = ::fork();
    if (pid < 0) throw Error(ErrorCode::kIo, std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
      std::vector<char*> argv;
      for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      const int error = errno;
      (void)!::write(pipe_fds[1], &error, sizeof error);
      ::_exit(127);
    }
    ::close(pipe_fds[1]);
    int exec_error = 0;
    const bool failed = ::read(pipe_fds[0], &exec_error, sizeof exec_error) == sizeof exec_error;
    ::close(pipe_fds[0]);
    if (failed) {
      ::waitpid(pid, nullptr, 0);
      throw Error(
          ErrorCode::kInvalidArgument,
          "cannot run '" + core::EscapeForTerminal(command[0]) + "': " + std::strerror(exec_error));
    }
    for (auto& s : samplers) s->TargetProcess(pid);
    const int64_t deadline = core::MonotonicNs() + duration_ns;
    int status = 0;
    while (true) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      if (core::MonotonicNs() >= deadline) {
        ::kill(pid, SIGTERM);
        ::waitpid(pid, &status, 0);
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
};

}  // namespace

void RegisterMonitor(CLI::App& app) {
  auto command = std::make_shared<MonitorCommand>();
  CLI::App* sub = app.add_subcommand(
      "monitor", "idle baseline vs under load, for a built-in workload or -- CMD ARGS");
  AddCommonOptions(*sub, command->common, "write the output to this file");
  sub->add_option("--workload", command->workload,
                  "built-in workload, e.g. matmul:4096 (default matmul:2048)");
  sub->add_option("--duration", command->duration,
                  "time under load (default 3s; the longest a command may run)");
  sub->add_option("--idle", command->idle, "idle baseline before the load (default 1s)");
  sub->add_option("--interval", command->interval, "sampling interval (default 100ms; >= 10ms)");
  sub->add_option("--trace", command->trace,
                  "write samples (counter tracks) and operators to this Chrome trace");
  sub->add_option("command", command->command, "a command to run and watch, after --");
  sub->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
