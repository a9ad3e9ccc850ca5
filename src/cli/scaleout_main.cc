// opscope-scaleout: `opscope analyze` and `opscope merge` in a program
// without device backends (no oneDNN, OpenBLAS or CUDA mapped), which opscope
// runs the scale-out commands in (run_cli.h, ExecScaleOut). Its arguments
// are opscope's: argv[1] is the command.
#include <cstdlib>  // defines __GLIBC__ where it applies
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli/common.h"
#include "cli/run_cli.h"

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // One trace after another in one process: memory a trace freed goes back
  // to the system at once, so the process's peak stays one trace's (glibc
  // keeps up to 128 KiB plus padding at the heap's top otherwise).
  mallopt(M_TRIM_THRESHOLD, 0);
  mallopt(M_TOP_PAD, 0);
#endif
  opscope::cli::SetIsScaleOutProgram();
  return opscope::cli::RunCli(argc, argv, [](CLI::App& app, int&) {
    opscope::cli::RegisterAnalyze(app);
    opscope::cli::RegisterMerge(app);
  });
}
