// The opscope command line: parses arguments, calls the library, maps errors to
// exit codes. Nothing else lives here.
#include <iostream>
#include <string>
#include <vector>

#include "cli/common.h"
#include "cli/usage_errors.h"
#include "core/output.h"
#include "core/text.h"
#include "opscope/version.h"

int main(int argc, char** argv) {
  using opscope::cli::ExitCode;
  // A run killed by SIGINT/SIGTERM removes the temporary files it was writing.
  opscope::core::InstallTempFileCleanup();
  CLI::App app{"opscope: performance analysis for AI accelerators"};
  app.set_version_flag("--version", "opscope " OPSCOPE_VERSION_STRING);
  app.require_subcommand(1);
  opscope::cli::RegisterInfo(app);
  opscope::cli::RegisterDemo(app);
  opscope::cli::RegisterBench(app);
  opscope::cli::RegisterBandwidth(app);
  opscope::cli::RegisterSmi(app);
  opscope::cli::RegisterMonitor(app);
  opscope::cli::RegisterAnalyze(app);
  opscope::cli::RegisterMerge(app);
  opscope::cli::RegisterRun(app);
  int command_exit = 0;
  opscope::cli::RegisterDiff(app, command_exit);
  opscope::cli::RegisterTrace(app, command_exit);
  try {
    app.parse(argc, argv);
    opscope::cli::CheckStdout();  // the last buffered bytes reached their file
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << opscope::cli::UsageMessage(app, e, std::vector<std::string>(argv + 1, argv + argc))
              << '\n';
    return static_cast<int>(ExitCode::kUsage);
  } catch (const opscope::Error& e) {
    std::cerr << "opscope: error: " << opscope::core::EscapeForTerminal(e.what()) << '\n';
    return static_cast<int>(opscope::cli::ExitCodeFor(e.code()));
  } catch (const std::bad_alloc&) {
    std::cerr << "opscope: error: out of memory\n";
    return static_cast<int>(ExitCode::kResourceExhausted);
  } catch (const std::exception& e) {
    std::cerr << "opscope: error: " << opscope::core::EscapeForTerminal(e.what()) << '\n';
    return static_cast<int>(ExitCode::kFailure);
  }
  return command_exit;
}
