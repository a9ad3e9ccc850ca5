#include "cli/run_cli.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "cli/build_info.h"
#include "cli/common.h"
#include "cli/completion.h"
#include "cli/usage_errors.h"
#include "core/output.h"
#include "core/text.h"

namespace opscope::cli {
namespace {

std::vector<std::string>& Arguments() {
  static std::vector<std::string> arguments;
  return arguments;
}
bool is_scaleout_program = false;

}  // namespace

const std::vector<std::string>& ProgramArguments() { return Arguments(); }
void SetIsScaleOutProgram() { is_scaleout_program = true; }

void ExecScaleOut() {
  if (is_scaleout_program || Arguments().empty()) return;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return;
  const auto lean = self.parent_path() / "opscope-scaleout";
  if (!std::filesystem::is_regular_file(lean, ec) || access(lean.c_str(), X_OK) != 0) return;
  std::vector<char*> argv;
  for (std::string& a : Arguments()) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  execv(lean.c_str(), argv.data());
  // Not replaced: run here, as if it were not installed.
}

namespace {

// --help and --version print to standard output too: a write that failed
// (a full disk, /dev/full, a closed pipe) is an I/O error, not success.
int HelpExit(const CLI::App& app, const CLI::Error& e) {
  const int code = app.exit(e);
  try {
    CheckStdout();
  } catch (const Error& error) {
    std::cerr << "opscope: error: " << core::EscapeForTerminal(error.what()) << '\n';
    return static_cast<int>(ExitCodeFor(error.code()));
  }
  return code;
}

}  // namespace

int RunCli(int argc, char** argv, const std::function<void(CLI::App&, int&)>& add_commands) {
  Arguments().assign(argv, argv + argc);
  // A run killed by SIGINT/SIGTERM removes the temporary files it was writing.
  core::InstallTempFileCleanup();
  CLI::App app{"opscope: performance analysis for AI accelerators"};
  app.set_version_flag("--version", std::string("opscope ") + BuildDescription());
  app.require_subcommand(1);
  int command_exit = 0;
  add_commands(app, command_exit);
  // `completion bash`: the completion script from the commands just registered
  // (and this one: it is listed and completed too).
  const std::string program = std::filesystem::path(argc > 0 ? argv[0] : "opscope").filename();
  std::string shell;
  CLI::App* completion = app.add_subcommand("completion", "print a shell completion script");
  completion->add_option("shell", shell, "the shell (bash)")
      ->required()
      ->check(CLI::IsMember({"bash"}));
  completion->callback([&app, &program] { std::cout << BashCompletion(app, program); });
  try {
    app.parse(argc, argv);
    CheckStdout();  // the last buffered bytes reached their file
  } catch (const CLI::CallForHelp& e) {
    return HelpExit(app, e);
  } catch (const CLI::CallForVersion& e) {
    return HelpExit(app, e);
  } catch (const CLI::ParseError& e) {
    std::cerr << UsageMessage(app, e, std::vector<std::string>(argv + 1, argv + argc)) << '\n';
    return static_cast<int>(ExitCode::kUsage);
  } catch (const Error& e) {
    std::cerr << "opscope: error: " << core::EscapeForTerminal(e.what()) << '\n';
    return static_cast<int>(ExitCodeFor(e.code()));
  } catch (const std::bad_alloc&) {
    std::cerr << "opscope: error: out of memory\n";
    return static_cast<int>(ExitCode::kResourceExhausted);
  } catch (const std::exception& e) {
    std::cerr << "opscope: error: " << core::EscapeForTerminal(e.what()) << '\n';
    return static_cast<int>(ExitCode::kFailure);
  }
  return command_exit;
}

}  // namespace opscope::cli
