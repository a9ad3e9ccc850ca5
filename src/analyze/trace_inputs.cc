#include "analyze/trace_inputs.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "analyze/archive_input.h"
#include "analyze/importer.h"
#include "core/output.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> TraceFilesIn(const std::string& dir) {
  std::vector<std::string> found;
  for (const fs::path& entry : FolderEntries(dir)) {
    std::error_code ec;
    if (fs::is_regular_file(entry, ec) && MatchesTraceName(entry.filename().string())) {
      found.push_back(entry.string());
    }
  }
  return found;
}

// The files a trace brings with it, as each producer's finder knows them.
void Beside(TraceInput& trace) {
  for (const TreeFinder& finder : TreeFinders()) {
    if (finder.beside != nullptr) finder.beside(trace);
  }
}

// A folder with no producer's output tree in it: its trace files, one rank each.
void ReadPlainFolder(const std::string& input, TraceInputs& out) {
  std::vector<std::string> found = TraceFilesIn(input);
  // An archive inside the folder (a zip in a tar) is not unpacked in turn:
  // listed as not read, with what to do.
  for (const fs::path& entry : FolderEntries(input)) {
    std::error_code ec;
    const std::string name = entry.filename().string();
    const bool archive_name = name.ends_with(".zip") || name.ends_with(".tar") ||
                              name.ends_with(".tar.gz") || name.ends_with(".tgz");
    if (fs::is_regular_file(entry, ec) && archive_name && !MatchesTraceName(name)) {
      out.unused.push_back({entry.string(),
                            "an archive inside the input: opscope unpacks the archives it is "
                            "given, not those inside them (name it on the command line)"});
    }
  }
  if (found.empty()) {
    std::string patterns;
    for (const Importer& importer : Importers()) {
      for (const std::string_view p : importer.file_patterns) {
        patterns += (patterns.empty() ? "" : ", ") + std::string(p);
      }
    }
    std::string trees;
    for (const TreeFinder& finder : TreeFinders()) {
      trees +=
          " and no " + std::string(finder.output) + " (" + std::string(finder.tree_names) + ")";
    }
    throw Error(ErrorCode::kInvalidInput,
                "'" + core::EscapeForTerminal(input) + "' holds no trace files (" + patterns +
                    ", plain or .gz/.zip)" + trees +
                    "; a .zip, .tar or .tar.gz of a folder reads as the folder");
  }
  for (auto& path : found) {
    TraceInput trace{std::move(path)};
    Beside(trace);
    out.traces.push_back(std::move(trace));
  }
}

}  // namespace

std::vector<fs::path> FolderEntries(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) {
    throw Error(ErrorCode::kIo,
                "cannot list '" + core::EscapeForTerminal(dir.string()) + "': " + ec.message());
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

bool IsFolder(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

std::string TraceInput::Reworded(std::string text) const {
  return Reworded(std::move(text), path, shown);
}

std::string TraceInput::Reworded(std::string text, const std::string& path,
                                 const std::string& shown) {
  if (shown.empty()) return text;
  // path = ROOT/inside, shown = ARCHIVE/inside: ROOT becomes ARCHIVE.
  size_t common = 0;
  while (common < path.size() && common < shown.size() &&
         path[path.size() - 1 - common] == shown[shown.size() - 1 - common]) {
    ++common;
  }
  const std::string root = path.substr(0, path.size() - common);
  const std::string archive = shown.substr(0, shown.size() - common);
  if (root.empty()) return text;
  for (const std::string& from : {root, core::EscapeForTerminal(root)}) {
    const std::string to = from == root ? archive : core::EscapeForTerminal(archive);
    for (size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

bool HoldsTraceFiles(const std::string& dir) { return !TraceFilesIn(dir).empty(); }

TraceInputs FindTraceInputs(const std::vector<std::string>& inputs) {
  TraceInputs out;
  std::vector<FoundTree> trees;
  std::vector<const TreeFinder*> found_by;  // per tree
  std::vector<std::shared_ptr<const ExtractedArchive>> archives;
  // The scratch folder's paths as the user knows them (inside the archive).
  const auto shown = [&](const std::string& path) {
    for (const auto& a : archives) {
      const std::string s = a->Shown(path);
      if (s != path) return s;
    }
    return path;
  };
  const auto reword = [&](const std::string& text) {
    std::string s = text;
    for (const auto& a : archives) {
      const std::string root = core::EscapeForTerminal(a->root.string());
      const std::string archive = core::EscapeForTerminal(a->archive.string());
      for (size_t at = s.find(root); at != std::string::npos;
           at = s.find(root, at + archive.size())) {
        s.replace(at, root.size(), archive);
      }
    }
    return s;
  };
  const auto read_input = [&](const std::string& given) {
    // Each input as given (a file, a folder, an archive): no output of this
    // command may replace it (core/output.h).
    if (given != "-") {
      core::ProtectInput(given);
    } else {
      core::ProtectInput(STDIN_FILENO);
    }
    std::string input = given;
    if (input != "-" && IsArchiveOfFolder(input)) {
      archives.push_back(ExtractArchive(input));
      for (const auto& [entry, why] : archives.back()->skipped) out.unused.push_back({entry, why});
      // A zip of a folder holds that folder: read it, as if it had been named.
      fs::path at = archives.back()->root;
      const std::vector<fs::path> top = FolderEntries(at);
      if (top.size() == 1 && IsFolder(top.front())) at = top.front();
      input = at.string();
    }
    if (input == "-" || !IsFolder(input)) {
      TraceInput trace{input};
      if (input != "-") Beside(trace);
      out.traces.push_back(std::move(trace));
      return;
    }
    bool claimed = false;
    for (const TreeFinder& finder : TreeFinders()) {
      const size_t before = trees.size();
      if (finder.find(input, trees, out.unused)) {
        found_by.resize(trees.size(), &finder);
        claimed = true;
        break;
      }
      trees.resize(before);
    }
    if (!claimed) ReadPlainFolder(input, out);
  };
  for (const std::string& given : inputs) {
    try {
      read_input(given);
    } catch (const Error& e) {
      if (archives.empty()) throw;
      throw Error(e.code(), reword(e.what()));  // an archive's paths, not the scratch folder's
    }
  }
  // One run per rank: the newest, as msprof-analyze does.
  std::map<int, size_t> newest;
  for (size_t i = 0; i < trees.size(); ++i) {
    if (!trees[i].trace || trees[i].trace->rank < 0) continue;
    const auto [it, inserted] = newest.emplace(trees[i].trace->rank, i);
    if (!inserted && trees[i].timestamp.size() >= trees[it->second].timestamp.size() &&
        trees[i].timestamp > trees[it->second].timestamp) {
      it->second = i;
    }
  }
  std::vector<TraceInput> known, unknown;
  for (size_t i = 0; i < trees.size(); ++i) {
    FoundTree& tree = trees[i];
    if (tree.trace && tree.trace->rank >= 0 && newest.at(tree.trace->rank) != i) {
      out.unused.push_back({tree.root, "an older run of rank " + std::to_string(tree.trace->rank) +
                                           " (the newest run of each rank is read)"});
      continue;
    }
    out.unused.insert(out.unused.end(), tree.unused.begin(), tree.unused.end());
    if (!tree.trace) continue;
    if (tree.trace->rank < 0) {
      unknown.push_back(std::move(*tree.trace));
    } else {
      known.push_back(std::move(*tree.trace));
    }
  }
  if (!trees.empty() && known.empty() && unknown.empty()) {
    const TreeFinder& finder = *found_by.front();
    throw Error(ErrorCode::kInvalidInput,
                "no timeline opscope reads in the " + std::string(finder.output) + " given (" +
                    std::string(finder.timelines) +
                    "); found: " + core::EscapeForTerminal(shown(trees.front().root)));
  }
  std::stable_sort(known.begin(), known.end(),
                   [](const TraceInput& a, const TraceInput& b) { return a.rank < b.rank; });
  out.traces.insert(out.traces.end(), std::make_move_iterator(known.begin()),
                    std::make_move_iterator(known.end()));
  out.traces.insert(out.traces.end(), std::make_move_iterator(unknown.begin()),
                    std::make_move_iterator(unknown.end()));
  // Files of an unpacked archive: shown inside it, and keeping its folder.
  for (TraceInput& t : out.traces) {
    for (const auto& a : archives) {
      if (a->Shown(t.path) == t.path) continue;
      t.shown = a->Shown(t.path);
      t.keep = a;
    }
  }
  for (UnusedFile& u : out.unused) u.path = shown(u.path);
  std::sort(out.unused.begin(), out.unused.end(),
            [](const UnusedFile& a, const UnusedFile& b) { return a.path < b.path; });
  return out;
}

}  // namespace opscope::analyze
