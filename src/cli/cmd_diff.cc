// `opscope diff BEFORE AFTER`: what got faster or slower, and a gate for CI.
#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "analyze/diff.h"
#include "analyze/importer.h"
#include "cli/common.h"

namespace opscope::cli {
namespace {

using report::Value;

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
    report::ResultTable summary;
    summary.section = "summary";
    summary.title = fmt::format("{} -> {}", before, after);
    summary.columns = {{"metric", "Metric"},
                       {"before", "Before", 3},
                       {"after", "After", 3},
                       {"change", "Change", 3},
                       {"change_pct", "Change %", 1}};
    summary.AddRow({d.basis + " (ms)", d.before_ns / 1e6, d.after_ns / 1e6,
                    (d.after_ns - d.before_ns) / 1e6, d.change_pct});
    summary.AddRow({std::string("steps"), static_cast<double>(d.before_steps),
                    static_cast<double>(d.after_steps),
                    static_cast<double>(d.after_steps - d.before_steps), Value{}});
    report::ResultTable ops;
    ops.section = "operators";
    ops.title = "Operators by change in total time";
    ops.columns = {{"operator", "Operator"},       {"category", "Category"},
                   {"change", "Change"},           {"before_count", "Calls before"},
                   {"after_count", "Calls after"}, {"before_us", "Before us", 3},
                   {"after_us", "After us", 3},    {"delta_us", "Delta us", 3},
                   {"delta_pct", "Delta %", 1}};
    const size_t shown = top == 0 ? d.operators.size() : std::min<size_t>(d.operators.size(), top);
    for (size_t i = 0; i < shown; ++i) {
      const auto& o = d.operators[i];
      const bool both = o.change != "added" && o.change != "removed";
      ops.AddRow({o.name, std::string(analyze::Name(o.cls)), o.change, o.before_count,
                  o.after_count, o.before_ns / 1e3, o.after_ns / 1e3,
                  (o.after_ns - o.before_ns) / 1e3, both ? Value{o.change_pct} : Value{}});
    }
    if (shown < d.operators.size())
      ops.notes.push_back(fmt::format("{} more operators", d.operators.size() - shown));
    Emit(CommonOptions{"", format, out, 0}, "diff", {summary, ops});
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
