#include "suite/demo.h"

#include <barrier>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/text.h"

namespace opscope::suite {
namespace {

// A small dense matmul: real arithmetic for the trace to show.
double Multiply(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c,
                int n) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) c[i * n + j] = 0.0f;
    for (int k = 0; k < n; ++k) {
      const float aik = a[i * n + k];
      for (int j = 0; j < n; ++j) c[i * n + j] += aik * b[k * n + j];
    }
  }
  double sum = 0;
  for (const float v : c) sum += v;
  return sum;
}

}  // namespace

Schedule ParseSchedule(const std::string& text) {
  Schedule schedule;
  std::string rest = text;
  while (!rest.empty()) {
    const std::string item = rest.substr(0, rest.find(','));
    rest = item.size() < rest.size() ? rest.substr(item.size() + 1) : std::string();
    const auto eq = item.find('=');
    int64_t* field = nullptr;
    const std::string key = item.substr(0, eq);
    if (key == "skip_first") field = &schedule.skip_first;
    if (key == "wait") field = &schedule.wait;
    if (key == "warmup") field = &schedule.warmup;
    if (key == "active") field = &schedule.active;
    if (key == "repeat") field = &schedule.repeat;
    int64_t value = 0;
    std::size_t used = 0;
    try {
      if (eq != std::string::npos) value = std::stoll(item.substr(eq + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (field == nullptr || eq == std::string::npos || used == 0 || used != item.size() - eq - 1) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--schedule: cannot read '" + core::EscapeForTerminal(item) +
                      "': expected KEY=INTEGER with KEY one of skip_first, wait, warmup, "
                      "active, repeat");
    }
    *field = value;
  }
  schedule.Validate();
  return schedule;
}

StepOutput Demo(const DemoOptions& options) {
  if (options.threads < 1 || options.threads > 256) {
    throw Error(ErrorCode::kInvalidArgument, "--threads must be between 1 and 256");
  }
  if (options.steps < 1 || options.steps > 100000) {
    throw Error(ErrorCode::kInvalidArgument, "--steps must be between 1 and 100000");
  }
  if (options.size < 1 || options.size > 2048) {
    throw Error(ErrorCode::kInvalidArgument, "--size must be between 1 and 2048");
  }
  const int threads = options.threads, steps = options.steps, size = options.size;
  ProfilerOptions profiler_options;
  profiler_options.output_dir = options.output_dir;
  profiler_options.record_shapes = true;
  profiler_options.gzip = options.gzip;
  profiler_options.schedule = options.schedule;
  Profiler profiler(profiler_options);

  const int64_t begin_ns = core::MonotonicNs();
  std::barrier step_done(threads + 1);
  std::barrier step_start(threads + 1);
  double checksum = 0;
  std::vector<std::jthread> workers;
  std::vector<double> partial(threads, 0.0);
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      SetThreadName("worker " + std::to_string(t));
      std::mt19937 rng(1234 + t);
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      std::vector<float> a(size * size), b(size * size), c(size * size);
      const std::string shapes = "[[" + std::to_string(size) + "," + std::to_string(size) + "],[" +
                                 std::to_string(size) + "," + std::to_string(size) + "]]";
      for (int s = 0; s < steps; ++s) {
        step_start.arrive_and_wait();
        {
          OPSCOPE_SCOPE("worker_step");
          FlowEnd(static_cast<uint64_t>(s) * 1000 + t, "dispatch");
          {
            OPSCOPE_SCOPE("load_batch");
            for (auto& v : a) v = dist(rng);
            for (auto& v : b) v = dist(rng);
          }
          OPSCOPE_SCOPE_DYN("matmul", ScopeArgs{.shapes = shapes,
                                                .dtype = "fp32",
                                                .flops = int64_t{2} * size * size * size,
                                                .bytes = int64_t{3} * size * size * 4,
                                                .category = "cpu_op"});
          partial[t] += Multiply(a, b, c, size);
        }
        step_done.arrive_and_wait();
      }
    });
  }
  profiler.Start();
  for (int s = 0; s < steps; ++s) {
    {
      OPSCOPE_SCOPE("dispatch");
      for (int t = 0; t < threads; ++t) FlowStart(static_cast<uint64_t>(s) * 1000 + t, "dispatch");
    }
    step_start.arrive_and_wait();
    step_done.arrive_and_wait();
    Counter("steps_done", s + 1);
    profiler.Step();
  }
  profiler.Stop();
  workers.clear();
  for (const double p : partial) checksum += p;
  const double wall_ms = static_cast<double>(core::MonotonicNs() - begin_ns) / 1e6;

  report::ResultTable table;
  table.section = "traces";
  table.title = "opscope demo: " + std::to_string(threads) + " threads x " + std::to_string(steps) +
                " steps of a " + std::to_string(size) + "^3 matmul";
  table.columns = {{"trace_file", "Trace file"}};
  for (const auto& file : profiler.trace_files()) table.AddRow({file.string()});
  table.notes.push_back("wall time " + std::to_string(static_cast<int64_t>(std::llround(wall_ms))) +
                        " ms; checksum " + std::to_string(checksum) +
                        "; open the trace in https://ui.perfetto.dev or chrome://tracing");
  return {{table}, ""};
}

}  // namespace opscope::suite
