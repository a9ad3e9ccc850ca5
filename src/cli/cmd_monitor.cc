// `opscope monitor`: flags to the suite's monitor step (an idle baseline, then
// the same metrics under a built-in workload or a command).
#include "cli/common.h"
#include "cli/device_options.h"
#include "monitor/watch.h"
#include "suite/device_steps.h"

namespace opscope::cli {
namespace {

struct MonitorCommand {
  CommonOptions common;
  suite::MonitorOptions options;
  std::string duration = "3s";
  std::string idle = "1s";
  std::string interval = "100ms";

  void Run() {
    options.comparison.interval_ns = monitor::ParseDurationNs(interval, "--interval");
    options.comparison.duration_ns = monitor::ParseDurationNs(duration, "--duration");
    options.comparison.idle_ns = monitor::ParseDurationNs(idle, "--idle");
    std::unique_ptr<devices::Device> device;
    if (options.command.empty()) device = OpenDevice(common);
    EmitStep(common, "monitor", suite::Monitor(device.get(), options));
  }
};

}  // namespace

void RegisterMonitor(CLI::App& app) {
  auto command = std::make_shared<MonitorCommand>();
  CLI::App* sub = app.add_subcommand(
      "monitor", "idle baseline vs under load, for a built-in workload or -- CMD ARGS");
  AddCommonOptions(*sub, command->common, "write the output to this file");
  sub->add_option("--workload", command->options.workload,
                  "built-in workload, e.g. matmul:4096 (default matmul:2048)");
  sub->add_option("--duration", command->duration,
                  "time under load (default 3s; the longest a command may run)");
  sub->add_option("--idle", command->idle, "idle baseline before the load (default 1s)");
  sub->add_option("--interval", command->interval, "sampling interval (default 100ms; >= 10ms)");
  sub->add_option("--trace", command->options.comparison.trace_path,
                  "write samples (counter tracks) and operators to this Chrome trace");
  sub->add_option("command", command->options.command, "a command to run and watch, after --");
  sub->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
