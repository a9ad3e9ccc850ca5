// rocprofv3's CSV output (rocprof_csv.h).
#include "analyze/importers/rocprof/rocprof_csv.h"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analyze/importers/csv_reader.h"
#include "analyze/importers/rocprof/rocprof_records.h"
#include "analyze/importers/timestamps.h"
#include "analyze/names.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

namespace fs = std::filesystem;
using namespace std::string_view_literals;

constexpr std::string_view kTimelineSuffix = "kernel_trace.csv";

// The files that come with a timeline: the role, the kind's file name after
// the prefix.
struct Companion {
  std::string_view role, file;
};
constexpr Companion kCompanions[] = {
    {"rocprof_agent_info", "agent_info.csv"},
    {"rocprof_memory_copy", "memory_copy_trace.csv"},
    {"rocprof_hip_api", "hip_api_trace.csv"},
    {"rocprof_rccl_api", "rccl_api_trace.csv"},
    {"rocprof_marker_api", "marker_api_trace.csv"},
};

// A CSV file's records with their header's columns by name (csv_reader.h's
// CsvHeader: the names trimmed, a byte-order mark dropped, a column twice an
// error). A record may hold fewer or more fields than the header: a missing
// one reads as empty, so that the row is counted as unusable, not the file.
class Records {
 public:
  explicit Records(Source& source)
      : reader_(source), name_(source.name()), header_(ReadCsvHeader(reader_, name_)) {}
  // The column's index; SIZE_MAX where the header has none.
  size_t Column(std::string_view name) const { return header_.Find(name); }
  size_t Required(std::string_view name, std::string_view what) const {
    const size_t c = Column(name);
    if (c == SIZE_MAX) {
      throw Error(
          ErrorCode::kInvalidInput,
          fmt::format("'{}': line 1: the header lacks '{}', a column of {}", name_, name, what));
    }
    return c;
  }
  // The next record, blank lines skipped (the guide's own samples end in one).
  bool Next() {
    while (reader_.NextViews(fields_)) {
      if (fields_.size() > 1 || (fields_.size() == 1 && !TrimField(fields_[0]).empty())) {
        return true;
      }
    }
    return false;
  }
  std::string_view Field(size_t c) const { return c < fields_.size() ? fields_[c] : ""sv; }

 private:
  CsvReader reader_;
  std::string name_;
  CsvHeader header_;
  std::vector<std::string_view> fields_;
};

// An integer field; -1 where it is none.
int64_t Int(std::string_view text) {
  int64_t v = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() ? v : -1;
}
// An agent as a number ("1") or as --agent-index writes it ("Agent 1"): the
// number; -1 none.
int64_t Agent(std::string_view text) {
  const size_t digits = text.find_last_not_of("0123456789");
  return Int(digits == std::string_view::npos ? text : text.substr(digits + 1));
}
// A GPU agent's track process; "GPU" where the file names none.
std::string GpuPid(int64_t agent) { return agent < 0 ? "GPU" : fmt::format("GPU {}", agent); }

// Start_Timestamp and End_Timestamp (ns) into `row`; false (counted) where
// either is not a time or the end is before the start.
bool Span(const Records& r, size_t start_column, size_t end_column, EventRow& row,
          int64_t& skipped) {
  const int64_t start = Int(r.Field(start_column)), end = Int(r.Field(end_column));
  if (start < 0 || end < start || end > kMaxTimeNs) return ++skipped, false;
  row.start_ns = start, row.duration_ns = end - start;
  return true;
}

void NoteSkipped(TraceModel& model, int64_t skipped, std::string_view file) {
  if (skipped == 0) return;
  model.records_left_out += static_cast<uint64_t>(skipped);
  model.import_notes.push_back(
      fmt::format("{} records of {} without a valid start and end timestamp were left out", skipped,
                  core::EscapeForTerminal(file)));
}

// The prefix of a timeline's file name ("238_" of "238_kernel_trace.csv"), or
// nullopt for another name.
std::optional<std::string> PrefixOf(std::string_view name) {
  if (!name.ends_with(kTimelineSuffix)) return std::nullopt;
  return std::string(name.substr(0, name.size() - kTimelineSuffix.size()));
}

bool SniffHead(std::string_view head) {
  const size_t end = head.find('\n');
  const std::string_view line = head.substr(0, end);
  return line.find("\"Kernel_Name\"") != std::string_view::npos &&
         line.find("\"Start_Timestamp\"") != std::string_view::npos &&
         line.find("\"End_Timestamp\"") != std::string_view::npos &&
         line.find("\"Kind\"") != std::string_view::npos;
}

void ImportKernels(Source& source, TraceModel& model) {
  constexpr std::string_view what = "rocprofv3's kernel_trace.csv";
  Records r(source);
  const size_t name = r.Required("Kernel_Name", what), start = r.Required("Start_Timestamp", what),
               end = r.Required("End_Timestamp", what), agent = r.Column("Agent_Id"),
               queue = r.Column("Queue_Id"), correlation = r.Column("Correlation_Id");
  model.format = "rocprofv3-csv";
  model.source = source.name();
  const uint32_t category = model.Intern("kernel");
  std::unordered_map<uint32_t, EventClass> cls_of;
  int64_t skipped = 0;
  while (r.Next()) {
    EventRow row;
    if (!Span(r, start, end, row, skipped)) continue;
    const std::string_view kernel = KernelSymbolName(r.Field(name));
    row.name = model.Intern(kernel.empty() ? "(unknown kernel)"sv : kernel);
    auto [it, added] = cls_of.emplace(row.name, EventClass::kKernel);
    if (added && IsCommunication(model.String(row.name))) it->second = EventClass::kCommunication;
    row.cls = it->second;
    row.category = category;
    const int64_t a = Agent(r.Field(agent));
    const std::string pid = GpuPid(a);
    model.process_names.emplace(pid, pid);
    row.track = model.TrackFor(pid, fmt::format("queue {}", Int(r.Field(queue))));
    row.correlation = Int(r.Field(correlation));
    model.Append(row);
  }
  NoteSkipped(model, skipped, source.name());
  model.NameProcesses();
}

// agent_info.csv: each GPU agent's product (the kernels' and copies' tracks).
void ReadAgents(Source& source, TraceModel& model) {
  constexpr std::string_view what = "rocprofv3's agent_info.csv";
  Records r(source);
  const size_t node = r.Required("Node_Id", what), type = r.Required("Agent_Type", what),
               product = r.Column("Product_Name"), name = r.Column("Name");
  while (r.Next()) {
    if (r.Field(type) != "GPU") continue;
    const int64_t id = Int(r.Field(node));
    if (id < 0) continue;
    std::string_view label = r.Field(product);
    if (label.empty()) label = r.Field(name);
    if (label.empty()) continue;
    const std::string pid = GpuPid(id);
    model.process_names[pid] = fmt::format("{} ({})", pid, label);
    if (model.device_name.empty()) model.device_name = std::string(label);
  }
}

void ReadCopies(Source& source, TraceModel& model) {
  constexpr std::string_view what = "rocprofv3's memory_copy_trace.csv";
  Records r(source);
  const size_t direction = r.Required("Direction", what),
               start = r.Required("Start_Timestamp", what), end = r.Required("End_Timestamp", what),
               src = r.Column("Source_Agent_Id"), dst = r.Column("Destination_Agent_Id"),
               correlation = r.Column("Correlation_Id"), bytes = r.Column("Bytes");
  const uint32_t category = model.Intern("gpu_memcpy");
  int64_t skipped = 0;
  while (r.Next()) {
    EventRow row;
    if (!Span(r, start, end, row, skipped)) continue;
    const int64_t from = Agent(r.Field(src)), to = Agent(r.Field(dst));
    CopyInfo copy;
    copy.direction = MemoryCopyDirection(r.Field(direction), from == to);
    // On the GPU end's copy lane (the source's for device to host).
    const int64_t agent = copy.direction == CopyDirection::kDeviceToHost ? from : to;
    row.name = model.Intern(fmt::format("Memcpy {}", Name(copy.direction)));
    row.category = category;
    row.cls = EventClass::kMemcpy;
    row.bytes = Int(r.Field(bytes));
    row.copy = copy.Packed();
    const std::string pid = GpuPid(agent);
    model.process_names.emplace(pid, pid);
    row.track = model.TrackFor(pid, "copies");
    row.correlation = Int(r.Field(correlation));
    model.Append(row);
  }
  NoteSkipped(model, skipped, source.name());
}

// hip_api_trace.csv, rccl_api_trace.csv and marker_api_trace.csv share their
// columns (Domain, Function, Process_Id, Thread_Id, Correlation_Id, Start and
// End_Timestamp): calls on their threads, or ROCTx ranges (Function the
// message; a range of no length is a mark).
void ReadCalls(Source& source, TraceModel& model, std::string_view kind) {
  const std::string what = fmt::format("rocprofv3's {}_trace.csv", kind);
  Records r(source);
  const size_t function = r.Required("Function", what), start = r.Required("Start_Timestamp", what),
               end = r.Required("End_Timestamp", what), process = r.Column("Process_Id"),
               thread = r.Column("Thread_Id"), correlation = r.Column("Correlation_Id");
  const bool markers = kind == "marker_api";
  const uint32_t category = model.Intern(markers             ? "user_annotation"
                                         : kind == "hip_api" ? "cuda_runtime"
                                                             : "rccl_api");
  int64_t skipped = 0;
  while (r.Next()) {
    EventRow row;
    if (!Span(r, start, end, row, skipped)) continue;
    const std::string_view text = r.Field(function);
    if (markers && row.duration_ns == 0) {
      ++model.instant_events;  // a mark
      continue;
    }
    row.name = model.Intern(text.empty() ? kind : text);
    row.category = category;
    row.cls = !markers                  ? EventClass::kRuntime
              : IsIterationMarker(text) ? EventClass::kStep
                                        : EventClass::kAnnotation;
    const std::string pid(r.Field(process).empty() ? "host" : r.Field(process));
    model.process_names.emplace(pid, "process " + pid);
    row.track = model.TrackFor(pid, r.Field(thread));
    if (!markers) row.correlation = Int(r.Field(correlation));
    model.Append(row);
  }
  NoteSkipped(model, skipped, source.name());
}

void Beside(TraceInput& trace) {
  const fs::path file(trace.path);
  const std::string name = file.filename().string();
  const auto prefix = PrefixOf(WithoutContainerSuffix(name));
  if (!prefix) return;
  for (const Companion& c : kCompanions) {
    for (const std::string_view container : {""sv, ".gz"sv, ".zip"sv}) {
      const fs::path path =
          file.parent_path() / (*prefix + std::string(c.file) + std::string(container));
      std::error_code ec;
      if (fs::is_regular_file(path, ec)) {
        trace.SetFile(c.role, path.string());
        break;
      }
    }
  }
}

// rocprofv3 writes into OUTPUT_DIR/HOSTNAME/ by default (its output file is
// "%hostname%/%pid%"): named the output folder, each host's folder is searched
// for the timelines of its three formats, one rank per file (the CSV's with
// the files beside it). A folder that holds trace files itself is a plain
// folder of traces (false), as is one whose subfolders hold none of these.
// A timeline's process prefix and its format's preference (0 the rocpd
// database, 1 JSON, 2 CSV: one run written in several formats is read once,
// from the most complete); nullopt for another file.
std::optional<std::pair<std::string, int>> RocprofTimeline(std::string_view name) {
  name = WithoutContainerSuffix(name);
  int kind = 0;
  for (const std::string_view suffix : {"results.db"sv, "results.json"sv, kTimelineSuffix}) {
    if (name.ends_with(suffix)) {
      return std::pair{std::string(name.substr(0, name.size() - suffix.size())), kind};
    }
    ++kind;
  }
  return std::nullopt;
}

bool FindHostFolders(const std::string& dir, std::vector<FoundTree>& trees,
                     std::vector<UnusedFile>& unused) {
  if (HoldsTraceFiles(dir)) return false;
  bool found = false;
  for (const fs::path& sub : FolderEntries(dir)) {
    if (!IsFolder(sub)) continue;
    std::map<std::string, std::pair<int, fs::path>> best;  // prefix -> format, file
    std::vector<fs::path> all;
    for (const fs::path& entry : FolderEntries(sub)) {
      std::error_code ec;
      const auto timeline = RocprofTimeline(entry.filename().string());
      if (!timeline || !fs::is_regular_file(entry, ec)) continue;
      all.push_back(entry);
      auto [it, added] = best.try_emplace(timeline->first, timeline->second, entry);
      if (!added && timeline->second < it->second.first) it->second = {timeline->second, entry};
    }
    for (const fs::path& entry : all) {
      const auto& chosen = best.at(RocprofTimeline(entry.filename().string())->first).second;
      if (entry != chosen) {
        unused.push_back({entry.string(), "the same process's output in another format, " +
                                              chosen.filename().string() + ", is read"});
        continue;
      }
      FoundTree tree;
      tree.root = sub.string();
      tree.trace = TraceInput{entry.string()};
      Beside(*tree.trace);
      trees.push_back(std::move(tree));
      found = true;
    }
  }
  return found;
}

template <void (*Read)(Source&, TraceModel&)>
void ReadRole(std::string_view role, RankFiles& files, TraceModel& model) {
  const auto source = Source::Open(files.Path(role));
  Read(*source, model);
  model.NameProcesses();  // the tracks it added, and the GPUs agent_info names
}
template <const char* Kind>
void ReadCallsOf(Source& source, TraceModel& model) {
  ReadCalls(source, model, Kind);
}
constexpr char kHipApi[] = "hip_api", kRcclApi[] = "rccl_api", kMarkerApi[] = "marker_api";

}  // namespace

Importer RocprofCsvImporter() {
  return Importer{
      "rocprofv3-csv",
      "rocprofv3's CSV output (PID_kernel_trace.csv, with the same prefix's memory copy, HIP, "
      "RCCL and marker traces and agent_info.csv beside it)",
      {"*kernel_trace.csv"},
      [](Source& source) { return SniffHead(source.Peek(4096)); },
      ImportKernels,
      nullptr,
      [](Source& source) {
        return MissingCsvColumns(source,
                                 {"Kind", "Kernel_Name", "Start_Timestamp", "End_Timestamp"}, 3,
                                 "rocprofv3's kernel_trace.csv");
      },
  };
}

TreeFinder RocprofCsvFinder() {
  return TreeFinder{"rocprofv3",
                    "rocprofv3 output",
                    "HOSTNAME folders of rocprofv3's output",
                    "PID_kernel_trace.csv, PID_results.json, PID_results.db",
                    FindHostFolders,
                    Beside};
}

std::vector<SideFileReader> RocprofCsvSideFileReaders() {
  return {
      {"rocprof_agent_info",
       {{"rocprof_agent_info", {}}},
       "rocprofv3's agent_info.csv beside a kernel_trace.csv: each GPU's product name",
       [](RankFiles& f, TraceModel& m) { ReadRole<ReadAgents>("rocprof_agent_info", f, m); }},
      {"rocprof_memory_copy",
       {{"rocprof_memory_copy", {}}},
       "rocprofv3's memory_copy_trace.csv beside a kernel_trace.csv: the copies, by direction",
       [](RankFiles& f, TraceModel& m) { ReadRole<ReadCopies>("rocprof_memory_copy", f, m); }},
      {"rocprof_hip_api",
       {{"rocprof_hip_api", {}}},
       "rocprofv3's hip_api_trace.csv beside a kernel_trace.csv: the HIP calls, linked to their "
       "kernels and copies",
       [](RankFiles& f, TraceModel& m) {
         ReadRole<ReadCallsOf<kHipApi>>("rocprof_hip_api", f, m);
       }},
      {"rocprof_rccl_api",
       {{"rocprof_rccl_api", {}}},
       "rocprofv3's rccl_api_trace.csv beside a kernel_trace.csv: the RCCL calls",
       [](RankFiles& f, TraceModel& m) {
         ReadRole<ReadCallsOf<kRcclApi>>("rocprof_rccl_api", f, m);
       }},
      {"rocprof_marker_api",
       {{"rocprof_marker_api", {}}},
       "rocprofv3's marker_api_trace.csv beside a kernel_trace.csv: ROCTx ranges, as "
       "annotations (an iteration's as a step)",
       [](RankFiles& f, TraceModel& m) {
         ReadRole<ReadCallsOf<kMarkerApi>>("rocprof_marker_api", f, m);
       }},
  };
}

}  // namespace opscope::analyze
