// opscope-scaleout: `opscope analyze` and `opscope merge` in a program
// without device backends (no oneDNN, OpenBLAS or CUDA mapped), which opscope
// runs the scale-out commands in (run_cli.h, ExecScaleOut). Its arguments
// are opscope's: argv[1] is the command.
#include "cli/common.h"
#include "cli/run_cli.h"

int main(int argc, char** argv) {
  opscope::cli::SetIsScaleOutProgram();
  return opscope::cli::RunCli(argc, argv, [](CLI::App& app, int&) {
    opscope::cli::RegisterAnalyze(app);
    opscope::cli::RegisterMerge(app);
  });
}
