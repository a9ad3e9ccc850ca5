// What the commands that run on a device share: --device opened, and a
// measuring step's tables emitted. Apart from common.cc so that the programs
// without devices (opscope-scaleout) link no backend.
#include "cli/device_options.h"

#include <iostream>

#include "core/machine.h"
#include "devices/registry.h"

namespace opscope::cli {

void AddCommonOptions(CLI::App& app, CommonOptions& options, const std::string& out_help) {
  app.add_option("--device", options.device,
                 "device: cpu, cuda:N or npu:N (default: " + devices::DefaultDevice() + ")");
  app.add_option("--format", options.format, "output format: table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  app.add_option("--out", options.out, out_help)->check(NotEmpty());
  app.add_option("--threads", options.threads, "CPU threads to use (default: all)");
  AddTableOption(app, options.table);
}

std::unique_ptr<devices::Device> OpenDevice(const CommonOptions& options) {
  const std::string device = options.device.empty() ? devices::DefaultDevice() : options.device;
  const int available = core::GetMachineInfo().logical_cpus;
  if (device == "cpu" && options.threads > available && options.threads <= 4096) {
    std::cerr << "opscope: --threads " << options.threads << " is more than the " << available
              << " CPUs this process may use: using " << available
              << " (more threads than CPUs only queue for them)\n";
  }
  return devices::OpenDevice(device, devices::DeviceOptions{options.threads});
}

void EmitStep(const CommonOptions& options, const std::string& command,
              const suite::StepOutput& step) {
  Emit(options, command, step.tables);
  if (!step.failure.empty()) throw Error(ErrorCode::kInternal, step.failure);
}

}  // namespace opscope::cli
