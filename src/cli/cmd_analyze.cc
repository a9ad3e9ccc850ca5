// `opscope analyze TRACE...`: flags to analyze::AnalyzeOptions, then the
// library's analysis, its tables and its report files.
#include <fmt/format.h>

#include <iostream>
#include <limits>
#include <map>
#include <vector>

#include "analyze/analyze_files.h"
#include "analyze/scaleout/scaleout.h"
#include "cli/common.h"
#include "cli/run_cli.h"
#include "core/output.h"
#include "core/text.h"
#include "report/analysis_report.h"
#include "report/analysis_tables.h"
#ifdef OPSCOPE_HAVE_MPI
#include "mpi/mpi_scaleout.h"
#endif

namespace opscope::cli {
namespace {

struct AnalyzeCommand {
  analyze::AnalyzeOptions options;
  std::string format = "table";
  std::string out;
  std::string table;
  int top = 20;
  std::string ceilings_file;
  bool timings = false;
  bool list_rules = false;
  // Scale-out analysis (analyze/scaleout/).
  bool summary_only = false, scale_out = false, mpi = false;
  int threads = 1;
  int rank = -1;
  std::string mpi_list;

  void Run() {
    if (list_rules) return ListRules();
    if (out == "-" && !summary_only) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--out: '-' is standard output, and analyze writes a report folder (only "
                  "--summary-only of one trace writes one file): name a folder, or print a "
                  "table with --format json or csv and no --out");
    }
    if (top < 0) throw Error(ErrorCode::kInvalidArgument, "--top must be >= 0 (0: all)");
    if (!ceilings_file.empty()) {
      options.ceilings = analyze::LoadRooflineCeilings(ceilings_file);
      // An input: no output of this command may replace it (core/output.h).
      core::ProtectInput(ceilings_file);
      options.other_inputs.push_back(ceilings_file);
    }
    if (summary_only + scale_out + mpi > 1) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--summary-only, --scale-out and --mpi are three ways to run; pick one");
    }
    if (threads < 1) throw Error(ErrorCode::kInvalidArgument, "--threads must be >= 1");
    // Refused before the work: an analysis always has several tables (findings,
    // operators, ...), and CSV holds one.
    if (format == "csv" && table.empty() && !summary_only) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--format csv prints one table: name it with --table SECTION (findings, "
                  "operators, kernels, steps, ...; `--format json` lists every section), or "
                  "read the report's tables/*.csv, one file per table");
    }
    if (options.inputs.empty() && !(mpi && !mpi_list.empty())) {
      throw Error(ErrorCode::kInvalidArgument,
                  "name at least one trace (or --mpi with --mpi-list)");
    }
    if (!mpi_list.empty() && !mpi)
      throw Error(ErrorCode::kInvalidArgument, "--mpi-list needs --mpi");
    if (rank >= 0 && !summary_only)
      throw Error(ErrorCode::kInvalidArgument, "--rank needs --summary-only");
    if (threads != 1 && !(summary_only || scale_out || mpi)) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--threads needs --summary-only, --scale-out or --mpi (a single analysis "
                  "already runs on every core)");
    }
    if (!options.graph_capture.empty() && (summary_only || scale_out || mpi)) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--graph-capture is read by one analysis of the traces, not by scale-out "
                  "analysis (--summary-only, --scale-out, --mpi)");
    }
    if (options.strict && (summary_only || scale_out || mpi)) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--strict is read by one analysis of the traces, not by scale-out analysis "
                  "(--summary-only, --scale-out, --mpi)");
    }
    if (summary_only || scale_out || mpi) ExecScaleOut();  // returns where it is not installed
    if (summary_only) return WriteSummaries();
    if (scale_out) return ScaleOut();
    if (mpi) return Mpi();
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
    // The terminal and analysis.html show the top rows; analysis.json, the
    // tables/*.csv files and --format json/csv hold every row.
    const auto tables = report::AnalysisTables(set, {.top = top});
    const auto every_row = top == 0 ? tables : report::AnalysisTables(set, {.top = 0});
    const std::filesystem::path dir = out.empty()
                                          ? report::DefaultAnalysisDir(options.inputs.front())
                                          : std::filesystem::path(out);
    const auto t0 = std::chrono::steady_clock::now();
    report::WriteAnalysisReport(dir, set.traces, tables, every_row);
    if (timings) {
      std::cerr << fmt::format(
          "opscope: reports {:.1f} ms\n",
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    Emit(CommonOptions{"", format, "", 0, table}, "analyze",
         format == "table" ? tables : every_row);
    std::cerr << "opscope: wrote " << core::EscapeForTerminal((dir / "summary.csv").string())
              << ", analysis.json, analysis.html and tables/*.csv\n";
  }

  analyze::SummarizeOptions SummarizeOpts() const {
    return {.ceilings = options.ceilings, .threads = threads};
  }

  // Stage 1 by hand: one summary per trace found.
  void WriteSummaries() {
    analyze::TraceInputs found = analyze::FindTraceInputs(options.inputs);
    if (rank >= 0 && found.traces.size() != 1) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--rank names the rank of one trace; these inputs hold " +
                      std::to_string(found.traces.size()));
    }
    std::vector<analyze::UnusedFile> unused = std::move(found.unused);
    const std::vector<std::string> docs =
        analyze::SummarizeTraces(found.traces, {}, SummarizeOpts(), unused);
    ReportUnused(unused);
    // One trace: --out is the file ("-": standard output). Several: --out is
    // a folder of rank-<R>.summary.
    if (out == "-" && docs.size() != 1) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--out - writes one trace's summary to standard output; these inputs hold " +
                      std::to_string(docs.size()) + " traces (name a folder)");
    }
    const bool one = docs.size() == 1 && !std::filesystem::is_directory(out);
    // A folder of summaries is never a folder of the command's inputs (the
    // traces' own folder): its summaries would land among the traces.
    if (!one && !out.empty()) core::RefuseInputAsOutput(out);
    // A folder holds one rank-<R>.summary per rank: two traces of one rank
    // would write one file, the second replacing the first.
    std::vector<analyze::RankTraceSummary> summaries;
    for (const std::string& doc : docs) {
      summaries.push_back(analyze::ParseSummaryBytes(doc, "summary"));
      if (rank >= 0) summaries.back().rank = rank;
    }
    std::map<int64_t, std::string> traces_by_rank;
    for (const analyze::RankTraceSummary& s : summaries) {
      const auto [it, fresh] = traces_by_rank.emplace(s.rank, s.path);
      if (!fresh && !one) {  // (standard output takes one trace, refused above)
        throw Error(ErrorCode::kInvalidInput,
                    "'" + core::EscapeForTerminal(it->second) + "' and '" +
                        core::EscapeForTerminal(s.path) + "' are both rank " +
                        std::to_string(it->first) + ": their summaries would be one file, " +
                        "rank-" + std::to_string(it->first) +
                        ".summary (summarize them into separate --out folders)");
      }
    }
    for (const analyze::RankTraceSummary& s : summaries) {
      if (out == "-") {  // the gzip file's bytes, every write checked
        std::cout << analyze::CompressSummary(analyze::SerializeSummary(s));
        CheckStdout();
        std::cerr << "opscope: wrote the summary to standard output (rank " << s.rank << ", "
                  << s.operators.size() << " operators, " << s.steps.size() << " steps, "
                  << s.collectives.size() << " collective calls)\n";
        continue;
      }
      const std::string name = "rank-" + std::to_string(s.rank) + ".summary";
      const std::filesystem::path path =
          one && !out.empty()
              ? std::filesystem::path(out)
              : (out.empty() ? std::filesystem::path(".") : std::filesystem::path(out)) / name;
      if (!one) {
        std::error_code ec;
        std::filesystem::create_directories(path.parent_path(), ec);
        if (ec) {
          throw Error(ErrorCode::kIo, "cannot create the folder '" + path.parent_path().string() +
                                          "': " + ec.message());
        }
      }
      analyze::WriteSummaryFile(path, s);
      std::cerr << "opscope: wrote " << core::EscapeForTerminal(path.string()) << " (rank "
                << s.rank << ", " << s.operators.size() << " operators, " << s.steps.size()
                << " steps, " << s.collectives.size() << " collective calls)\n";
    }
  }

  // Both stages in this process, stage 1 on --threads threads.
  void ScaleOut() {
    analyze::TraceInputs found = analyze::FindTraceInputs(options.inputs);
    std::vector<analyze::UnusedFile> unused = std::move(found.unused);
    const std::vector<std::string> docs =
        analyze::SummarizeTraces(found.traces, {}, SummarizeOpts(), unused);
    ReportUnused(unused);
    std::vector<std::string> names;
    for (const auto& t : found.traces) names.push_back(t.Shown());
    EmitScaleOut(analyze::MergeSummaryDocuments({docs.begin(), docs.end()}, names), out, format,
                 top, table);
  }

  void Mpi() {
#ifdef OPSCOPE_HAVE_MPI
    struct Finalize {
      ~Finalize() { mpi::FinalizeMpi(); }
    } finalize;
    std::vector<mpi::Assignment> inputs;
    if (!mpi_list.empty()) inputs = mpi::ReadAssignments(mpi_list);
    for (const std::string& input : options.inputs) inputs.push_back({input, -1});
    if (inputs.empty())
      throw Error(ErrorCode::kInvalidArgument, "--mpi needs traces or --mpi-list");
    mpi::MpiRun run = mpi::RunScaleOut(inputs, SummarizeOpts());
    if (!run.result) return;  // not process 0
    std::string counts;
    for (const int64_t n : run.traces_per_process) {
      counts += (counts.empty() ? "" : ", ") + std::to_string(n);
    }
    std::cerr << "opscope: " << run.processes << " MPI processes; traces per process: " << counts
              << "\n";
    EmitScaleOut(*run.result, out, format, top, table);
#else
    throw Error(ErrorCode::kUnsupported,
                "this opscope was built without MPI: install an MPI (Debian: libopenmpi-dev "
                "openmpi-bin) and build again, or run the same analysis on threads with "
                "--scale-out --threads N");
#endif
  }

  // The advisor's rules as the registry holds them, with the thresholds in force.
  void ListRules() const {
    // Nothing else is done with --list-rules: an option it would ignore is
    // refused, not silently dropped (issue 51).
    const std::vector<std::pair<bool, const char*>> ignored = {
        {!options.inputs.empty(), "a trace"},
        {!out.empty(), "--out"},
        {summary_only, "--summary-only"},
        {scale_out, "--scale-out"},
        {mpi, "--mpi"},
        {!ceilings_file.empty(), "--ceilings"},
        {!options.graph_capture.empty(), "--graph-capture"},
        {options.strict, "--strict"},
        {table != "" && table != "rules", "--table other than rules"}};
    for (const auto& [given, what] : ignored) {
      if (given) {
        throw Error(
            ErrorCode::kInvalidArgument,
            std::string("--list-rules only lists the rules: ") + what + " is not used with it");
      }
    }
    report::ResultTable table;
    table.section = "rules";
    table.title = "The advisor's rules, in the order they are applied";
    table.columns = {{"id", "Finding"}, {"needs", "Reads (passes)"}, {"when", "Fires when"}};
    for (const analyze::Rule& rule : analyze::Rules()) {
      std::string needs;
      for (const std::string_view n : rule.needs) {
        needs += (needs.empty() ? "" : ", ") + std::string(n);
      }
      table.AddRow({std::string(rule.id), needs.empty() ? std::string("(side files)") : needs,
                    rule.when(options.thresholds)});
    }
    report::Write(std::cout, report::ParseFormat(format), "analyze --list-rules", {table});
    CheckStdout();
  }

  static void ReportUnused(const std::vector<analyze::UnusedFile>& unused) {
    for (const auto& u : unused) {
      std::cerr << "opscope: not used: " << core::EscapeForTerminal(u.path + ": " + u.reason)
                << "\n";
    }
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
                  "*_ascend_pt/_ascend_ms folder, their parent, ASCEND_PROFILER_OUTPUT, PROF_*)");
  sub->add_option("--format", command->format, "table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  AddTableOption(*sub, command->table);
  sub->add_option("--out", command->out,
                  "folder for summary.csv, analysis.json, analysis.html and tables/ (default: "
                  "NAME.opscope-analysis in the current folder, NAME the first input's)")
      ->check(NotEmpty());
  sub->add_option("--top", command->top, "operators per trace (default 20; 0: all)");
  sub->add_option("--ceilings", command->ceilings_file,
                  "ceilings.json from `opscope bench roofline`");
  sub->add_option("--graph-capture", command->options.graph_capture,
                  "a trace of the CUDA/HIP graph capture the traces replay: each replayed "
                  "kernel is charged to the operator that captured it (table graph_kernels)")
      ->check(NotEmpty());
  sub->add_flag("--summary-only", command->summary_only,
                "stage 1 of scale-out analysis: write each trace's rank summary (--out: the "
                "file for one trace, else a folder of rank-<R>.summary) for `opscope merge`");
  sub->add_flag("--scale-out", command->scale_out,
                "scale-out analysis in this process: a summary per trace on --threads threads, "
                "then the merge (--out: its folder)");
  sub->add_flag("--mpi", command->mpi,
                "scale-out analysis under mpirun: each process summarises its share of the "
                "traces, process 0 merges");
  sub->add_option("--mpi-list", command->mpi_list,
                  "with --mpi: a file of traces, one per line, each optionally preceded by the "
                  "MPI process that reads it (else dealt round-robin)");
  sub->add_option(
      "--threads", command->threads,
      "with --summary-only, --scale-out or --mpi: traces summarised at once (default 1)");
  sub->add_option("--rank", command->rank,
                  "with --summary-only: the rank of the one trace, when it does not say")
      ->check(CLI::Range(0, std::numeric_limits<int>::max(), "an integer from 0"));
  sub->add_flag("--list-rules", command->list_rules,
                "list the advisor's rules (finding, passes read, when it fires) and exit");
  sub->add_flag("--strict", command->options.strict,
                "all or nothing: fail on a trace whose reader must leave records out, or on an "
                "unreadable trace among several, instead of counting and listing them (the "
                "trace_health table) and analysing the rest");
  sub->add_flag("--timings", command->timings,
                "print the time of each phase (import, analyses, reports) on stderr");
  sub->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
