// The columnar trace model every importer fills and every analysis reads: one
// vector per field, strings interned, so millions of events cost tens of bytes
// each and analyses scan contiguous arrays.
#ifndef OPSCOPE_ANALYZE_TRACE_MODEL_H_
#define OPSCOPE_ANALYZE_TRACE_MODEL_H_

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyze/id_column.h"
#include "analyze/reported.h"

namespace opscope::analyze {

// What an event is, independent of the tool that recorded it: one closed set.
// Each importer gives every event its class from what the event means in its
// producer's terms (a category, a process, a task type); analyses read the
// class, never a format's name.
enum class EventClass : uint8_t {
  kHostOp,            // framework operator on the CPU (aten::*, cpu_op)
  kAnnotation,        // user annotation / record_function on the CPU
  kStep,              // ProfilerStep#N
  kKernel,            // compute kernel on a device (CUDA, ROCm, Ascend AI Core / AI CPU task)
  kMemcpy,            // device memory copy (direction and host memory: the copy column)
  kMemset,            // device memory set
  kRuntime,           // runtime or driver API on the CPU (cudaLaunchKernel, AscendCL@...)
  kSync,              // synchronization (cuda_sync)
  kDeviceAnnotation,  // annotation on a device timeline
  kPython,            // python_function
  kCommunication,     // collective or point-to-point kernel on a device (NCCL, RCCL, HCCL)
  kDma,               // a DMA engine's task no copy call issued (SDMA, MTIA dma_request)
  kDeviceWait,        // a device queue waiting on, or signalling, an event or another rank
  kDataLoading,       // the host fetching the next batch (a DataLoader's __next__)
  kDerived,           // a tool's own summary rows (Ascend "Overlap Analysis")
  kOther,             // kept last: the classes are 0 .. kOther
};
constexpr size_t kEventClasses = static_cast<size_t>(EventClass::kOther) + 1;
// Every class, in order.
constexpr std::array<EventClass, kEventClasses> AllEventClasses() {
  std::array<EventClass, kEventClasses> all{};
  for (size_t c = 0; c < kEventClasses; ++c) all[c] = static_cast<EventClass>(c);
  return all;
}
const char* Name(EventClass cls);
// Work that occupies a device's queue: kernels, communication, copies, sets,
// DMA tasks and device-side waits.
bool IsDevice(EventClass cls);
// Work on a host thread: operators, annotations, steps, runtime calls,
// synchronisations, Python frames and data loading.
bool IsHost(EventClass cls);

// Where a device memory copy goes, and the host memory at its host end.
enum class CopyDirection : uint8_t {
  kUnknown,
  kHostToDevice,
  kDeviceToHost,
  kDeviceToDevice,
  kPeerToPeer,  // between two devices
  kHostToHost,
};
enum class HostMemory : uint8_t { kUnknown, kPinned, kPageable, kManaged };
const char* Name(CopyDirection direction);  // "HtoD", "DtoH", "DtoD", "PtoP", "HtoH", "other"
const char* Name(HostMemory memory);        // "pinned", "pageable", "managed", ""
// A copy's direction and host memory in the one byte of the model's copy column.
struct CopyInfo {
  CopyDirection direction = CopyDirection::kUnknown;
  HostMemory host_memory = HostMemory::kUnknown;
  uint8_t Packed() const {
    return static_cast<uint8_t>(static_cast<uint8_t>(direction) |
                                (static_cast<uint8_t>(host_memory) << 4));
  }
  static CopyInfo Unpack(uint8_t packed) {
    return {static_cast<CopyDirection>(packed & 0x0f), static_cast<HostMemory>(packed >> 4)};
  }
};

struct Track {
  std::string process;  // name from process_name metadata, else the pid
  std::string thread;   // name from thread_name metadata, else the tid
  std::string pid, tid;
};

// One complete event, for appending: every column's value, unknowns by default.
struct EventRow {
  int64_t start_ns = 0, duration_ns = 0;
  uint32_t name = 0, category = 0, track = 0;
  EventClass cls = EventClass::kOther;
  int64_t flops = -1, bytes = -1, correlation = -1;
  uint32_t kind = 0;
  int64_t external_id = -1;
  uint32_t input_dims = 0, input_type = 0, concrete_inputs = 0;
  uint32_t shapes = 0, dtype = 0, layout = 0, module = 0;
  uint32_t op_type = 0;
  uint32_t compute_dtype = 0;
  uint8_t copy = 0;  // CopyInfo::Packed()
};

class TraceModel {
 public:
  // A text longer than kMaxTextBytes (a 4 MiB operator name, a 60 MiB CSV
  // field) is kept by its ends: its first kKeptHead and last kKeptTail bytes
  // around a marker that says how many were left out, so no table or report
  // repeats it whole; long_texts counts them, the import notes say so.
  static constexpr size_t kMaxTextBytes = size_t{256} << 10;
  static constexpr size_t kKeptHead = size_t{192} << 10, kKeptTail = size_t{4} << 10;
  uint32_t Intern(std::string_view text);
  std::string_view String(uint32_t id) const { return *strings_[id]; }
  size_t string_count() const { return strings_.size(); }
  uint32_t TrackFor(std::string_view pid, std::string_view tid);
  // Each track's process named from process_names where its pid has a name
  // (a track's process is its pid until then).
  void NameProcesses();

  size_t size() const { return start_ns.size(); }
  void Reserve(size_t events);

  // Columns, one entry per complete event.
  std::vector<int64_t> start_ns;
  CompactInt64Column duration_ns;  // 4 bytes an event while all fit (id_column.h)
  IdColumn name;                   // interned
  IdColumn category;               // interned; 0 when absent
  std::vector<uint32_t> track;
  std::vector<EventClass> cls;
  CountColumn flops;               // -1 unknown
  CountColumn bytes;               // -1 unknown
  CompactInt64Column correlation;  // links a launch to its device work; -1 none
  IdColumn kind;                   // interned task type (Ascend "AI_CORE", "AI_CPU"); 0 none
  CompactInt64Column external_id;  // links a framework operator to its launches; -1 none
  IdColumn input_dims;             // interned raw JSON of Kineto's "Input Dims"; 0 none
  IdColumn input_type;             // interned raw JSON of "Input type"; 0 none
  IdColumn concrete_inputs;        // interned raw JSON of "Concrete Inputs"; 0 none
  // opscope's own operator arguments (core/trace_schema.h), interned; 0 none.
  IdColumn shapes;  // "[[8,64,56,56]]"
  IdColumn dtype;   // as written: "fp32", "bf16", ...
  IdColumn layout;  // "nChw16c"
  IdColumn module;  // "layer1.0.conv1"
  // A device task's operator type where its reader knows one (Ascend: the
  // Type column, else from the kernel's name: "MatMulV2"); 0 none.
  IdColumn op_type;
  // The data type an event's FLOPs (flops) are counted in, canonical ("fp32",
  // "fp16", "bf16", "int8"), where its reader worked the FLOPs out itself
  // (the Ascend readers, from a task's shapes and types); 0 none.
  IdColumn compute_dtype;
  // A memory copy's direction and host memory (CopyInfo, packed), where its
  // importer knows them; 0 otherwise and for every other event.
  DefaultColumn<uint8_t, 0> copy;

  // The columns by element type, named once, so that code which appends,
  // merges or reserves columns cannot miss one. String columns hold ids of
  // this model's strings; `track` holds ids of its tracks. Count columns
  // (id_column.h) cost nothing where every value is -1; compact columns hold
  // 4 bytes a value while their values fit.
  static constexpr std::array kInt64Columns = {&TraceModel::start_ns};
  static constexpr std::array kCompactColumns = {&TraceModel::duration_ns, &TraceModel::correlation,
                                                 &TraceModel::external_id};
  static constexpr std::array kCountColumns = {&TraceModel::flops, &TraceModel::bytes};
  static constexpr std::array kStringColumns = {
      &TraceModel::name,       &TraceModel::category,   &TraceModel::kind,
      &TraceModel::input_dims, &TraceModel::input_type, &TraceModel::concrete_inputs,
      &TraceModel::shapes,     &TraceModel::dtype,      &TraceModel::layout,
      &TraceModel::module,     &TraceModel::op_type,    &TraceModel::compute_dtype};
  template <typename F>
  void ForEachInt64Column(F&& f) {  // int64, compact and count columns
    for (const auto column : kInt64Columns) f(this->*column);
    for (const auto column : kCompactColumns) f(this->*column);
    for (const auto column : kCountColumns) f(this->*column);
  }
  template <typename F>
  void ForEachIdColumn(F&& f) {  // string columns and `track`
    for (const auto column : kStringColumns) f(this->*column);
    f(track);
  }
  // True when every column has size() entries.
  bool ColumnsAligned() const;

  // Appends one event to every column.
  void Append(const EventRow& e) {
    start_ns.push_back(e.start_ns);
    duration_ns.push_back(e.duration_ns);
    name.push_back(e.name);
    category.push_back(e.category);
    track.push_back(e.track);
    cls.push_back(e.cls);
    flops.push_back(e.flops);
    bytes.push_back(e.bytes);
    correlation.push_back(e.correlation);
    kind.push_back(e.kind);
    external_id.push_back(e.external_id);
    input_dims.push_back(e.input_dims);
    input_type.push_back(e.input_type);
    concrete_inputs.push_back(e.concrete_inputs);
    shapes.push_back(e.shapes);
    dtype.push_back(e.dtype);
    layout.push_back(e.layout);
    module.push_back(e.module);
    op_type.push_back(e.op_type);
    compute_dtype.push_back(e.compute_dtype);
    copy.push_back(e.copy);
  }
  CopyInfo Copy(size_t e) const { return CopyInfo::Unpack(copy[e]); }

  // What PyTorch records on a collective's events (Kineto's NCCL kernels and
  // record_param_comms: "Collective name", "Process Group Name", "Seq",
  // "In msg nelems", "Out msg nelems", "Group size", "dtype"), for the few
  // events that carry it, in event order.
  struct CollectiveArgs {
    uint32_t event = 0;
    uint32_t op = 0;     // interned "Collective name"; 0 none
    uint32_t group = 0;  // interned "Process Group Name"; 0 none
    int64_t seq = -1, in_nelems = -1, out_nelems = -1, group_size = -1;
    // The two ranks of a point-to-point task of a collective (torch_npu's
    // HCCL tasks: "src rank", "dst rank"); -1 not recorded.
    int32_t src_rank = -1, dst_rank = -1;
    // A communication task's transport and link, as Ascend's enums number them
    // (docs/formats/ascend.md, ENUM_HCCL_TRANSPORT_TYPE: 0 SDMA, 1 RDMA, 2
    // LOCAL; ENUM_HCCL_LINK_TYPE: 0 ON_CHIP, 1 HCCS, 2 PCIE, 3 ROCE, 4 SIO, 5
    // HCCS_SW, 6 STANDARD_ROCE); -1 not recorded. Its size is the event's bytes.
    int8_t transport = -1, link = -1;
  };

  std::vector<CollectiveArgs> collective_args;

  std::vector<Track> tracks;
  std::map<std::string, std::string> process_names;  // pid -> name
  std::map<std::string, std::string> metadata;       // format-specific facts
  std::string format;                                // "opscope", "kineto", ...
  std::string source;                                // the file
  std::string device_name;                           // from deviceProperties, when recorded
  // The device family a format implies (its reader says which:
  // importers/ascend's "Ascend 910B"); "" none. The roofline's datasheet
  // fallback when the trace names no device the datasheet holds, said to be
  // assumed.
  std::string implied_device;
  // PyTorch's own profiler wrote the trace (Kineto, its pre-Kineto export, the
  // caching allocator's snapshot): its reader says so. A record of the
  // device's activity alone is still a PyTorch program's (RecordsPyTorch).
  bool written_by_pytorch = false;
  // The framework's fused optimizers where the reader knows them (torch_npu's
  // torch_npu.optim.NpuFused<Class>): the module path before the class, and
  // the classes ("Adam" for Optimizer.step#Adam.step). Empty: none known.
  struct FusedOptimizers {
    std::string prefix;
    std::vector<std::string> classes;
  } fused_optimizers;
  // The framework's fused APIs that replace a run of its operators, where the
  // reader knows them (torch_npu's affinity APIs): each API, since which
  // version, and the runs it replaces, as sequences of operator names (without
  // "aten::") joined by '-', an element a name or "(a|b)", optionally
  // repeated "{m,n}" times (passes/affinity_apis.cc reads them).
  struct FusedApi {
    std::string api, since;
    std::vector<std::string> patterns;
  };
  std::vector<FusedApi> fused_apis;
  uint64_t instant_events = 0, counter_events = 0, flow_events = 0;
  // When the producer stopped recording, where it says (Kineto's "Record
  // Window End"); INT64_MAX where unknown. A host span that ends after it
  // (a step annotation on another process, spliced in) was not seen to end:
  // SpanOf leaves such annotations and steps out, and such a step is no step
  // (steps.h, "overrun").
  int64_t recording_end_ns = INT64_MAX;
  // Ranges of a hardware-counter profiler that replays each kernel to read
  // its counters (Kineto's cuda_profiler_range events, CUPTI's range
  // profiler): a trace holding them was recorded under replay, and its
  // times are the profiler's, not the run's.
  uint64_t replay_ranges = 0;
  // torch_npu's "HostToDevice" flows, paired by id: when the host issued a task
  // and when its first task started on the device, and on which tracks (the
  // runtime call that issued it encloses the first end). They give launch
  // delays and launches where events carry no correlation id (Ascend).
  // Sorted by host_ns. A flow whose device end is before its host end (the
  // two clocks disagree) is kept: the launch pass counts such pairs.
  struct LaunchFlow {
    int64_t host_ns = 0, device_ns = 0;
    uint32_t host_track = UINT32_MAX, device_track = UINT32_MAX;
  };
  std::vector<LaunchFlow> launch_flows;
  // The host's CPU samples where the producer took them (Nsight Systems' CPU
  // IP sampling: COMPOSITE_EVENTS and the leaf of each call chain): when, and
  // the sampled function and its module (interned), in time order. The
  // attribution says what they show in time no event explains.
  struct CpuSample {
    int64_t ns = 0;
    uint32_t function = 0, module = 0;
  };
  std::vector<CpuSample> cpu_samples;
  // The OS runtime calls (Nsight Systems' OSRT_API: poll, pthread_join, read,
  // ...) of the thread that made the most device runtime calls, the one that
  // drives the device: where no event explains the time, they say whether
  // it waited on something (another thread, I/O, a lock) and on what.
  struct OsCall {
    int64_t start_ns = 0, end_ns = 0;
    uint32_t name = 0;  // interned
  };
  std::vector<OsCall> launcher_os_calls;

  // What the reader could not use, each a sentence for the report ("tables
  // not in this export: ..."; "12 rows without a valid end were left out"):
  // the analyses stand on the rest, and the report says what that is.
  std::vector<std::string> import_notes;
  // How many of the input's records (events, rows) its reader could not use
  // (malformed, without a valid start and end), each kind also said in an
  // import note: the import_notes pass's rule weighs them against the rest.
  uint64_t records_left_out = 0;
  // What the producer itself said it lost while recording, each also said in
  // an import note: device records it dropped (CUPTI's count in Kineto's log,
  // the dropped events XLA's GPU tracer writes into the XSpace's warnings),
  // and whether it stopped recording device activity before the end (Kineto:
  // CUPTI's buffers filled). The producer_dropped rule weighs them.
  uint64_t producer_dropped = 0;
  bool producer_stopped = false;
  // Distinct texts kept by their ends (Intern), and the longest one's length.
  size_t long_texts = 0, longest_text = 0;

  // What the producer reported beside the timeline (reported.h), lowered by
  // the readers of its side files (side_files.h); empty where it wrote none.
  ReportedTables reported;

 private:
  uint32_t InternWhole(std::string_view text);
  struct Slot {
    uint64_t hash;
    uint32_t id;  // UINT32_MAX: empty
  };
  void Grow();

  std::deque<std::string> storage_;
  std::vector<const std::string*> strings_;
  std::vector<Slot> slots_;  // open addressing, linear probing; a power of two long
  std::map<std::pair<std::string, std::string>, uint32_t> track_ids_;
  uint32_t last_track_ = UINT32_MAX;
};

// A part's ids in the model it is merged into: a part is a model that one
// parsing thread fills (strings and tracks with ids of its own, kept across
// its batches), merged batch by batch. Each id is looked up once.
class PartIds {
 public:
  // The merged model's id of the part's string (track) `id`. Id 0, the empty
  // string in every model, maps without a lookup, also from a part that has
  // interned nothing.
  uint32_t String(const TraceModel& part, TraceModel& model, uint32_t id);
  uint32_t Track(const TraceModel& part, TraceModel& model, uint32_t id);
  // Appends the part's events (and collective arguments) to `model`, their ids
  // translated, and empties the part's columns; its strings and tracks stay.
  void MoveEvents(TraceModel& part, TraceModel& model);

 private:
  std::vector<uint32_t> strings_, tracks_;  // UINT32_MAX: not yet looked up
};

// The time a trace's events cover, from the first start to the last end,
// leaving out a producer's own summary rows (kDerived), unclassed events, and
// annotations and steps that end more than kOverrunSlackNs after the
// recording did (recording_end_ns: the trace did not see them end): the
// window of a trace without steps. begin >= end where nothing lasts.
// How far past the recording's end a host span may end and still count as
// seen to end (clock rounding).
inline constexpr int64_t kOverrunSlackNs = 1'000'000;
// Whether a span ending at `end_ns` ends more than kOverrunSlackNs after the
// recording did (TraceModel::recording_end_ns; INT64_MAX, unknown: never).
inline bool EndsPastRecording(int64_t recording_end_ns, int64_t end_ns) {
  return recording_end_ns != INT64_MAX && end_ns > recording_end_ns + kOverrunSlackNs;
}
struct TraceSpan {
  int64_t begin = INT64_MAX, end = INT64_MIN;
  int64_t ns() const { return end > begin ? end - begin : 0; }
};
TraceSpan SpanOf(const TraceModel& model);
// The span of the program's work: `span` less the profiler's own start calls
// that open it and stop calls that close it (names.h ProfilerControl: from
// the end of the last start call to the beginning of the first stop call),
// where that leaves a span; else `span`.
TraceSpan WorkSpanOf(const TraceModel& model, TraceSpan span);

// Events grouped by track in one array: track t's are events[begin[t],
// begin[t + 1]), in model order. Counted first, so it is allocated once at its
// size (no list per track growing by doubling over millions of events).
struct TrackGroups {
  MappedVector<uint32_t> events;
  std::vector<size_t> begin;  // tracks + 1 entries
};
template <typename Keep>
TrackGroups GroupByTrack(const TraceModel& model, Keep&& keep) {
  TrackGroups g;
  g.begin.assign(model.tracks.size() + 1, 0);
  for (size_t e = 0; e < model.size(); ++e) {
    if (keep(e)) ++g.begin[model.track[e] + 1];
  }
  for (size_t t = 1; t < g.begin.size(); ++t) g.begin[t] += g.begin[t - 1];
  g.events.resize(g.begin.back());
  std::vector<size_t> next(g.begin.begin(), g.begin.end() - 1);
  for (size_t e = 0; e < model.size(); ++e) {
    if (keep(e)) g.events[next[model.track[e]]++] = static_cast<uint32_t>(e);
  }
  return g;
}

// Each track's events of `g` in the order they open: by start, the longer
// first (a parent before the child that starts with it), then by index.
// Profilers mostly write a thread's calls in this order already: a track in
// order is only checked.
void SortByOpening(const TraceModel& model, TrackGroups& g);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_TRACE_MODEL_H_
