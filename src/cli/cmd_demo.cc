// `opscope demo`: flags to the suite's demo step.
#include "cli/common.h"
#include "cli/device_options.h"
#include "suite/demo.h"

namespace opscope::cli {
namespace {

struct DemoCommand {
  CommonOptions common;
  suite::DemoOptions options;
  std::string schedule;

  void Run() {
    if (!common.device.empty() && common.device != "cpu") OpenDevice(common);  // a clear error
    if (!common.out.empty()) options.output_dir = common.out;
    if (!schedule.empty()) options.schedule = suite::ParseSchedule(schedule);
    CommonOptions to_stdout = common;  // --out names the trace folder
    to_stdout.out.clear();
    EmitStep(to_stdout, "demo", suite::Demo(options));
  }
};

}  // namespace

void RegisterDemo(CLI::App& app) {
  auto command = std::make_shared<DemoCommand>();
  CLI::App* sub = app.add_subcommand(
      "demo", "profile a built-in multi-threaded workload and write its Chrome trace");
  sub->add_option("--device", command->common.device, "device: cpu");
  sub->add_option("--format", command->common.format, "output format: table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  sub->add_option("--out", command->common.out, "folder for the trace (default opscope-report)")
      ->check(FolderOut());
  sub->add_option("--threads", command->options.threads, "worker threads (default 2)");
  sub->add_option("--steps", command->options.steps, "profiler steps (default 5)");
  sub->add_option("--size", command->options.size, "matmul size N of each step (default 96)");
  sub->add_option("--schedule", command->schedule,
                  "profiler schedule, e.g. wait=1,warmup=1,active=2,repeat=1");
  sub->add_flag("--gzip", command->options.gzip, "write .opscope.json.gz");
  sub->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
