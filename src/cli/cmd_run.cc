// `opscope run`: flags to suite::RunSuite, progress on a terminal.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>

#include "cli/common.h"
#include "core/text.h"
#include "suite/run.h"
#include "workloads/progress.h"

namespace opscope::cli {

void RegisterRun(CLI::App& app) {
  auto options = std::make_shared<suite::SuiteOptions>();
  auto out = std::make_shared<std::string>("opscope-report");
  CLI::App* sub = app.add_subcommand(
      "run", "the whole suite on one device into one report (index.html, results.json)");
  sub->add_option("--device", options->device, "device to use (default: the best present)");
  sub->add_option("--out", *out, "report folder (default opscope-report)")->check(FolderOut());
  sub->add_flag("--quick", options->quick, "small sizes: the whole run in under 30 s");
  sub->add_option("--analyze", options->extra_traces,
                  "further traces to analyze into the report (e.g. from PyTorch)");
  sub->callback([options, out] {
    options->out = *out;
    const bool terminal = ::isatty(STDERR_FILENO) != 0;
    workloads::Progress::SetSilent(!terminal);  // quiet and machine-readable off a terminal
    options->on_step = [terminal](size_t i, size_t n, const report::RunStep& step, bool done) {
      if (!done && terminal) {
        std::cerr << fmt::format("opscope run [{}/{}] {}: opscope {}\n", i + 1, n, step.title,
                                 core::EscapeForTerminal(step.command));
      } else if (done && step.status != "ok") {
        std::cerr << "opscope run: " << core::EscapeForTerminal(step.title)
                  << " failed: " << core::EscapeForTerminal(step.error) << '\n';
      } else if (done && terminal) {
        std::cerr << fmt::format("opscope run [{}/{}] done in {:.1f} s\n", i + 1, n, step.seconds);
      }
    };
    const suite::SuiteResult result = suite::RunSuite(*options);
    std::cout << fmt::format("opscope run: {} steps, {} failed; report in {}\n",
                             result.steps.size(), result.failed,
                             core::EscapeForTerminal(result.index_html.string()));
    if (result.failed > 0) {
      throw Error(ErrorCode::kInternal,
                  fmt::format("{} of {} steps failed (see {})", result.failed, result.steps.size(),
                              result.index_html.string()));
    }
  });
}

}  // namespace opscope::cli
