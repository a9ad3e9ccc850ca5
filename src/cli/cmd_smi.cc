// `opscope smi`: device load as a snapshot, a stream (--watch), or Prometheus
// metrics (--serve).
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <optional>
#include <thread>

#include "cli/common.h"
#include "cli/device_options.h"
#include "core/clock.h"
#include "core/text.h"
#include "monitor/exporter.h"
#include "monitor/reading_format.h"
#include "monitor/watch.h"
#include "suite/device_steps.h"

namespace opscope::cli {
namespace {

// Set by SIGINT/SIGTERM. A handler rather than sigwait: libraries such as
// OpenBLAS start threads at load time, before main could block the signals.
volatile std::sig_atomic_t g_stop_requested = 0;
extern "C" void RequestStop(int) { g_stop_requested = 1; }

struct SmiCommand {
  std::string device = "all";
  std::string format = "table";
  std::string out;
  std::string watch;
  int64_t count = 0;
  std::optional<std::string> serve;  // given, even empty: serve (an empty address is refused)
  std::string interval = "1s";
  int pid = 0;

  void Run() const {
    if (count < 0)
      throw Error(ErrorCode::kInvalidArgument, "--count must be >= 0 (0: until interrupted)");
    if (serve) return Serve();
    if (!watch.empty()) return Stream();
    EmitStep(CommonOptions{"", format, out, 0}, "smi",
             suite::LoadSnapshot({.devices = device, .pid = pid}));
  }

  void Stream() const {
    const int64_t interval_ns = monitor::ParseDurationNs(watch, "--watch");
    if (interval_ns < 10000000) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--watch " + watch + ": the shortest interval is 10ms");
    }
    std::vector<std::string> notes;
    auto samplers = monitor::OpenSamplers(device, pid, notes);
    for (const auto& note : notes) std::cerr << "opscope: " << note << '\n';
    std::atomic<bool> stop{false};
    const int64_t start = core::MonotonicNs();
    bool header = false;
    std::vector<double> costs;
    monitor::Watch(samplers, interval_ns, count, stop, [&](const monitor::Reading& r) {
      costs.push_back(r.cost_us);
      const double t = static_cast<double>(r.monotonic_ns - start) / 1e9;
      if (format == "json") {
        std::cout << monitor::ReadingJsonLine(r, t) << '\n';
        CheckStdout();
        return;
      }
      if (!header) std::cout << monitor::ReadingHeader(r, format == "csv") << '\n';
      header = true;
      std::cout << monitor::ReadingLine(r, t, format == "csv") << '\n';
      CheckStdout();
    });
    if (!costs.empty()) {
      std::sort(costs.begin(), costs.end());
      std::cerr << fmt::format(
          "opscope: {} samples; one sample of all devices took {:.0f} us (median)\n", costs.size(),
          costs[costs.size() / 2]);
    }
  }

  void Serve() const {
    monitor::ExporterOptions options;
    monitor::ParseListenAddress(*serve, options);
    options.interval_seconds =
        static_cast<double>(monitor::ParseDurationNs(interval, "--interval")) / 1e9;
    if (options.interval_seconds < 0.01) {
      throw Error(ErrorCode::kInvalidArgument, "--interval: the shortest interval is 10ms");
    }
    std::vector<std::string> notes;
    auto samplers = monitor::OpenSamplers(device, pid, notes);
    for (const auto& note : notes) std::cerr << "opscope: " << note << '\n';
    // SIGINT and SIGTERM set a flag; a waiting thread then stops the server, which
    // returns from its loop at once whatever its clients are doing.
    struct sigaction action {};
    action.sa_handler = RequestStop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    monitor::Exporter exporter(std::move(samplers), options);
    const int port = exporter.Listen();  // "address in use" is an error before anything is printed
    const bool ipv6 = options.host.find(':') != std::string::npos;
    std::cerr << fmt::format(
        "opscope: serving Prometheus metrics on http://{}{}{}:{}/metrics (and /healthz); "
        "Ctrl-C stops\n",
        ipv6 ? "[" : "", core::EscapeForTerminal(options.host), ipv6 ? "]" : "", port);
    std::atomic<bool> done{false};
    std::thread waiter([&] {
      while (!done.load() && g_stop_requested == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      exporter.Stop();
    });
    try {
      exporter.Run();
    } catch (...) {
      done = true;
      waiter.join();
      throw;
    }
    done = true;
    waiter.join();
    std::cerr << "opscope: exporter stopped\n";
  }
};

}  // namespace

void RegisterSmi(CLI::App& app) {
  auto command = std::make_shared<SmiCommand>();
  CLI::App* sub =
      app.add_subcommand("smi", "device load: snapshot, --watch stream, or --serve Prometheus");
  sub->add_option("--device", command->device, "cpu, cuda:N, npu:N or all (default all present)");
  sub->add_option("--format", command->format, "table, json or csv (with --watch: json lines)")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  sub->add_option("--out", command->out, "write the snapshot to this file")->check(NotEmpty());
  sub->add_option("--watch", command->watch,
                  "stream a sample every interval (e.g. 100ms; >= 10ms)");
  sub->add_option("--count", command->count, "samples to stream (default: until interrupted)");
  sub->add_option("--serve", command->serve,
                  "serve Prometheus metrics on HOST:PORT, [IPV6]:PORT or PORT (loopback; 0: a "
                  "free port, printed)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              monitor::ExporterOptions parsed;
              monitor::ParseListenAddress(text, parsed);
            } catch (const Error& e) {
              return e.what();  // a command-line error (exit 2)
            }
            return {};
          },
          "ADDRESS", "listen address"));
  sub->add_option("--interval", command->interval, "collection interval for --serve (default 1s)");
  sub->add_option("--pid", command->pid,
                  "process whose resident memory to report (default this one)");
  sub->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
