#include "cli/common.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>

#include "core/output.h"
#include "core/text.h"

namespace opscope::cli {

ExitCode ExitCodeFor(ErrorCode code) {
  switch (code) {
    // A value given on the command line (an option's, an argument's) is wrong:
    // the command line is, whichever layer found it.
    case ErrorCode::kInvalidArgument: return ExitCode::kUsage;
    case ErrorCode::kInvalidInput: return ExitCode::kInvalidInput;
    case ErrorCode::kIo: return ExitCode::kIo;
    case ErrorCode::kUnsupported: return ExitCode::kUnsupported;
    case ErrorCode::kResourceExhausted: return ExitCode::kResourceExhausted;
    case ErrorCode::kFailedPrecondition:
    case ErrorCode::kInternal: return ExitCode::kFailure;
  }
  return ExitCode::kFailure;
}

void CheckStdout() {
  errno = 0;
  std::cout.flush();
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout;
  if (failed) {
    const int error = errno;
    std::clearerr(stdout);
    std::cout.clear();
    throw Error(ErrorCode::kIo, std::string("cannot write to standard output") +
                                    (error != 0 ? std::string(": ") + std::strerror(error) : ""));
  }
}

const CLI::Validator& NotEmpty() {
  static const CLI::Validator validator(
      [](std::string& text) -> std::string {
        return text.empty() ? std::string("must not be empty") : std::string();
      },
      "", "not empty");
  return validator;
}

const CLI::Validator& FolderOut() {
  static const CLI::Validator validator(
      [](std::string& text) -> std::string {
        if (text.empty()) return "must not be empty";
        if (text == "-") {
          return "'-' is standard output, and this command writes a folder (or a file it reads "
                 "back): name one";
        }
        return {};
      },
      "", "a folder");
  return validator;
}

void AddTableOption(CLI::App& app, std::string& table) {
  app.add_option("--table", table,
                 "print only the tables of this section (e.g. operators); --format csv "
                 "prints one table, so needs it where a command has several");
}

void Emit(const CommonOptions& options, const std::string& command,
          const std::vector<report::ResultTable>& all_tables) {
  const report::Format format = report::ParseFormat(options.format);
  const auto sections_of = [](const std::vector<const report::ResultTable*>& tables) {
    std::vector<std::string> names;
    for (const report::ResultTable* t : tables) {
      if (std::find(names.begin(), names.end(), t->section) == names.end()) {
        names.push_back(t->section);
      }
    }
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  std::vector<const report::ResultTable*> chosen;
  for (const report::ResultTable& t : all_tables) {
    if (options.table.empty() || t.section == options.table) chosen.push_back(&t);
  }
  std::vector<const report::ResultTable*> every;
  for (const report::ResultTable& t : all_tables) every.push_back(&t);
  if (!options.table.empty() && chosen.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "--table " + core::EscapeForTerminal(options.table) + ": `opscope " + command +
                    "` has no table of that section here; its tables: " + sections_of(every));
  }
  std::vector<report::ResultTable> tables;
  for (const report::ResultTable* t : chosen) tables.push_back(*t);
  std::string csv;  // one table: the same text as the report's tables/<section>.csv
  if (format == report::Format::kCsv) {
    const std::vector<report::CsvFile> files = report::SplitCsvFiles(chosen);
    if (files.size() > 1 && !options.table.empty()) {
      // One section whose tables differ in columns (one per kind of trace).
      throw Error(ErrorCode::kInvalidArgument,
                  "--format csv writes one table, and the " + std::to_string(files.size()) + " '" +
                      core::EscapeForTerminal(options.table) +
                      "' tables here have different columns (traces of different kinds): use "
                      "--format json" +
                      (command == "analyze" || command == "merge"
                           ? ", or the report's tables/" + core::EscapeForTerminal(options.table) +
                                 "*.csv, one file per kind"
                           : std::string()));
    }
    if (files.size() > 1) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--format csv writes one table, and `opscope " + command + "` has " +
                      std::to_string(files.size()) + " here (" + sections_of(chosen) +
                      "): choose one with --table SECTION, or use --format json" +
                      (command == "analyze" || command == "merge"
                           ? ", or read the report's tables/*.csv (one file per table)"
                           : ""));
    }
    if (!files.empty()) csv = report::TablesCsv(files.front().tables);
  }
  const auto write = [&](std::ostream& out) {
    if (format == report::Format::kCsv) {
      out << csv;
    } else {
      report::Write(out, format, command, tables);
    }
  };
  if (options.out.empty() || options.out == "-") {  // "-": standard output, as without --out
    write(std::cout);
    CheckStdout();
    return;
  }
  std::ostringstream text;
  write(text);
  core::AtomicFileOutput file(options.out, core::HasGzipExtension(options.out));
  file.buffer() = text.str();
  file.Commit();
  std::cerr << "opscope: wrote " << core::EscapeForTerminal(options.out) << '\n';
}

}  // namespace opscope::cli
