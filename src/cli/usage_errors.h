// Command-line mistakes said the way every other error is ("opscope: error:
// ..."), with the nearest command or option when one is close to what was
// typed: "'anaylze' is not a command; did you mean 'analyze'?".
#ifndef OPSCOPE_CLI_USAGE_ERRORS_H_
#define OPSCOPE_CLI_USAGE_ERRORS_H_

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::cli {

// The candidate nearest to `typed` by edit distance (letters inserted,
// removed, changed or two swapped), when it is close: at most 2 edits, and
// fewer than half of `typed`'s length. Empty when none is.
std::string Nearest(std::string_view typed, const std::vector<std::string>& candidates);

// The message for a parse error of `app` (the top-level command) on `args`
// (argv without the program): unknown commands and options with the nearest
// one, anything else as CLI11 says it; ends with where to find help.
std::string UsageMessage(const CLI::App& app, const CLI::ParseError& error,
                         const std::vector<std::string>& args);

}  // namespace opscope::cli

#endif  // OPSCOPE_CLI_USAGE_ERRORS_H_
