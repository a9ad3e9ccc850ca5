#include "cli/usage_errors.h"

#include <algorithm>
#include <cctype>

#include "core/text.h"

namespace opscope::cli {
namespace {

// Optimal string alignment distance (Damerau-Levenshtein without repeated
// edits of a substring): a swap of two neighbours counts once.
size_t Distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The deepest subcommand the arguments chose (the one whose options apply).
const CLI::App* Chosen(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) return Chosen(*sub);
  return &app;
}

std::string CommandPath(const CLI::App& app) {
  std::string path;
  for (const CLI::App* a = &app; a != nullptr; a = a->get_parent()) {
    path = a->get_parent() == nullptr ? "opscope" + path : " " + a->get_name() + path;
  }
  return path;
}

std::string Quoted(std::string_view text) { return "'" + core::EscapeForTerminal(text) + "'"; }

}  // namespace

std::string Nearest(std::string_view typed, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const std::string& c : candidates) {
    const size_t d = Distance(typed, c);
    if (d < best_distance) best = c, best_distance = d;
  }
  const std::string_view bare = typed.substr(
      typed.find_first_not_of('-') == std::string::npos ? 0 : typed.find_first_not_of('-'));
  return best_distance <= 2 && 2 * best_distance < bare.size() ? best : std::string();
}

std::string UsageMessage(const CLI::App& app, const CLI::ParseError& error,
                         const std::vector<std::string>& args) {
  const CLI::App& chosen = *Chosen(app);
  std::vector<std::string> commands;
  for (const CLI::App* sub : chosen.get_subcommands({})) commands.push_back(sub->get_name());
  const std::string help = "run '" + CommandPath(chosen) + " --help' for its " +
                           (commands.empty() ? "options" : "commands");
  // The arguments that were the chosen command's: those after its name.
  auto rest = args.begin();
  if (&chosen != &app) {
    rest = std::find(args.begin(), args.end(), chosen.get_name());
    if (rest != args.end()) ++rest;
  }
  // Options it does not have, each with the nearest it has.
  std::vector<std::string> options;
  std::vector<bool> takes_value;
  for (const CLI::Option* o : chosen.get_options()) {
    const bool value = o->get_type_size_min() > 0;
    for (const std::string& n : o->get_lnames())
      options.push_back("--" + n), takes_value.push_back(value);
    for (const std::string& n : o->get_snames())
      options.push_back("-" + n), takes_value.push_back(value);
  }
  // A negative number is a value ("--fail-if-slower -5"), not an option.
  const auto number = [](const std::string& a) {
    return a.size() > 1 && (std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.');
  };
  std::string unknown;
  for (auto it = rest; it != args.end() && *it != "--"; ++it) {  // after "--": a program's
    if (!it->starts_with("-") || *it == "-" || number(*it)) continue;
    const std::string name = it->substr(0, it->find('='));
    const auto known = std::find(options.begin(), options.end(), name);
    if (known != options.end()) {
      // Its value is the next argument, whatever it looks like.
      if (takes_value[static_cast<size_t>(known - options.begin())] && name.size() == it->size() &&
          it + 1 != args.end()) {
        ++it;
      }
      continue;
    }
    const std::string near = Nearest(name, options);
    unknown += (unknown.empty() ? "" : "; ") + Quoted(name) + " is not an option of '" +
               CommandPath(chosen) + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?");
  }
  if (!unknown.empty()) return "opscope: error: " + unknown + " (" + help + ")";
  // A command of commands with none of them named (CLI11 only says one is
  // required): the word that should have been one, with the nearest.
  if (!commands.empty() && chosen.get_subcommands().empty()) {
    const auto word =
        std::find_if(rest, args.end(), [](const std::string& a) { return !a.starts_with("-"); });
    std::string list;
    for (const std::string& c : commands) list += (list.empty() ? "" : ", ") + c;
    if (word == args.end()) {
      return "opscope: error: '" + CommandPath(chosen) + "' needs one of its commands: " + list +
             " (" + help + ")";
    }
    const std::string near = Nearest(*word, commands);
    return "opscope: error: " + Quoted(*word) + " is not a command" +
           (&chosen == &app ? std::string() : " of '" + CommandPath(chosen) + "'") +
           (near.empty() ? "" : "; did you mean '" + near + "'?") + " (" + help + ")";
  }
  return "opscope: error: " + core::EscapeForTerminal(error.what()) + " (" + help + ")";
}

}  // namespace opscope::cli
