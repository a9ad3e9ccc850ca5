#include "cli/common.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>

#include "core/output.h"
#include "core/text.h"

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
