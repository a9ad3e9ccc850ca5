// `opscope convert INPUT... --to perfetto|sqlite -o OUT`: every input opscope
// reads written as one Chrome trace (analyze/convert/chrome_trace.h) or, with
// its analysis, as one SQLite database (report/sqlite_export.h).
#include <fmt/format.h>

#include <iostream>

#include "analyze/convert/chrome_trace.h"
#include "cli/common.h"
#include "core/output.h"
#include "core/text.h"
#include "report/analysis_tables.h"
#include "report/sqlite_export.h"

namespace opscope::cli {
namespace {

// Standard output as an OutputStream; every write checked (CheckStdout).
class StdoutOutput final : public core::OutputStream {
 private:
  void WriteOut(std::string_view bytes) override {
    std::cout.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    CheckStdout();
  }
};

struct ConvertCommand {
  std::vector<std::string> inputs;
  std::string to;
  std::string out;

  void Run() const {
    if (to == "sqlite") return RunSqlite();
    core::ForgetInputs();  // a new command: its own inputs only (core/output.h)
    // The inputs are found (and registered as inputs no output may replace)
    // before the output is created: `-o` naming one of them is refused
    // before any work.
    analyze::TraceInputs found = analyze::FindTraceInputs(inputs);
    analyze::ConvertOutcome outcome;
    if (out == "-") {
      StdoutOutput stream;
      outcome = analyze::WriteChromeTrace(std::move(found), stream);
    } else {
      core::AtomicFileOutput file(out, core::HasGzipExtension(out));
      outcome = analyze::WriteChromeTrace(std::move(found), file);
      file.Commit();
    }
    uint64_t events = 0, flows = 0;
    for (const analyze::ConvertedTrace& t : outcome.traces) events += t.events, flows += t.flows;
    std::cerr << fmt::format("opscope: wrote {}: {} events and {} launch flows from {} input{}\n",
                             core::EscapeForTerminal(out == "-" ? "standard output" : out), events,
                             flows, outcome.traces.size(), outcome.traces.size() == 1 ? "" : "s");
    for (const analyze::ConvertedTrace& t : outcome.traces) {
      std::cerr << fmt::format("  {}{} ({}): {} events on {} tracks, {} flows\n",
                               core::EscapeForTerminal(t.path),
                               t.rank >= 0 ? fmt::format(", rank {}", t.rank) : "", t.format,
                               t.events, t.tracks, t.flows);
      for (const std::string& note : t.notes) {
        std::cerr << "    note: " << core::EscapeForTerminal(note) << '\n';
      }
    }
    PrintUnused(outcome.unused);
  }

  // The model and the analysis of every input (as `opscope analyze` makes
  // them) into one SQLite database.
  void RunSqlite() const {
    if (out == "-") {
      throw Error(ErrorCode::kInvalidArgument,
                  "-o: an SQLite database is written to a file (SQLite needs to seek): name one");
    }
    analyze::AnalyzeOptions options;
    options.inputs = inputs;
    options.keep_models = true;
    const analyze::AnalyzedSet set = analyze::AnalyzeFiles(options);
    const auto tables = report::AnalysisTables(set, {.top = 0});
    const report::SqliteExportCounts n = report::WriteSqlite(set, tables, out);
    std::cerr << fmt::format(
        "opscope: wrote {}: {} events and {} launch flows from {} input{}, {} analysis tables "
        "({} rows)\n",
        core::EscapeForTerminal(out), n.events, n.flows, set.traces.size(),
        set.traces.size() == 1 ? "" : "s", n.analysis_tables, n.analysis_rows);
    PrintUnused(set.unused);
  }

  static void PrintUnused(const std::vector<analyze::UnusedFile>& unused) {
    for (const analyze::UnusedFile& f : unused) {
      std::cerr << "  not read: " << core::EscapeForTerminal(f.path) << ": "
                << core::EscapeForTerminal(f.reason) << '\n';
    }
  }
};

}  // namespace

void RegisterConvert(CLI::App& app) {
  auto command = std::make_shared<ConvertCommand>();
  CLI::App* sub = app.add_subcommand(
      "convert",
      "write traces of any format opscope reads (several ranks, an Ascend folder, an Nsight "
      "export, XPlane, ...) as one Chrome trace that Perfetto opens, or with their analysis as "
      "one SQLite database");
  sub->add_option("inputs", command->inputs,
                  "traces, folders of rank traces or archives, as analyze takes them")
      ->required();
  sub->add_option("--to", command->to,
                  "perfetto: one Chrome JSON trace; sqlite: the events and every analysis table "
                  "as one SQLite database")
      ->required()
      ->check(CLI::IsMember({"perfetto", "sqlite"}));
  sub->add_option("-o,--out", command->out,
                  "the file to write: a trace (.json, .json.gz compressed; '-': standard output) "
                  "or a database")
      ->required()
      ->check(NotEmpty());
  sub->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
