// What `opscope analyze` computes, as a library call: every trace named (files,
// folders of rank files, profilers' output trees, "-"; see trace_inputs.h), imported and analysed
// one at a time (a trace's model is dropped once its analysis is done, so many ranks never need to
// be in memory together), the advisor's findings for each, and the comparison of ranks when there
// are several.
#ifndef OPSCOPE_ANALYZE_ANALYZE_FILES_H_
#define OPSCOPE_ANALYZE_ANALYZE_FILES_H_

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyze/advisor.h"
#include "analyze/analysis.h"
#include "analyze/communication_cluster.h"
#include "analyze/graph_capture.h"
#include "analyze/late_arrivals.h"
#include "analyze/multirank.h"
#include "analyze/reported.h"
#include "analyze/trace_inputs.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct AnalyzeOptions {
  std::vector<std::string> inputs;           // trace files, folders of them, "-"
  std::optional<RooflineCeilings> ceilings;  // measured; else from the trace's device
  // The other files the command read (--ceilings): inputs no output may
  // replace, as the traces are (core/output.h).
  std::vector<std::string> other_inputs;
  Thresholds thresholds;
  // Keep each trace's event model in AnalyzedTrace::model (the Python
  // package's event tables); otherwise it is dropped once analysed.
  bool keep_models = false;
  // Analysis passes run at once per trace; 0: one per core.
  int threads = 0;
  // Only these passes and their needs (AnalysisOptions::passes); empty: all.
  std::vector<std::string_view> passes;
  // A trace of the CUDA/HIP graph capture whose replays the traces hold
  // (--graph-capture): their graph kernels are charged to the operators that
  // captured them (graph_capture.h). Empty: none.
  std::string graph_capture;
  // All or nothing (--strict): a trace whose reader left records out, or of
  // several traces one that cannot be read, fails the command instead of
  // being counted and listed while the rest is analysed.
  bool strict = false;
};

struct AnalyzedTrace {
  std::string path;
  // For a file of an unpacked archive, the scratch path it was read from
  // (`path` is the archive's): every text of its report is worded with the
  // archive's paths (TraceInput::Reworded). Empty otherwise.
  std::string read_from;
  int rank = -1;  // from the files around it (trace_inputs.h), else its position
  // What the producer reported beside the timeline (reported.h), read from
  // the rank's side files (side_files.h): the model's tables, kept when the
  // model is dropped.
  ReportedTables reported;
  std::string format;
  size_t events = 0, tracks = 0;
  // The events themselves, with AnalyzeOptions::keep_models; else null.
  std::shared_ptr<const TraceModel> model;
  Analysis analysis;
  std::vector<Finding> findings;
  // Its graph launches' kernels by capturing operator, where a capture trace
  // was given and the trace launches graphs.
  std::optional<GraphKernels> graph;
  // Wall time of each phase: the import, the side files beside the timeline,
  // the analyses and advisor.
  double import_ms = 0, side_files_ms = 0, analysis_ms = 0;
};

struct AnalyzedSet {
  std::vector<AnalyzedTrace> traces;    // in the order of FindTraceInputs
  std::optional<RankComparison> ranks;  // when there are several traces
  std::vector<UnusedFile> unused;       // files found in the folders and not read, with why
  // Ranks compared by the step breakdowns they reported.
  std::optional<ReportedStepRanks> step_ranks;
  // Ranks' reported collectives and links: waits and slow links.
  std::optional<CommunicationCluster> communication;
  // The ranks whose late arrival at collectives kept the others waiting, from
  // the traces' own collective kernels (late_arrivals.h).
  std::optional<LateArrivals> late;
};

// Throws what ImportTrace and FindTraceInputs throw, naming the file.
AnalyzedSet AnalyzeFiles(const AnalyzeOptions& options);

// One trace found by FindTraceInputs, analysed as AnalyzeFiles does: its
// model is left in `model`; its side files that could not be read are added
// to `unused`; `position` is its rank when nothing around it names one.
AnalyzedTrace AnalyzeInput(const TraceInput& input, size_t position, const AnalyzeOptions& options,
                           std::vector<UnusedFile>& unused, TraceModel& model);

// One trace found by FindTraceInputs read into `model` as AnalyzeFiles reads
// it (its timeline and its side files), without analysing it; its side files
// that could not be read are added to `unused`. A file of an unpacked archive
// is named as the user knows it (TraceInput::Shown) in errors, `unused`, the
// import notes and model.source.
void ImportInput(const TraceInput& input, std::vector<UnusedFile>& unused, TraceModel& model);

// Of several traces, one that cannot be read (damaged, truncated, not what
// its name says: `e` is an input, I/O or unsupported-format error) is listed
// in `unused` with why, and the first such error kept in `first` (the
// command's error where no trace can be read); returns false where `e` is to
// be rethrown (the only trace's error, or an error of another kind).
bool ListedUnreadable(const Error& e, const TraceInput& input, bool several,
                      std::vector<UnusedFile>& unused, std::optional<Error>& first);

// Measured ceilings (`opscope bench roofline`'s ceilings.json) as the roofline
// takes them. Throws Error(kIo) or Error(kInvalidInput) naming the file.
RooflineCeilings LoadRooflineCeilings(const std::filesystem::path& path);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_ANALYZE_FILES_H_
