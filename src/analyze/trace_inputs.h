// Which files of the inputs `opscope analyze` reads, and as which rank.
//
// Files named directly are read as given, with the side files a producer's
// finder knows they bring (a database beside them; their own hardware
// counters). A folder is searched by each registered tree finder
// (importers/registry.cc) for its producer's output trees: one rank each,
// its timeline and the rank's other files beside it, each named by the role
// its side-file reader reads (side_files.h), and every other file found
// listed once with the reason it is not read, never an error. When two runs
// claim one rank, the newest (by the timestamp of its run) is read, as
// msprof-analyze does. The Ascend finder (importers/ascend/output_trees.h)
// says which trees, files and ranks.
//
// A folder without any producer's tree is a folder of trace files, one per
// rank: every file whose name an importer reads (importer.h).
//
// An archive of a folder (a zip of several files or of a folder, a tar or
// tar.gz) is unpacked into a scratch folder (archive_input.h) and read as that
// folder; its traces keep the folder alive and are shown as
// "ARCHIVE/path/inside".
#ifndef OPSCOPE_ANALYZE_TRACE_INPUTS_H_
#define OPSCOPE_ANALYZE_TRACE_INPUTS_H_

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::analyze {

// A file of a rank beside its timeline, and the role it plays: the side-file
// reader (side_files.h) that reads it, or a companion file that reader also
// reads ("l2_cache" beside "ai_core_metrics").
struct SideFile {
  std::string role;
  std::string path;
};

struct TraceInput {
  std::string path;         // the file to import ("-": standard input)
  int rank = -1;            // -1: not known from the files around it
  std::string rank_source;  // what the rank was read from, e.g. "profiler_info_3.json"
  // The same rank's other files, found beside the timeline; one per role.
  std::vector<SideFile> files;
  // The path as the user knows it ("run.zip/rank0_ascend_pt/x.json" for a file
  // of an unpacked archive); empty: `path`.
  std::string shown;
  // What keeps `path` readable: the unpacked archive's folder, removed when the
  // last input that reads it is gone; null for files of the user's own.
  std::shared_ptr<const void> keep;

  const std::string& Shown() const { return shown.empty() ? path : shown; }
  // `text` (an error, a reason) with the scratch folder's paths written as the
  // archive's; unchanged for files of the user's own.
  std::string Reworded(std::string text) const;
  // The same, for a file read from `path` and shown as `shown` ("" shown:
  // unchanged): what the report applies to a trace's every table.
  static std::string Reworded(std::string text, const std::string& path, const std::string& shown);

  // The file of a role; "" none.
  const std::string& File(std::string_view role) const;
  // Sets (or replaces) the file of a role.
  void SetFile(std::string_view role, std::string file);
};

struct UnusedFile {
  std::string path;
  std::string reason;
};

// A producer's output tree found in a folder: where it lies, one rank's
// timeline and side files (none: the tree holds no timeline opscope reads),
// its run's timestamp (of two runs of a rank the newest is read; compared as
// text of equal length) and the files in it that are not read, with why.
struct FoundTree {
  std::string root;
  std::optional<TraceInput> trace;
  std::string timestamp;
  std::vector<UnusedFile> unused;
};

// How one producer's output trees are found: registered once
// (importers/registry.cc), tried in order on every folder named.
struct TreeFinder {
  std::string_view name;        // "ascend"
  std::string_view output;      // what it finds, for errors: "Ascend profiler output"
  std::string_view tree_names;  // "*_ascend_pt, *_ascend_ms, ASCEND_PROFILER_OUTPUT, PROF_*"
  std::string_view timelines;   // the timelines it reads in them, for errors
  // Searches a folder for its trees, appending them (and the files it knows
  // are not to be read, to `unused`); false when the folder holds none (the
  // next finder, else the folder's trace files). Throws Error(kInvalidInput)
  // for a folder holding only what is not a timeline, saying what to give.
  bool (*find)(const std::string& dir, std::vector<FoundTree>& trees,
               std::vector<UnusedFile>& unused);
  // The side files a trace file named directly (or found in a folder of
  // trace files) brings with it; may be null.
  void (*beside)(TraceInput& trace);
};

const std::vector<TreeFinder>& TreeFinders();

// A folder's entries, sorted; Error(kIo) naming the folder when it cannot be
// listed. And whether a path is a folder (false when it cannot be told).
std::vector<std::filesystem::path> FolderEntries(const std::filesystem::path& dir);
bool IsFolder(const std::filesystem::path& path);

// Whether a folder holds files an importer reads by their name (for finders).
bool HoldsTraceFiles(const std::string& dir);

struct TraceInputs {
  std::vector<TraceInput> traces;  // known ranks in rank order first, then the rest as found
  std::vector<UnusedFile> unused;  // sorted by path
};

// Throws Error(kIo) when a folder cannot be listed, Error(kInvalidInput) for a
// folder holding nothing opscope reads (naming what it looked for).
TraceInputs FindTraceInputs(const std::vector<std::string>& inputs);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_TRACE_INPUTS_H_
