// The opscope command line: parses arguments, calls the library, maps errors to
// exit codes. Nothing else lives here.
#include "cli/common.h"
#include "cli/run_cli.h"

int main(int argc, char** argv) {
  return opscope::cli::RunCli(argc, argv, [](CLI::App& app, int& command_exit) {
    opscope::cli::RegisterInfo(app);
    opscope::cli::RegisterDemo(app);
    opscope::cli::RegisterBench(app);
    opscope::cli::RegisterBandwidth(app);
    opscope::cli::RegisterSmi(app);
    opscope::cli::RegisterMonitor(app);
    opscope::cli::RegisterAnalyze(app);
    opscope::cli::RegisterMerge(app);
    opscope::cli::RegisterRun(app);
    opscope::cli::RegisterDiff(app, command_exit);
    opscope::cli::RegisterConvert(app);
    opscope::cli::RegisterTrace(app, command_exit);
  });
}
