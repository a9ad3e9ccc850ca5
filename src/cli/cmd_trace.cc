// `opscope trace -o t.json -- CMD ARGS`: profiles an unmodified CUDA program
// (devices::TraceProgram) and says where its traces are.
#include <iostream>

#include "cli/common.h"
#include "core/text.h"
#include "devices/trace_program.h"

namespace opscope::cli {
namespace {

struct TraceCommand {
  std::string out;
  std::vector<std::string> command;

  void Run(int& exit_code) const {
    const devices::TraceProgramResult r = devices::TraceProgram({"cuda", command, out});
    exit_code = r.exit_status;
    std::cerr << "opscope trace: wrote " << core::EscapeForTerminal(r.written[0].string());
    if (r.written.size() > 1) {
      std::cerr << " and " << r.written.size() - 1
                << " trace(s) of other processes that used CUDA:";
      for (size_t i = 1; i < r.written.size(); ++i) {
        std::cerr << ' ' << core::EscapeForTerminal(r.written[i].string());
      }
    }
    std::cerr << (r.outcome.empty() ? "" : " (" + r.outcome + ")") << "\n"
              << "opscope trace: next, opscope analyze " << core::EscapeForTerminal(out) << "\n";
  }
};

}  // namespace

void RegisterTrace(CLI::App& app, int& exit_code) {
  auto command = std::make_shared<TraceCommand>();
  CLI::App* sub = app.add_subcommand(
      "trace", "profile an unmodified CUDA program (CUPTI): opscope trace -o t.json -- CMD ARGS");
  sub->add_option("-o,--out", command->out, "the trace to write (.json or .json.gz)")->required();
  sub->add_option("command", command->command, "the program and its arguments, after --")
      ->expected(-1);
  sub->callback([command, &exit_code] { command->Run(exit_code); });
}

}  // namespace opscope::cli
