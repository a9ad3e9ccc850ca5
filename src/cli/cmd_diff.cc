// `opscope diff BEFORE AFTER`: what got faster or slower, and a gate for CI.
#include <fmt/format.h>

#include <iostream>

#include "analyze/diff.h"
#include "analyze/importer.h"
#include "cli/common.h"
#include "report/diff_tables.h"

namespace opscope::cli {
namespace {

struct DiffCommand {
  std::string before, after;
  std::string format = "table";
  std::string out;
  int top = 20;
  double fail_if_slower = -1;

  int Run() const {
    if (top < 0) throw Error(ErrorCode::kInvalidArgument, "--top must be >= 0 (0: all)");
    const analyze::TraceModel b = analyze::ImportTrace(before), a = analyze::ImportTrace(after);
    const analyze::TraceDiff d = analyze::DiffTraces(b, a);
    Emit(CommonOptions{"", format, out, 0}, "diff", report::DiffTables(before, after, d, top));
    if (fail_if_slower >= 0 && d.change_pct > fail_if_slower) {
      std::cerr << fmt::format(
          "opscope: slower by {:.1f}% ({}), more than --fail-if-slower {:.1f}%\n", d.change_pct,
          d.basis, fail_if_slower);
      return static_cast<int>(ExitCode::kRegression);
    }
    return 0;
  }
};

}  // namespace
void RegisterDiff(CLI::App& app, int& exit_code) {
  auto command = std::make_shared<DiffCommand>();
  CLI::App* sub = app.add_subcommand("diff", "compare two traces: total and per-operator change");
  sub->add_option("before", command->before, "the trace before the change")->required();
  sub->add_option("after", command->after, "the trace after the change")->required();
  sub->add_option("--format", command->format, "table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  sub->add_option("--out", command->out, "write the output to this file");
  sub->add_option("--top", command->top, "operators to list (default 20; 0: all)");
  sub->add_option("--fail-if-slower", command->fail_if_slower,
                  "exit 7 when the time grew by more than this percentage (for CI gates)");
  sub->callback([command, &exit_code] { exit_code = command->Run(); });
}

}  // namespace opscope::cli
