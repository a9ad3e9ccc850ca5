// `opscope diff BEFORE AFTER`: what got faster or slower, and a gate for CI.
// Files are compared as traces; folders of rank traces rank by rank.
#include <cctype>
#include <cmath>
#include <iostream>

#include "cli/common.h"
#include "core/text.h"
#include "report/diff_tables.h"

namespace opscope::cli {
namespace {

struct DiffCommand {
  std::string before, after;
  std::string format = "table";
  std::string out;
  std::string table;
  int top = 20;
  double fail_if_slower = -1;
  bool gate = false;

  int Run() const {
    const report::DiffOutcome d =
        report::DiffFiles(before, after, top, gate ? std::optional(fail_if_slower) : std::nullopt);
    Emit(CommonOptions{"", format, out, 0, table}, "diff", d.tables);
    if (d.failed) {
      std::cerr << "opscope: " << core::EscapeForTerminal(d.failure) << "\n";
      return static_cast<int>(ExitCode::kRegression);
    }
    return 0;
  }
};

}  // namespace
void RegisterDiff(CLI::App& app, int& exit_code) {
  auto command = std::make_shared<DiffCommand>();
  CLI::App* sub = app.add_subcommand(
      "diff",
      "compare two traces (or folders of rank traces): step time with its noise, and "
      "per-operator change");
  sub->add_option("before", command->before, "the trace (or folder of rank traces) before")
      ->required();
  sub->add_option("after", command->after, "the trace (or folder of rank traces) after")
      ->required();
  sub->add_option("--format", command->format, "table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  sub->add_option("--out", command->out, "write the output to this file")->check(NotEmpty());
  AddTableOption(*sub, command->table);
  sub->add_option("--top", command->top, "operators to list (default 20; 0: all)");
  // A command-line error (exit 2) naming the option: NaN, infinities and
  // negative values would make the gate never fire.
  sub->add_option("--fail-if-slower", command->fail_if_slower,
                  "exit 7 when the median complete step grew by more than this percentage "
                  "beyond the noise between steps (a finite percentage >= 0; for CI gates)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            // Decimal only: strtod would also read hexadecimal (0x10 as 16),
            // leading white space and "inf".
            const bool decimal =
                !text.empty() &&
                (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.') &&
                text.find_first_not_of("0123456789.eE+-") == std::string::npos;
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (!decimal || end == text.c_str() || *end != '\0' || !std::isfinite(v) || v < 0) {
              return "must be a finite percentage >= 0, not '" + text + "'";
            }
            return {};
          },
          "PERCENT", "finite percentage"));
  sub->callback([command, sub, &exit_code] {
    command->gate = sub->count("--fail-if-slower") > 0;
    exit_code = command->Run();
  });
}

}  // namespace opscope::cli
