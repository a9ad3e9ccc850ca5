// Shell completion generated from the program's own option table.
#ifndef OPSCOPE_CLI_COMPLETION_H_
#define OPSCOPE_CLI_COMPLETION_H_

#include <CLI/CLI.hpp>
#include <string>

namespace opscope::cli {

// A bash completion script for `program` from `app`'s commands and options
// (nested subcommands, the options that take values, IsMember choices,
// positional files; after `--`, another program's command line). Hidden
// commands and options (an empty group) are left out.
std::string BashCompletion(CLI::App& app, const std::string& program);

}  // namespace opscope::cli

#endif  // OPSCOPE_CLI_COMPLETION_H_
