// What every subcommand shares: common options, output, and exit codes.
#ifndef OPSCOPE_CLI_COMMON_H_
#define OPSCOPE_CLI_COMMON_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "core/text.h"
#include "opscope/opscope.h"
#include "report/result_table.h"

namespace opscope::cli {

// Exit statuses, documented in docs/commands/README.md.
enum class ExitCode : int {
  kOk = 0,
  kFailure = 1,            // an internal or unexpected failure
  kUsage = 2,              // the command line is wrong, an option's value included
  kInvalidInput = 3,       // a file's content is wrong
  kIo = 4,                 // a file could not be read or written
  kUnsupported = 5,        // device, format or feature not available here
  kResourceExhausted = 6,  // not enough memory for the request
  kRegression = 7          // diff: slower than --fail-if-slower allows
};

ExitCode ExitCodeFor(ErrorCode code);

struct CommonOptions {
  std::string device;  // empty: the best device present
  std::string format = "table";
  std::string out;    // a file, or a folder for commands that write several files
  int threads = 0;    // CPU threads; 0: all
  std::string table;  // --table: the one section to print; empty: every table
};

using core::SplitList;

// Renders tables to --out (atomically) or stdout, in --format.
// Flushes standard output and throws Error(kIo) when a write to it failed
// (a full disk, /dev/full, a closed pipe): output that was lost is an error.
void CheckStdout();

// --table keeps the tables of that section (an unknown one is a usage error
// naming the sections there are). CSV is one table: several tables (of
// different columns) are refused, naming them and --table, rather than
// concatenated into a file no CSV reader reads.
void Emit(const CommonOptions& options, const std::string& command,
          const std::vector<report::ResultTable>& tables);

}  // namespace opscope::cli
namespace opscope::analyze {
struct ScaleOutResult;
}
namespace opscope::cli {
// Writes a scale-out result's report files into `out` (default
// "opscope-merge") and prints its tables (merge, analyze --scale-out/--mpi).
void EmitScaleOut(const analyze::ScaleOutResult& result, const std::string& out,
                  const std::string& format, int top, const std::string& table = "");
// Adds --table (the one table to print, by its section) to a command.
// Refuses an empty value (`--out ''`): a usage error naming the option.
const CLI::Validator& NotEmpty();
// For --out of a command that writes a folder (or a file opscope reads back):
// not empty, and not "-", which means standard output where the output is one
// printed file (issue 51).
const CLI::Validator& FolderOut();

void AddTableOption(CLI::App& app, std::string& table);

void RegisterInfo(CLI::App& app);
void RegisterDemo(CLI::App& app);
void RegisterBench(CLI::App& app);
void RegisterBenchResNet50(CLI::App& bench);
void RegisterBandwidth(CLI::App& app);
void RegisterSmi(CLI::App& app);
void RegisterMonitor(CLI::App& app);
void RegisterAnalyze(CLI::App& app);
void RegisterMerge(CLI::App& app);
void RegisterRun(CLI::App& app);
// Sets `exit_code` when the comparison fails its gate.
void RegisterConvert(CLI::App& app);
void RegisterDiff(CLI::App& app, int& exit_code);
// Sets `exit_code` to the traced program's exit status.
void RegisterTrace(CLI::App& app, int& exit_code);

}  // namespace opscope::cli

#endif  // OPSCOPE_CLI_COMMON_H_
