#include "analyze/analyze_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "analyze/importer.h"
#include "analyze/pipeline.h"
#include "analyze/scaleout/merge.h"
#include "analyze/scaleout/summary.h"
#include "analyze/side_files.h"
#include "analyze/trace_inputs.h"
#include "core/cancel.h"
#include "core/ceilings.h"
#include "core/output.h"
#include "opscope/opscope.h"

namespace opscope::analyze {

namespace {

// The input with its side files checked before any reader opens one: each is
// an input no output may replace (core/output.h), and one that is not a
// regular file (a FIFO, a device, a socket: opening or reading it could block
// or never end) is listed as not read, with why, and left out.
TraceInput CheckedSideFiles(const TraceInput& input, std::vector<UnusedFile>& unused) {
  TraceInput checked = input;
  std::erase_if(checked.files, [&](const SideFile& f) {
    struct stat st {};
    if (f.path == input.path || ::stat(f.path.c_str(), &st) != 0) {
      return false;  // the timeline itself, or one the reader says it cannot open
    }
    if (S_ISREG(st.st_mode)) {
      core::ProtectInput(f.path);
      return false;
    }
    const char* what = S_ISFIFO(st.st_mode)   ? "a FIFO"
                       : S_ISDIR(st.st_mode)  ? "a folder"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "a device";
    unused.push_back({f.path, std::string("could not be read: not a regular file (") + what +
                                  "): opscope reads side files only from regular files"});
    return true;
  });
  return checked;
}

using Clock = std::chrono::steady_clock;

// The input's timeline and side files into `model`; returns when the
// timeline was read (the side files follow).
Clock::time_point ImportOne(const TraceInput& input, std::vector<UnusedFile>& unused,
                            TraceModel& model) {
  const TraceInput checked = CheckedSideFiles(input, unused);
  RankFiles files(checked, unused);  // holds `checked` by reference
  {
    const auto source = Source::Open(input.path);
    const Importer* importer = FindImporter(*source);
    if (importer == nullptr) {
      model = ImportTrace(*source);  // the error that names the formats opscope reads
    } else if (importer->import_rank != nullptr) {
      importer->import_rank(*source, files, model);
    } else {
      importer->import(*source, model);
    }
  }
  const auto timeline = Clock::now();
  // The rank's side files add tables (and may complete the timeline's
  // events); one that cannot be read is listed with the error (file, line,
  // column) and the rest of the analysis stands.
  ReadSideFiles(files, model);
  return timeline;
}

AnalyzedTrace AnalyzeOne(const TraceInput& input, size_t position, const AnalyzeOptions& options,
                         std::vector<UnusedFile>& unused, TraceModel& model) {
  const auto ms = [](Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  const auto t0 = Clock::now();
  const auto t1 = ImportOne(input, unused, model);
  if (options.strict && model.records_left_out > 0) {
    std::string why;
    for (const std::string& note : model.import_notes) why += (why.empty() ? "" : "; ") + note;
    throw Error(ErrorCode::kInvalidInput,
                input.Shown() + ": --strict: " + std::to_string(model.records_left_out) +
                    " record" + (model.records_left_out == 1 ? "" : "s") + " could not be read (" +
                    why + ")");
  }
  AnalyzedTrace t;
  t.path = input.Shown();
  t.rank = input.rank >= 0 ? input.rank : static_cast<int>(position);
  t.format = model.format;
  t.events = model.size();
  t.tracks = model.tracks.size();
  const auto t2 = Clock::now();
  core::ThrowIfCancelled();
  t.analysis = AnalyzeTrace(
      model, {.ceilings = options.ceilings, .threads = options.threads, .passes = options.passes});
  t.findings = Advise(RuleContext{t.analysis, options.thresholds, &model.reported});
  t.reported = std::move(model.reported);
  model.reported = {};
  t.import_ms = ms(t1 - t0);
  t.side_files_ms = ms(t2 - t1);
  t.analysis_ms = ms(Clock::now() - t2);
  return t;
}

}  // namespace

AnalyzedTrace AnalyzeInput(const TraceInput& input, size_t position, const AnalyzeOptions& options,
                           std::vector<UnusedFile>& unused, TraceModel& model) {
  if (input.shown.empty()) return AnalyzeOne(input, position, options, unused, model);
  // A file of an unpacked archive: its errors and unread side files name the
  // archive's paths, not the scratch folder's.
  const size_t before = unused.size();
  try {
    AnalyzedTrace t = AnalyzeOne(input, position, options, unused, model);
    t.read_from = input.path;
    for (Finding& f : t.findings) {
      for (std::string* text : {&f.title, &f.evidence, &f.action}) {
        *text = input.Reworded(std::move(*text));
      }
    }
    ReportedTables& r = t.reported;  // the side files it names
    for (ReportedGroup& g : r.groups) g.source = input.Reworded(g.source);
    if (r.pipes) r.pipes->source = input.Reworded(r.pipes->source);
    if (r.memory) {
      r.memory->source = input.Reworded(r.memory->source);
      r.memory->record_source = input.Reworded(r.memory->record_source);
    }
    if (r.chip) r.chip->source = input.Reworded(r.chip->source);
    if (r.pipes) r.pipes->l2_source = input.Reworded(r.pipes->l2_source);
    ReportedSummaries& m = r.summaries;
    for (std::string* source : {&m.op_types_source, &m.communication_types_source, &m.apis_source,
                                &m.framework_ops_source, &m.module_memory_source,
                                &m.device_memory_source, &m.iterations_source}) {
      *source = input.Reworded(*source);
    }
    for (size_t i = before; i < unused.size(); ++i) {
      unused[i].path = input.Reworded(unused[i].path);
      unused[i].reason = input.Reworded(unused[i].reason);
    }
    return t;
  } catch (const Error& e) {
    throw Error(e.code(), input.Reworded(e.what()));
  }
}

void ImportInput(const TraceInput& input, std::vector<UnusedFile>& unused, TraceModel& model) {
  if (input.shown.empty()) {
    ImportOne(input, unused, model);
    return;
  }
  const size_t before = unused.size();
  try {
    ImportOne(input, unused, model);
  } catch (const Error& e) {
    throw Error(e.code(), input.Reworded(e.what()));
  }
  for (size_t i = before; i < unused.size(); ++i) {
    unused[i].path = input.Reworded(unused[i].path);
    unused[i].reason = input.Reworded(unused[i].reason);
  }
  for (std::string& note : model.import_notes) note = input.Reworded(std::move(note));
  model.source = input.Shown();
}

bool ListedUnreadable(const Error& e, const TraceInput& input, bool several,
                      std::vector<UnusedFile>& unused, std::optional<Error>& first) {
  const bool unreadable = e.code() == ErrorCode::kInvalidInput || e.code() == ErrorCode::kIo ||
                          e.code() == ErrorCode::kUnsupported;
  if (!several || !unreadable) return false;
  if (!first) first = e;
  unused.push_back({input.Shown(), std::string("could not be read: ") + e.what()});
  return true;
}

AnalyzedSet AnalyzeFiles(const AnalyzeOptions& options) {
  core::ForgetInputs();  // a new command: its own inputs only (core/output.h)
  for (const std::string& file : options.other_inputs) core::ProtectInput(file);
  AnalyzedSet out;
  std::vector<RankSummary> ranks;
  TraceInputs inputs = FindTraceInputs(options.inputs);
  out.unused = std::move(inputs.unused);
  // Of several traces, one that cannot be read (damaged, truncated, not what
  // its name says) is listed with why, and the others are analysed; where
  // none can be, the first one's error is the command's.
  std::optional<Error> first_error;
  SummaryMerger merger;
  std::map<int, LeadIns> leads;
  // The graph capture, read once: its windows charge every trace's replays.
  std::optional<TraceModel> capture;
  if (!options.graph_capture.empty()) {
    core::ProtectInput(options.graph_capture);
    capture = ImportTrace(std::filesystem::path(options.graph_capture));
  }
  for (const TraceInput& input : inputs.traces) {
    TraceModel model;
    std::optional<AnalyzedTrace> analyzed;
    try {
      analyzed = AnalyzeInput(input, out.traces.size(), options, out.unused, model);
    } catch (const Error& e) {
      if (options.strict ||
          !ListedUnreadable(e, input, inputs.traces.size() > 1, out.unused, first_error)) {
        throw;
      }
      continue;
    }
    AnalyzedTrace& t = *analyzed;
    if (capture) {
      GraphKernels graph = ChargeGraphKernels(model, *capture, options.graph_capture);
      if (graph.launches > 0) t.graph = std::move(graph);
    }
    ranks.push_back(
        SummarizeRank(model, t.rank, t.analysis.Ran("steps") ? &t.analysis.step_summary : nullptr));
    if (inputs.traces.size() > 1) {
      // Its collective calls, for the late arrivals across ranks; a rank
      // given twice is compared once.
      RankTraceSummary summary = SummarizeTrace(model, t.analysis, ranks.back(), t.path);
      if (!summary.collectives.empty() && !leads.count(t.rank)) {
        leads[t.rank] = LeadInsOf(model, summary);
        merger.Add(std::move(summary));
      }
    }
    ranks.back().path = t.path;  // as shown: an archive's file by its path inside the archive
    if (options.keep_models) t.model = std::make_shared<const TraceModel>(std::move(model));
    out.traces.push_back(std::move(t));
  }
  if (out.traces.empty() && first_error) throw *first_error;
  if (leads.size() >= 2) {
    LateArrivals late = FindLateArrivals(merger.Finish(), leads);
    if (!late.ranks.empty()) out.late = std::move(late);
  }
  if (ranks.size() > 1) out.ranks = CompareRanks(std::move(ranks));
  std::vector<StepRankInput> steps;
  for (const AnalyzedTrace& t : out.traces) {
    if (!t.reported.steps.empty()) {
      steps.push_back({t.rank, t.path, &t.reported.steps, &t.reported.groups});
    }
  }
  if (!steps.empty()) out.step_ranks = CompareReportedSteps(steps);
  std::vector<CommunicationInput> communication;
  for (const AnalyzedTrace& t : out.traces) {
    const ReportedTables& r = t.reported;
    if (!r.collectives.empty() || !r.links.empty()) {
      communication.push_back({t.rank, t.path, &r.collectives, &r.links, &r.groups});
    }
  }
  if (!communication.empty()) out.communication = CompareCommunication(communication);
  std::stable_sort(out.unused.begin(), out.unused.end(),
                   [](const UnusedFile& a, const UnusedFile& b) { return a.path < b.path; });
  return out;
}

RooflineCeilings LoadRooflineCeilings(const std::filesystem::path& path) {
  const core::Ceilings c = core::LoadCeilings(path);
  return RooflineCeilings{c.device_name,
                          "measured ceilings in " + path.string() + " (" + c.device_name + ")",
                          c.flops_per_second, c.memory_bytes_per_second};
}

}  // namespace opscope::analyze
