#include "analyze/importers/ascend/output_trees.h"

#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>

#include "analyze/importers/ascend/db_importer.h"
#include "analyze/side_files.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

namespace fs = std::filesystem;

constexpr char kTimelines[] =
    "trace_view.json, kernel_details.csv, ascend_pytorch_profiler_*.db, msprof_*.json, "
    "op_summary_*.csv, or step_trace_time.csv alone";

constexpr int kSearchDepth = 4;  // a job folder > host folders > rank folders > outputs

// Why each file of ASCEND_PROFILER_OUTPUT that carries analysis value is not
// read (yet): docs/formats/ascend.md, section 3.
const std::map<std::string, std::string, std::less<>>& OutputFileReasons() {
  static const std::map<std::string, std::string, std::less<>> reasons = {
      {"op_statistic.csv",
       "per-operator-type totals: read beside a timeline, and this rank has none opscope reads"},
      {"step_trace_time.csv",
       "per-step breakdown: read beside a timeline, and this rank has none opscope reads"},
      {"communication.json",
       "per-collective time and bandwidth: read beside a timeline, and this rank has none "
       "opscope reads"},
      {"communication_matrix.json",
       "bandwidth per link: read beside a timeline, and this rank has none opscope reads"},
      {"operator_memory.csv",
       "memory per operator: read beside a timeline, and this rank has none opscope reads"},
      {"memory_record.csv",
       "memory over time: read beside a timeline, and this rank has none opscope reads"},
      {"npu_module_mem.csv",
       "memory per NPU module: read beside a timeline, and this rank has none opscope reads"},
      {"api_statistic.csv",
       "CANN API call totals: read beside a timeline, and this rank has none opscope reads"},
      {"operator_details.csv",
       "framework operators: read beside a timeline, and this rank has none opscope reads"},
      {"task_time.csv", "the same device tasks as the timeline, which is read"},
      {"data_preprocess.csv", "AI CPU data preprocessing (Level2): not read"},
      {"soc_pmu.csv", "SoC PMU counters: not read"},
      {"nic.csv", "NIC counters (sys_io): not read"},
      {"roce.csv", "RoCE counters (sys_io): not read"},
      {"pcie.csv", "PCIe counters (sys_interconnection): not read"},
      {"hccs.csv", "HCCS counters (sys_interconnection): not read"},
      {"analyse.done", "torch_npu's marker that parsing finished"},
  };
  return reasons;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsRankRoot(const fs::path& dir) {
  const std::string name = dir.filename().string();
  std::error_code ec;
  return (EndsWith(name, "_ascend_pt") || EndsWith(name, "_ascend_ms")) &&
         fs::is_directory(dir / "ASCEND_PROFILER_OUTPUT", ec);
}

bool IsMsprofRoot(const fs::path& dir) {
  static const std::regex pattern("^PROF_\\d+_\\d+_[0-9a-zA-Z]+$");
  return std::regex_match(dir.filename().string(), pattern);
}

// kernel_details*.csv or op_summary_*.csv, plain or compressed: a file of
// device tasks that may carry PMU columns.
bool IsTaskSummaryName(std::string name) {
  for (const char* suffix : {".gz", ".zip"}) {
    if (EndsWith(name, suffix)) name.resize(name.size() - std::string_view(suffix).size());
  }
  return EndsWith(name, ".csv") &&
         (name.rfind("kernel_details", 0) == 0 || name.rfind("op_summary_", 0) == 0);
}

bool IsOutputFolder(const fs::path& dir) { return dir.filename() == "ASCEND_PROFILER_OUTPUT"; }

// Whether `file` is one of the rank's side files (already given a role).
bool IsSideFile(const TraceInput& trace, const fs::path& file) {
  return std::any_of(trace.files.begin(), trace.files.end(),
                     [&](const SideFile& f) { return f.path == file.string(); });
}

// The number in a name such as profiler_info_3.json or ascend_pytorch_profiler_3.db.
std::optional<int> RankInName(const std::string& name, const std::string& prefix,
                              const std::string& suffix) {
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      !EndsWith(name, suffix)) {
    return std::nullopt;
  }
  const std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 7 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoi(digits);
}

// `rank_id` of a profiler_info.json: an int in old releases, a string in new ones.
std::optional<int> RankInProfilerInfo(const fs::path& file) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.load(file.string()).get(root) != simdjson::SUCCESS) return std::nullopt;
  simdjson::dom::element rank;
  if (root["rank_id"].get(rank) != simdjson::SUCCESS) return std::nullopt;
  int64_t value = -1;
  std::string_view text;
  if (rank.get_int64().get(value) == simdjson::SUCCESS) {
  } else if (rank.get_string().get(text) == simdjson::SUCCESS && !text.empty() &&
             text.size() <= 7 && text.find_first_not_of("0123456789") == std::string_view::npos) {
    value = std::stoi(std::string(text));
  }
  if (value < 0 || value > 9999999) return std::nullopt;
  return static_cast<int>(value);
}

// The timestamp in a run folder's name, for "the newest run of a rank":
// {worker}_{timestamp}_ascend_pt (parsed from the right: host names hold '_')
// or PROF_{n}_{timestamp}_{id}.
std::string RunTimestamp(const fs::path& root) {
  const std::string name = root.filename().string();
  std::vector<std::string> tokens;
  size_t start = 0;
  while (true) {
    const size_t at = name.find('_', start);
    tokens.push_back(name.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  if (IsMsprofRoot(root) && tokens.size() >= 4) return tokens[2];
  return tokens.size() >= 3 ? tokens[tokens.size() - 3] : std::string();
}

// msprof-analyze's cluster outputs (docs/formats/ascend.md, "cluster_analysis_output/"):
// summaries it computes from the ranks' own files, not timelines.
bool IsClusterOutputName(const std::string& name) {
  for (const char* file :
       {"cluster_step_trace_time.csv", "cluster_communication.json",
        "cluster_communication_matrix.json", "communication_group.json", "cluster_analysis.db"}) {
    if (name == file) return true;
  }
  return false;
}

constexpr char kClusterOutputWhy[] =
    "msprof-analyze's cluster output, computed from the ranks' own files: opscope reads those "
    "and computes the same (steps per rank, the slow rank, wait and transit times, slow links)";

// Collects the rank roots, output folders and PROF_* folders under `dir`, and
// msprof-analyze's cluster output folders apart.
void Search(const fs::path& dir, int depth, std::vector<fs::path>& roots,
            std::vector<fs::path>& clusters, std::vector<fs::path>& links) {
  if (IsRankRoot(dir) || IsMsprofRoot(dir) || IsOutputFolder(dir)) {
    roots.push_back(dir);
    return;
  }
  // A cluster output folder: by name, or by a file no other tool writes (a
  // folder that only holds a communication_group.json is not taken for one).
  // The folder is listed once, for this and for the search below it.
  const std::vector<fs::path> entries = FolderEntries(dir);
  const bool cluster = dir.filename() == "cluster_analysis_output" ||
                       std::any_of(entries.begin(), entries.end(), [](const fs::path& entry) {
                         const std::string name = entry.filename().string();
                         return IsClusterOutputName(name) && name != "communication_group.json";
                       });
  if (cluster) {
    clusters.push_back(dir);
    return;
  }
  if (depth >= kSearchDepth) return;
  for (const fs::path& entry : entries) {
    if (!IsFolder(entry)) continue;
    // A link to a folder is not searched: it may lead out of the input (a
    // link to / would walk the whole filesystem). One to a rank's output is
    // read (a job folder of links to each rank's run), but not searched.
    std::error_code ec;
    if (fs::is_symlink(entry, ec)) {
      const fs::path target = fs::canonical(entry, ec);
      if (!ec && (IsRankRoot(target) || IsMsprofRoot(target) || IsOutputFolder(target))) {
        roots.push_back(target);
      } else {
        links.push_back(entry);
      }
      continue;
    }
    Search(entry, depth + 1, roots, clusters, links);
  }
}

struct RankTree {
  fs::path root;
  std::optional<TraceInput> trace;
  std::vector<UnusedFile> unused;
  std::string timestamp;
};

// One ASCEND_PROFILER_OUTPUT folder: its timeline and what is left.
void ReadOutputFolder(const fs::path& output, RankTree& tree) {
  const std::vector<fs::path> files = FolderEntries(output);
  const auto has = [&](const std::string& name) {
    return std::find(files.begin(), files.end(), output / name) != files.end();
  };
  std::string primary = has("trace_view.json")      ? "trace_view.json"
                        : has("kernel_details.csv") ? "kernel_details.csv"
                        : has("task_time.csv")      ? "task_time.csv"
                                                    : "";
  // An export_type=db run: the rank's database is the timeline (docs/formats/ascend.md 4.1).
  std::string analysis_db;
  for (const fs::path& file : files) {
    const std::string name = file.filename().string();
    if (primary.empty() && IsAscendTraceDbName(name)) primary = name;
    if (name == "analysis.db" || name == "communication_analyzer.db") analysis_db = name;
  }
  // A rank that left only its summaries (what msprof-analyze's cluster
  // analysis reads): its step breakdown stands in for the timeline, and the
  // communication files beside it are read with it.
  if (primary.empty() && has("step_trace_time.csv")) primary = "step_trace_time.csv";
  const bool db_primary = primary.ends_with(".db");
  if (!primary.empty()) {
    tree.trace = TraceInput{(output / primary).string()};
    // The files its side-file readers read, by their names (side_files.h).
    for (const fs::path& file : files) {
      const std::string name = file.filename().string();
      const std::string_view role = RoleOfFile(name);
      if (!role.empty() && tree.trace->File(role).empty()) {
        tree.trace->SetFile(role, file.string());
      }
    }
    if (db_primary) {
      tree.trace->SetFile("ai_core_metrics", tree.trace->path);
      if (!analysis_db.empty()) tree.trace->SetFile("analysis_db", (output / analysis_db).string());
    }
    if (has("kernel_details.csv")) {
      tree.trace->SetFile("ai_core_metrics", (output / "kernel_details.csv").string());
      if (has("l2_cache.csv")) tree.trace->SetFile("l2_cache", (output / "l2_cache.csv").string());
    }
  }
  if (!has("analyse.done")) {
    tree.unused.push_back(
        {output.string(),
         "no analyse.done: torch_npu's parse may not have finished; its files may be partial"});
  }
  for (const fs::path& file : files) {
    const std::string name = file.filename().string();
    if (name == primary || name == "analyse.done") continue;
    if (tree.trace && name == analysis_db && !tree.trace->File("analysis_db").empty()) continue;
    if (tree.trace && (name == "kernel_details.csv" || IsSideFile(*tree.trace, file))) continue;
    if (tree.trace && name == "l2_cache.csv" && !tree.trace->File("l2_cache").empty()) continue;
    const auto& reasons = OutputFileReasons();
    if (const auto it = reasons.find(name); it != reasons.end()) {
      tree.unused.push_back({file.string(), it->second});
    } else if (EndsWith(name, ".db-wal") || EndsWith(name, ".db-shm") ||
               EndsWith(name, ".db-journal")) {
      tree.unused.push_back(
          {file.string(),
           "SQLite's log beside a database: the database is read as its main file (read-only, "
           "immutable), so changes another tool left in the log are not seen"});
    } else if (EndsWith(name, ".db")) {
      tree.unused.push_back(
          {file.string(), tree.trace ? "the SQLite export of the same run: its text files are read"
                                     : "an SQLite file opscope does not know"});
    } else {
      tree.unused.push_back({file.string(), "not a file opscope knows"});
    }
  }
}

// A PROF_* folder's first device_{id}/info.json.{id} ("" none; msprof also
// leaves info.json.{id}.done markers).
std::string DeviceInfoFile(const fs::path& root) {
  for (const fs::path& dir : FolderEntries(root)) {
    if (!IsFolder(dir) || dir.filename().string().rfind("device_", 0) != 0) continue;
    for (const fs::path& f : FolderEntries(dir)) {
      const std::string file = f.filename().string();
      if (file.rfind("info.json.", 0) == 0 && !EndsWith(file, ".done")) return f.string();
    }
  }
  return {};
}

void ReadRankRoot(const fs::path& root, RankTree& tree) {
  tree.root = root;
  tree.timestamp = RunTimestamp(root);
  const fs::path output = IsOutputFolder(root) ? root : root / "ASCEND_PROFILER_OUTPUT";
  ReadOutputFolder(output, tree);
  const fs::path info_dir = IsOutputFolder(root) ? root.parent_path() : root;
  std::optional<int> rank;
  std::string source;
  if (IsFolder(info_dir) && (IsOutputFolder(root) ? IsRankRoot(info_dir) : true)) {
    for (const fs::path& entry : FolderEntries(info_dir)) {
      const std::string name = entry.filename().string();
      if (const auto r = RankInName(name, "profiler_info_", ".json"); r && !rank) {
        rank = r, source = name;
      }
      if (name == "profiler_info.json" && !rank) {
        if (const auto r = RankInProfilerInfo(entry)) rank = r, source = name + " rank_id";
      }
      // The rank's files beside its output folder that side-file readers read.
      if (const std::string_view role = RoleOfFile(name);
          tree.trace && !role.empty() && tree.trace->File(role).empty() && !IsFolder(entry)) {
        tree.trace->SetFile(role, entry.string());
      }
      if (!IsOutputFolder(root) && IsFolder(entry)) {
        if (name == "FRAMEWORK") {
          tree.unused.push_back(
              {entry.string(), "torch_npu's binary framework records: undocumented, not read"});
        } else if (IsMsprofRoot(entry)) {
          const std::string info = tree.trace ? DeviceInfoFile(entry) : std::string();
          if (!info.empty() && tree.trace->File("device_info").empty())
            tree.trace->SetFile("device_info", info);
          tree.unused.push_back(
              {entry.string(),
               std::string("raw CANN data: its parsed copy in ASCEND_PROFILER_OUTPUT is read "
                           "instead") +
                   (info.empty() ? "" : " (and its device info.json, for the chip)")});
        }
      }
    }
  }
  if (!rank) {
    for (const fs::path& entry : FolderEntries(output)) {
      const std::string name = entry.filename().string();
      for (const char* prefix : {"ascend_pytorch_profiler_", "ascend_mindspore_profiler_"}) {
        if (const auto r = RankInName(name, prefix, ".db")) rank = r, source = name;
      }
    }
  }
  if (tree.trace && rank) {
    tree.trace->rank = *rank;
    tree.trace->rank_source = source;
  }
}

// The rank of a native msprof run: `rank_id` of its device_*/info.json.{N}
// (msprof-analyze's rule, docs/formats/ascend.md 1.4), with the file it came from.
std::optional<std::pair<int, std::string>> MsprofRank(const fs::path& root) {
  for (const fs::path& dir : FolderEntries(root)) {
    const std::string name = dir.filename().string();
    if (!IsFolder(dir) || name.rfind("device_", 0) != 0) continue;
    for (const fs::path& f : FolderEntries(dir)) {
      const std::string file = f.filename().string();
      if (file.rfind("info.json.", 0) != 0) continue;
      if (const auto rank = RankInProfilerInfo(f)) {
        return std::pair{*rank, name + "/" + file + " rank_id"};
      }
    }
  }
  return std::nullopt;
}

void ReadMsprofRoot(const fs::path& root, RankTree& tree) {
  tree.root = root;
  tree.timestamp = RunTimestamp(root);
  const fs::path output = root / "mindstudio_profiler_output";
  const std::vector<fs::path> files =
      IsFolder(output) ? FolderEntries(output) : std::vector<fs::path>();
  const auto named = [](const fs::path& f, const char* prefix, const char* suffix) {
    const std::string name = f.filename().string();
    return name.rfind(prefix, 0) == 0 && EndsWith(name, suffix);
  };
  // The timeline (host and device) when msprof wrote one, else the device tasks.
  for (const auto& [prefix, suffix] :
       {std::pair{"msprof_", ".json"}, {"op_summary_", ".csv"}, {"task_time_", ".csv"}}) {
    for (const fs::path& f : files) {
      if (!tree.trace && named(f, prefix, suffix)) tree.trace = TraceInput{f.string()};
    }
  }
  // A --type=db export: msprof_{ts}.db in the output folder or the run's root.
  if (!tree.trace) {
    std::vector<fs::path> candidates = files;
    for (const fs::path& f : FolderEntries(root)) candidates.push_back(f);
    for (const fs::path& f : candidates) {
      if (!tree.trace && named(f, "msprof_", ".db")) {
        tree.trace = TraceInput{f.string()};
        tree.trace->SetFile("ai_core_metrics", f.string());
      }
    }
  }
  // msprof --analyze=on writes the communication summaries to PROF_*/analyze/.
  if (const fs::path analyze = root / "analyze"; IsFolder(analyze)) {
    for (const fs::path& f : FolderEntries(analyze)) {
      const std::string name = f.filename().string();
      const std::string_view role = RoleOfFile(name);
      if (tree.trace && (role == "communication" || role == "communication_matrix") &&
          tree.trace->File(role).empty()) {
        tree.trace->SetFile(role, f.string());
      } else {
        tree.unused.push_back({f.string(), "an msprof analysis file: not read"});
      }
    }
  }
  if (tree.trace) {
    for (const fs::path& f : files) {
      if (tree.trace->File("ai_core_metrics").empty() && named(f, "op_summary_", ".csv")) {
        tree.trace->SetFile("ai_core_metrics", f.string());
      }
    }
    for (const fs::path& f : files) {
      if (!tree.trace->File("ai_core_metrics").empty() && tree.trace->File("l2_cache").empty() &&
          named(f, "l2_cache_", ".csv")) {
        tree.trace->SetFile("l2_cache", f.string());
      }
    }
    // The summaries its side-file readers read, by their names (side_files.h).
    for (const fs::path& f : files) {
      const std::string_view role = RoleOfFile(f.filename().string());
      if (!role.empty() && tree.trace->File(role).empty()) tree.trace->SetFile(role, f.string());
    }
    if (const auto rank = MsprofRank(root)) {
      tree.trace->rank = rank->first;
      tree.trace->rank_source = rank->second;
    }
    tree.trace->SetFile("device_info", DeviceInfoFile(root));
  }
  for (const fs::path& f : files) {
    if (tree.trace && f.string() == tree.trace->path) continue;
    if (tree.trace && (f.string() == tree.trace->File("ai_core_metrics") ||
                       f.string() == tree.trace->File("l2_cache"))) {
      continue;
    }
    if (tree.trace && IsSideFile(*tree.trace, f)) continue;
    if (named(f, "msprof_", ".db")) {
      tree.unused.push_back(
          {f.string(), "the SQLite export of the same run: its text files are read"});
    } else if (named(f, "task_time_", ".csv") && tree.trace) {
      tree.unused.push_back({f.string(), "the same device tasks as the timeline, which is read"});
    } else if (named(f, "msprof_", ".json") || named(f, "op_summary_", ".csv")) {
      tree.unused.push_back(
          {f.string(), named(f, "msprof_", ".json") || tree.trace->path.ends_with(".csv")
                           ? "another slice of the same data: not merged yet"
                           : "the same device tasks as the msprof timeline, which is read"});
    } else {
      tree.unused.push_back({f.string(), "an msprof summary: not read yet"});
    }
  }
}

// A trace named directly: kernel_details.csv or op_summary is its own PMU
// source; a rank's database brings its analysis.db beside it.
void Beside(TraceInput& trace) {
  const fs::path file(trace.path);
  const std::string name = file.filename().string();
  if (IsTaskSummaryName(name)) trace.SetFile("ai_core_metrics", trace.path);
  if (name == "step_trace_time.csv") trace.SetFile("step_trace_time", trace.path);
  if (IsAscendTraceDbName(name)) {
    trace.SetFile("ai_core_metrics", trace.path);
    for (const char* db : {"analysis.db", "communication_analyzer.db"}) {
      std::error_code ec;
      if (fs::is_regular_file(file.parent_path() / db, ec)) {
        trace.SetFile("analysis_db", (file.parent_path() / db).string());
      }
    }
  }
}

bool Find(const std::string& dir, std::vector<FoundTree>& trees, std::vector<UnusedFile>& unused) {
  std::vector<fs::path> roots, clusters, links;
  Search(dir, 0, roots, clusters, links);
  for (const fs::path& cluster : clusters) unused.push_back({cluster.string(), kClusterOutputWhy});
  for (const fs::path& link : links) {
    unused.push_back({link.string(),
                      "a symbolic link to a folder that is no rank's profiler output: not "
                      "searched (it may lead out of the input); name its target to read it"});
  }
  if (roots.empty()) {
    // Only msprof-analyze's output (no trace beside it): say what it is.
    if (!clusters.empty() && (clusters.front() == fs::path(dir) || !HoldsTraceFiles(dir))) {
      throw Error(ErrorCode::kInvalidInput,
                  "'" + core::EscapeForTerminal(clusters.front().string()) +
                      "' is msprof-analyze's cluster output (cluster_step_trace_time.csv, "
                      "cluster_communication.json, ...): summaries of the ranks' profiler "
                      "folders, not a timeline. Give the folder that holds the ranks' "
                      "*_ascend_pt, *_ascend_ms or PROF_* folders: opscope computes the same "
                      "cluster analysis from them, with each rank's timeline");
    }
    return false;
  }
  for (const fs::path& root : roots) {
    RankTree tree;
    if (IsMsprofRoot(root)) {
      ReadMsprofRoot(root, tree);
    } else {
      ReadRankRoot(root, tree);
    }
    if (!tree.trace) {
      tree.unused.push_back(
          {root.string(), "no timeline opscope reads in it (" + std::string(kTimelines) + ")"});
    }
    trees.push_back({tree.root.string(), std::move(tree.trace), std::move(tree.timestamp),
                     std::move(tree.unused)});
  }
  return true;
}

}  // namespace

TreeFinder AscendTreeFinder() {
  return TreeFinder{"ascend",
                    "Ascend profiler output",
                    "*_ascend_pt, *_ascend_ms, ASCEND_PROFILER_OUTPUT, PROF_*",
                    kTimelines,
                    Find,
                    Beside};
}

}  // namespace opscope::analyze
