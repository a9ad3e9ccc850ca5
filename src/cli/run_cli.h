// The programs' shared main: parses arguments with the commands a program
// registers, maps errors to exit codes (common.h) and messages.
#ifndef OPSCOPE_CLI_RUN_CLI_H_
#define OPSCOPE_CLI_RUN_CLI_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace opscope::cli {

// `add_commands(app, command_exit)` registers the program's commands; a
// command that ends with its own status sets command_exit.
int RunCli(int argc, char** argv, const std::function<void(CLI::App&, int&)>& add_commands);

// The program's own arguments, as main received them (for re-executing
// them in another program: ExecScaleOut).
const std::vector<std::string>& ProgramArguments();

// The scale-out commands (analyze --summary-only/--scale-out/--mpi, merge)
// run in opscope-scaleout, a program with the analyzer and no device
// backend, when it is installed beside this one: its processes do not map
// oneDNN or OpenBLAS (about 6 MB each, which many MPI processes on a node
// would each carry). Replaces this process (execv: same pid, same MPI
// environment); returns when there is no such program or this is it.
void ExecScaleOut();
// Set by opscope-scaleout's main: ExecScaleOut does nothing there.
void SetIsScaleOutProgram();

}  // namespace opscope::cli

#endif  // OPSCOPE_CLI_RUN_CLI_H_
