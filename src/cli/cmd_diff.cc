// `opscope diff BEFORE AFTER`: what got faster or slower, and a gate for CI.
// Files are compared as traces; folders of rank traces rank by rank.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "analyze/diff.h"
#include "analyze/importer.h"
#include "cli/common.h"
#include "core/text.h"
#include "report/diff_tables.h"

namespace opscope::cli {
namespace {

struct DiffCommand {
  std::string before, after;
  std::string format = "table";
  std::string out;
  int top = 20;
  double fail_if_slower = -1;
  bool gate = false;

  int Run() const {
    if (top < 0) throw Error(ErrorCode::kInvalidArgument, "--top must be >= 0 (0: all)");
    std::error_code ec;
    const bool folders =
        std::filesystem::is_directory(before, ec) || std::filesystem::is_directory(after, ec);
    const std::vector<std::string> bs = analyze::FindTraceFiles({before}),
                                   as = analyze::FindTraceFiles({after});
    if (folders && bs.size() != as.size()) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("'{}' holds {} rank traces but '{}' holds {}: ranks cannot be paired",
                              before, bs.size(), after, as.size()));
    }
    std::vector<report::ResultTable> tables;
    report::ResultTable ranks;
    ranks.section = "ranks";
    ranks.title = "Rank by rank";
    ranks.columns = {{"rank", "Rank"},
                     {"before", "Before"},
                     {"after", "After"},
                     {"basis", "Basis"},
                     {"before_ms", "Before ms", 3},
                     {"after_ms", "After ms", 3},
                     {"change_pct", "Change %", 1},
                     {"ci_low_pct", "CI low %", 1},
                     {"ci_high_pct", "CI high %", 1},
                     {"verdict", "Verdict"},
                     {"gate", "Gate"}};
    bool failed = false;
    std::string worst;
    for (size_t r = 0; r < bs.size(); ++r) {
      const analyze::TraceModel b = analyze::ImportTrace(bs[r]), a = analyze::ImportTrace(as[r]);
      const analyze::TraceDiff d = analyze::DiffTraces(b, a);
      const bool regressed = gate && analyze::Regressed(d, fail_if_slower);
      if (regressed && !failed) {
        worst = fmt::format(
            "{}slower by {:.1f}% ({}{}), more than --fail-if-slower {:.1f}%",
            folders ? fmt::format("rank {}: ", r) : std::string(), d.change_pct, d.basis,
            d.has_interval
                ? fmt::format(", 95% CI [{:+.1f}%, {:+.1f}%]", d.ci_low_pct, d.ci_high_pct)
                : std::string(", noise unknown"),
            fail_if_slower);
      }
      failed |= regressed;
      if (!folders) {
        tables = report::DiffTables(bs[r], as[r], d, top);
      } else {
        ranks.AddRow({static_cast<int64_t>(r), bs[r], as[r], d.basis, d.before_ns / 1e6,
                      d.after_ns / 1e6, d.change_pct,
                      d.has_interval ? report::Value{d.ci_low_pct} : report::Value{},
                      d.has_interval ? report::Value{d.ci_high_pct} : report::Value{}, d.verdict,
                      std::string(!gate       ? "-"
                                  : regressed ? "fail"
                                              : "pass")});
      }
    }
    if (folders) tables.push_back(std::move(ranks));
    if (gate && !tables.empty()) {
      tables.front().notes.push_back(
          fmt::format("Gate --fail-if-slower {:.1f}%: fails when the median step is slower by "
                      "more than this and the 95% confidence interval of the change lies above "
                      "zero (without a noise estimate, on the change alone): {}",
                      fail_if_slower, failed ? "FAIL" : "pass"));
    }
    Emit(CommonOptions{"", format, out, 0}, "diff", tables);
    if (failed) {
      std::cerr << "opscope: " << core::EscapeForTerminal(worst) << "\n";
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
  sub->add_option("--out", command->out, "write the output to this file");
  sub->add_option("--top", command->top, "operators to list (default 20; 0: all)");
  // A command-line error (exit 2) naming the option: NaN, infinities and
  // negative values would make the gate never fire.
  sub->add_option("--fail-if-slower", command->fail_if_slower,
                  "exit 7 when the median complete step grew by more than this percentage "
                  "beyond the noise between steps (a finite percentage >= 0; for CI gates)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (text.empty() || end == text.c_str() || *end != '\0' || !std::isfinite(v) || v < 0) {
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
