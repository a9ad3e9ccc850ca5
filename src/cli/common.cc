#include "cli/common.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>

#include "core/machine.h"
#include "core/output.h"
#include "core/text.h"
#include "devices/registry.h"

namespace opscope::cli {

ExitCode ExitCodeFor(ErrorCode code) {
  switch (code) {
    // A value given on the command line (an option's, an argument's) is wrong:
    // the command line is, whichever layer found it.
    case ErrorCode::kInvalidArgument: return ExitCode::kUsage;
    case ErrorCode::kInvalidInput: return ExitCode::kInvalidInput;
    case ErrorCode::kIo: return ExitCode::kIo;
    case ErrorCode::kUnsupported: return ExitCode::kUnsupported;
    case ErrorCode::kResourceExhausted: return ExitCode::kResourceExhausted;
    case ErrorCode::kFailedPrecondition:
    case ErrorCode::kInternal: return ExitCode::kFailure;
  }
  return ExitCode::kFailure;
}

void AddCommonOptions(CLI::App& app, CommonOptions& options, const std::string& out_help) {
  app.add_option("--device", options.device,
                 "device: cpu or cuda:N (default: " + devices::DefaultDevice() + ")");
  app.add_option("--format", options.format, "output format: table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  app.add_option("--out", options.out, out_help);
  app.add_option("--threads", options.threads, "CPU threads to use (default: all)");
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

void CheckStdout() {
  errno = 0;
  std::cout.flush();
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout;
  if (failed) {
    const int error = errno;
    std::clearerr(stdout);
    std::cout.clear();
    throw Error(ErrorCode::kIo, std::string("cannot write to standard output") +
                                    (error != 0 ? std::string(": ") + std::strerror(error) : ""));
  }
}

void Emit(const CommonOptions& options, const std::string& command,
          const std::vector<report::ResultTable>& tables) {
  const report::Format format = report::ParseFormat(options.format);
  if (options.out.empty()) {
    report::Write(std::cout, format, command, tables);
    CheckStdout();
    return;
  }
  std::ostringstream text;
  report::Write(text, format, command, tables);
  core::AtomicFileOutput file(options.out, core::HasGzipExtension(options.out));
  file.buffer() = text.str();
  file.Commit();
  std::cerr << "opscope: wrote " << core::EscapeForTerminal(options.out) << '\n';
}

}  // namespace opscope::cli

namespace opscope::cli {

void EmitStep(const CommonOptions& options, const std::string& command,
              const suite::StepOutput& step) {
  Emit(options, command, step.tables);
  if (!step.failure.empty()) throw Error(ErrorCode::kInternal, step.failure);
}

}  // namespace opscope::cli
