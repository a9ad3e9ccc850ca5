#include "cli/common.h"

#include <iostream>
#include <sstream>

#include "core/output.h"
#include "core/text.h"

namespace opscope::cli {

ExitCode ExitCodeFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
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
  app.add_option("--device", options.device, "device to use: cpu (the default)");
  app.add_option("--format", options.format, "output format: table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  app.add_option("--out", options.out, out_help);
}

void CheckDevice(const std::string& device) {
  if (device == "cpu") return;
  throw Error(ErrorCode::kUnsupported, "unknown or unavailable device '" +
                                           core::EscapeForTerminal(device) +
                                           "': this build of opscope has: cpu");
}

void Emit(const CommonOptions& options, const std::string& command,
          const std::vector<report::ResultTable>& tables) {
  const report::Format format = report::ParseFormat(options.format);
  if (options.out.empty()) {
    report::Write(std::cout, format, command, tables);
    std::cout.flush();
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
