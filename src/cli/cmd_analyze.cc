// `opscope analyze TRACE...`: flags to analyze::AnalyzeOptions, then the
// library's analysis, its tables and its report files.
#include <fmt/format.h>

#include <iostream>

#include "analyze/analyze_files.h"
#include "cli/common.h"
#include "core/text.h"
#include "report/analysis_report.h"
#include "report/analysis_tables.h"

namespace opscope::cli {
namespace {

struct AnalyzeCommand {
  analyze::AnalyzeOptions options;
  std::string format = "table";
  std::string out;
  int top = 20;
  std::string ceilings_file;
  bool timings = false;

  void Run() {
    if (top < 0) throw Error(ErrorCode::kInvalidArgument, "--top must be >= 0 (0: all)");
    if (!ceilings_file.empty()) options.ceilings = analyze::LoadRooflineCeilings(ceilings_file);
    const analyze::AnalyzedSet set = analyze::AnalyzeFiles(options);
    if (timings) {
      for (const auto& t : set.traces) {
        std::cerr << fmt::format(
            "opscope: {}: import {:.1f} ms, side files {:.1f} ms, analyses {:.1f} ms\n",
            core::EscapeForTerminal(t.path), t.import_ms, t.side_files_ms, t.analysis_ms);
        std::string passes;
        for (const auto& [name, ms] : t.analysis.pass_ms) {
          passes += fmt::format("{}{} {:.1f}", passes.empty() ? "" : ", ", name, ms);
        }
        std::cerr << "opscope:   passes (ms, running at once): " << passes << "\n";
      }
    }
    const auto tables = report::AnalysisTables(set, {.top = top});
    const std::filesystem::path dir = out.empty()
                                          ? report::DefaultAnalysisDir(set.traces.front().path)
                                          : std::filesystem::path(out);
    const auto t0 = std::chrono::steady_clock::now();
    report::WriteAnalysisReport(dir, set.traces, tables);
    if (timings) {
      std::cerr << fmt::format(
          "opscope: reports {:.1f} ms\n",
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    Emit(CommonOptions{"", format, "", 0}, "analyze", tables);
    std::cerr << "opscope: wrote " << core::EscapeForTerminal((dir / "summary.csv").string())
              << ", analysis.json, analysis.html and tables/*.csv\n";
  }
};

}  // namespace

void RegisterAnalyze(CLI::App& app) {
  auto command = std::make_shared<AnalyzeCommand>();
  CLI::App* sub = app.add_subcommand(
      "analyze", "operator statistics of traces from opscope, PyTorch/Kineto and torch_npu");
  sub->add_option("traces", command->options.inputs,
                  "trace files (.json, kernel_details.csv; plain, .gz or .zip; - for standard "
                  "input), folders of them (one per rank), or Ascend profiler output (a "
                  "*_ascend_pt/_ascend_ms folder, their parent, ASCEND_PROFILER_OUTPUT, PROF_*)")
      ->required();
  sub->add_option("--format", command->format, "table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  sub->add_option(
      "--out", command->out,
      "folder for summary.csv, analysis.json, analysis.html and tables/ (default: beside the "
      "first trace)");
  sub->add_option("--top", command->top, "operators per trace (default 20; 0: all)");
  sub->add_option("--ceilings", command->ceilings_file,
                  "ceilings.json from `opscope bench roofline`");
  sub->add_flag("--timings", command->timings,
                "print the time of each phase (import, analyses, reports) on stderr");
  sub->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
