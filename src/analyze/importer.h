// Opens a trace in any format opscope reads. Importers are registered in one
// table (importers/registry.cc); each lives in its own folder under importers/
// and reads from a Source (source.h), so every importer reads plain files,
// gzip and zip, pipes and standard input alike.
#ifndef OPSCOPE_ANALYZE_IMPORTER_H_
#define OPSCOPE_ANALYZE_IMPORTER_H_

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/source.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

class RankFiles;  // side_files.h

struct Importer {
  std::string_view name;         // a stable key: "chrome-json"
  std::string_view description;  // what it reads, for help texts and errors
  // The file names it reads inside a folder ('*' matches any run of
  // characters), compared after container suffixes (.gz, .zip) are removed.
  std::vector<std::string_view> file_patterns;
  // Looks at the source's first bytes (Peek), as far as it needs.
  bool (*sniff)(Source& source);
  // Reads the source from its start into `model`.
  void (*import)(Source& source, TraceModel& model);
  // Optional: the same for a rank whose side files (side_files.h) it reads in
  // the same pass as the timeline (a large file read once); it marks them
  // Done. Null: `import`, then the side-file readers.
  void (*import_rank)(Source& source, RankFiles& files, TraceModel& model) = nullptr;
  // Optional: where `sniff` refused the source, what it lacks when it is
  // nearly this format (a CSV header with some of the required columns), for
  // an error that names the problem instead of listing the formats; "" else.
  std::string (*near_miss)(Source& source) = nullptr;
};

// For an importer's near_miss: when the source's first line (a CSV header)
// has at least `enough` of the `required` columns but not all, the error that
// names the missing ones ("'F': line 1: the header lacks 'Start Time(us)', a
// column of WHAT"); else "".
std::string MissingCsvColumns(Source& source, const std::vector<std::string_view>& required,
                              size_t enough, std::string_view what);

// What importers do by default in this process. A process that imports
// several traces at once (scale-out analysis) shares its cores out with
// `threads`, and leaves out what its analyses do not read.
struct ImportSettings {
  int threads = 0;  // parsing threads of importers that parse in parallel; 0: one per core
  // Operators' input shapes and types (Kineto's "Input Dims", "Input type",
  // "Concrete Inputs"): the roofline, fusion and layout passes read them.
  bool operand_shapes = true;
};
void SetImportSettings(const ImportSettings& settings);
ImportSettings GetImportSettings();

// One import's own choices, for importers that parse in parallel (tests set
// them; 0 leaves each to the settings and the input's size).
struct ImportOptions {
  int threads = 0;  // parsing threads; 0: the settings', else one per core, at most 8
  // Bytes read and scanned at a time; 0: by the input's size, 1/256 of it
  // between 256 KiB and 4 MiB (each parsing thread holds a chunk: a small trace
  // does not pay for a large one's buffers), 4 MiB when the size is unknown.
  size_t chunk_bytes = 0;
};

// Every importer, in the order they are tried.
const std::vector<Importer>& Importers();

// The first importer whose sniffer accepts the source, or nullptr.
const Importer* FindImporter(Source& source);

// Throws Error(kIo) when unreadable, Error(kUnsupported) for an unknown format
// or a folder, Error(kInvalidInput) with the byte offset for malformed
// content. "-" reads standard input.
TraceModel ImportTrace(const std::filesystem::path& path);
TraceModel ImportTrace(Source& source);

// True when a file's name matches one of an importer's patterns.
bool MatchesTraceName(std::string_view file_name);
// A file's name without the container suffix Source reads through (".gz",
// ".zip"), as the importers' patterns are compared.
std::string_view WithoutContainerSuffix(std::string_view file_name);

// The files FindTraceInputs (trace_inputs.h) chooses, one per rank: those given
// directly (kept as given, "-" included), the timeline of each rank of an Ascend
// output tree, and for other folders the files whose names an importer reads,
// sorted by name. Error(kInvalidInput) for a folder holding none.
std::vector<std::string> FindTraceFiles(const std::vector<std::string>& inputs);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTER_H_
