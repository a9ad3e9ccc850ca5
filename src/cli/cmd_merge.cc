// `opscope merge SUMMARIES... --out DIR`: stage 2 of scale-out analysis over
// rank summaries written by `opscope analyze --summary-only`.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "analyze/scaleout/scaleout.h"
#include "cli/common.h"
#include "cli/run_cli.h"
#include "report/scaleout_report.h"

namespace opscope::cli {

void EmitScaleOut(const analyze::ScaleOutResult& result, const std::string& out,
                  const std::string& format, int top, const std::string& table) {
  if (top < 0) throw Error(ErrorCode::kInvalidArgument, "--top must be >= 0 (0: all)");
  const report::ScaleOutTables tables = report::MakeScaleOutTables(result, top);
  const std::filesystem::path dir(out.empty() ? std::string("opscope-merge") : out);
  report::WriteScaleOutReport(dir, result, tables);
  Emit(CommonOptions{"", format, "", 0, table}, "merge",
       format == "table" ? tables.terminal : tables.all);
  std::cerr << "opscope: wrote " << core::EscapeForTerminal((dir / "merge.json").string())
            << ", merge.html and tables/*.csv (" << result.ranks.size() << " ranks)\n";
}

namespace {

struct MergeCommand {
  std::vector<std::string> inputs;
  std::string out, format = "table", table;
  int top = 20;

  void Run() {
    ExecScaleOut();  // returns where opscope-scaleout is not installed
    // A folder stands for the *.summary files in it, in name order.
    std::vector<std::string> files;
    for (const std::string& input : inputs) {
      std::error_code ec;
      if (std::filesystem::is_directory(input, ec)) {
        std::vector<std::string> found;
        for (const auto& entry : std::filesystem::directory_iterator(input, ec)) {
          if (entry.path().extension() == ".summary") found.push_back(entry.path().string());
        }
        if (ec) throw Error(ErrorCode::kIo, "cannot list '" + input + "': " + ec.message());
        if (found.empty()) {
          throw Error(ErrorCode::kInvalidInput, "'" + input + "' holds no *.summary file");
        }
        std::sort(found.begin(), found.end());
        files.insert(files.end(), found.begin(), found.end());
      } else {
        files.push_back(input);
      }
    }
    EmitScaleOut(analyze::MergeSummaryFiles(files), out, format, top, table);
  }
};

}  // namespace

void RegisterMerge(CLI::App& app) {
  auto command = std::make_shared<MergeCommand>();
  CLI::App* sub = app.add_subcommand(
      "merge",
      "stage 2 of scale-out analysis: rank summaries (opscope analyze --summary-only) reduced to "
      "per-rank and per-step tables, stragglers, collective waits and merged operator statistics");
  sub->add_option("summaries", command->inputs, "rank summary files, or folders of *.summary files")
      ->required();
  sub->add_option("--out", command->out,
                  "folder for merge.json, merge.html and tables/ (default: opscope-merge)")
      ->check(FolderOut());
  sub->add_option("--format", command->format, "table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  AddTableOption(*sub, command->table);
  sub->add_option(
      "--top", command->top,
      "collective calls and operators printed (default 20; 0: all; the files hold all)");
  sub->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
