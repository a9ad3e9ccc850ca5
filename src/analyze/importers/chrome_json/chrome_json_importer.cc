#include "analyze/importers/chrome_json/chrome_json_importer.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyze/importer.h"
#include "analyze/importers/ascend/op_type.h"
#include "analyze/importers/chrome_json/kineto_log.h"
#include "analyze/importers/chrome_json/kineto_memory.h"
#include "analyze/importers/timestamps.h"
#include "analyze/json_event_reader.h"
#include "analyze/names.h"
#include "analyze/ordered_batches.h"
#include "analyze/passes/roofline.h"
#include "core/text.h"
#include "core/trace_schema.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

using simdjson::ondemand::json_type;
using namespace std::string_view_literals;
namespace schema = core::trace_schema;

std::string_view Trim(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t' ||
          s.back() == ',' || s.back() == '}' || s.back() == ']')) {
    s.remove_suffix(1);
  }
  return s;
}

// A pid or tid: numbers and strings both occur ("Spans", 800, "CPU functions").
std::string_view IdText(simdjson::ondemand::value value, std::string& scratch) {
  json_type type;
  if (value.type().get(type)) return {};
  if (type == json_type::string) {
    std::string_view s;
    if (value.get_string().get(s)) return {};
    scratch.assign(s);
    return scratch;
  }
  scratch.assign(Trim(value.raw_json_token()));
  return scratch;
}

// A time's text: a number's token, or a string's contents ("" neither).
std::string_view TimeText(simdjson::ondemand::value value) {
  json_type type;
  if (value.type().get(type)) return {};
  std::string_view text;
  if (type == json_type::string) {
    if (value.get_string().get(text)) return {};
    return text;
  }
  return Trim(value.raw_json_token());
}

// A copy as Kineto (libkineto's CuptiActivity, and opscope's CUPTI records,
// cupti_records.h) names it: "Memcpy HtoD (Pinned -> Device)", "Memcpy DtoH
// (Device -> Pageable)", "Memcpy DtoD (Device -> Device)", "Memcpy PtoP
// (Device -> Device)"; the memory kinds are CUPTI's (Pageable, Pinned,
// Device, Array, Managed). The host end's memory is the source's for HtoD,
// the destination's for DtoH.
CopyInfo KinetoCopy(std::string_view name) {
  CopyInfo c;
  static constexpr std::pair<std::string_view, CopyDirection> kDirections[] = {
      {"HtoD", CopyDirection::kHostToDevice},   {"DtoH", CopyDirection::kDeviceToHost},
      {"DtoD", CopyDirection::kDeviceToDevice}, {"PtoP", CopyDirection::kPeerToPeer},
      {"HtoH", CopyDirection::kHostToHost},     {"HtoA", CopyDirection::kHostToDevice},
      {"AtoH", CopyDirection::kDeviceToHost},   {"DtoA", CopyDirection::kDeviceToDevice},
      {"AtoD", CopyDirection::kDeviceToDevice}, {"AtoA", CopyDirection::kDeviceToDevice}};
  for (const auto& [word, direction] : kDirections) {
    if (name.find(word) != std::string_view::npos) {
      c.direction = direction;
      break;
    }
  }
  const size_t open = name.find('('), arrow = name.find("->");
  if (open == std::string_view::npos || arrow == std::string_view::npos || arrow < open) return c;
  const auto memory_of = [](std::string_view side) {
    if (side.find("Pinned") != std::string_view::npos) return HostMemory::kPinned;
    if (side.find("Pageable") != std::string_view::npos) return HostMemory::kPageable;
    if (side.find("Managed") != std::string_view::npos) return HostMemory::kManaged;
    return HostMemory::kUnknown;
  };
  const std::string_view from = name.substr(open + 1, arrow - open - 1),
                         to = name.substr(arrow + 2);
  if (c.direction == CopyDirection::kHostToDevice) c.host_memory = memory_of(from);
  if (c.direction == CopyDirection::kDeviceToHost) c.host_memory = memory_of(to);
  if (c.direction == CopyDirection::kHostToHost) {
    c.host_memory =
        memory_of(from) == HostMemory::kPageable || memory_of(to) == HostMemory::kPageable
            ? HostMemory::kPageable
            : memory_of(from);
  }
  return c;
}

// `communication_name()` says whether `name` is a collective's (names.h
// IsCommunication); the caller keeps its answer per name, since a trace
// repeats a kernel's name in every launch.
template <typename CommunicationName>
EventClass ClassOf(std::string_view category, std::string_view name, std::string_view process,
                   std::string_view task_type, CommunicationName communication_name) {
  // Host-side step spans: Kineto files them as user_annotation, torch_npu as cpu_op.
  const bool step = name.starts_with(schema::kStepPrefix);
  if (step && (category == "cpu_op" || category == "user_annotation" || category == "Operator" ||
               process == "CPU functions")) {
    return EventClass::kStep;
  }
  if (!category.empty()) {
    // Kineto's activity types (libkineto ActivityType.cpp), including other
    // vendors' device and runtime categories. Early Kineto (libkineto's
    // output_json.cpp of PyTorch 1.8 and 1.9) spelled five of them otherwise:
    // "Operator" for framework operators (and record_function ranges), and
    // "Kernel", "Memcpy", "Memset", "Runtime".
    if (category == "cpu_op" || category == "hpu_op" || category == "Operator") {
      return EventClass::kHostOp;
    }
    if (category == "user_annotation" || category == "cuda_profiler_range" ||
        category == "xpu_scope_profiler") {
      return EventClass::kAnnotation;
    }
    if (category == "kernel" || category == "Kernel" || category == "mtia_ccp_events") {
      if (category == "mtia_ccp_events") {
        // MTIA's command processor records kernels, copies, sets, its DMA
        // engine's requests ("dma_request", with a direction and a size) and
        // its queues' event waits and records ("event_wait", with the stream
        // it waits on: "wait_on_stream") alike.
        std::string lower(name);
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (lower.find("memcpy") != std::string::npos) return EventClass::kMemcpy;
        if (lower.find("memset") != std::string::npos) return EventClass::kMemset;
        if (lower == "dma_request") return EventClass::kDma;
        if (lower == "event_wait" || lower == "event_record") return EventClass::kDeviceWait;
      }
      // NCCL's and RCCL's kernels (ncclDevKernel_AllReduce_Sum_f32_RING_LL,
      // ncclKernel_...), and other collectives by their operation's name
      // (one_shot_all_reduce, ...): names.h IsCommunication.
      return communication_name() ? EventClass::kCommunication : EventClass::kKernel;
    }
    if (category == "gpu_memcpy" || category == "Memcpy") return EventClass::kMemcpy;
    if (category == "gpu_memset" || category == "Memset") return EventClass::kMemset;
    if (category == "cuda_runtime" || category == "Runtime" || category == "cuda_driver" ||
        category == "enqueue" || category == "dequeue" || category == "mtia_runtime" ||
        category == "xpu_runtime" || category == "xpu_driver" ||
        category == "privateuse1_runtime" || category == "privateuse1_driver" ||
        category == "glow_runtime" || category == "cuda_event") {
      return EventClass::kRuntime;
    }
    if (category == "cuda_sync" || category == "xpu_sync") return EventClass::kSync;
    if (category == "gpu_user_annotation" || category == "gpu_user_Annotation") {
      return EventClass::kDeviceAnnotation;
    }
    if (category == "python_function") return EventClass::kPython;
    // torch_npu's Python garbage-collector records (experimental_config's
    // gc_detect_threshold): Python's own work on the host.
    if (category == "GC" || category == "gc") return EventClass::kPython;
    return EventClass::kOther;
  }
  if (process == "Ascend Hardware") return AscendTaskClass(name, "", task_type);
  // torch_npu's collective operators on the NPU (docs/formats/ascend.md: "HCCL" in
  // older versions, "Communication" now).
  if (process == "HCCL" || process == "Communication") return EventClass::kCommunication;
  if (process == "CANN") return EventClass::kRuntime;
  if (process == "Overlap Analysis") return EventClass::kDerived;
  if (process == "CPU functions") return EventClass::kHostOp;
  // PyTorch's profiler before Kineto, with use_cuda=True (torch.autograd.
  // profiler's EventList.export_chrome_trace, PyTorch 1.x without Kineto): each
  // operator's time on the GPU, measured with CUDA events, as an X event
  // named after the operator on pid "CUDA functions", tid the device.
  if (process == "CUDA functions") return EventClass::kKernel;
  return EventClass::kOther;
}

// The sniffer's decision on the bytes peeked so far: 1 yes, 0 no, -1 not
// decided yet (more bytes needed); `complete` says that `head` is the whole input.
int SniffChromeJsonHead(std::string_view head, bool complete) {
  size_t i = 0;
  if (head.starts_with("\xEF\xBB\xBF")) i = 3;  // a UTF-8 byte-order mark
  while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  if (i >= head.size()) return complete ? 0 : -1;
  const char open = head[i];
  if (open != '{' && open != '[') return 0;
  // Walk the top-level value: for an object, its member names; for an array,
  // its first element, which must be an object holding "ph".
  int depth = 0;
  bool in_string = false, escaped = false;
  size_t string_start = 0, element_start = 0;
  for (; i < head.size(); ++i) {
    const char c = head[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (open == '{' && depth == 1) {
          const std::string_view text = head.substr(string_start, i - string_start);
          size_t k = i + 1;
          while (k < head.size() && std::isspace(static_cast<unsigned char>(head[k]))) ++k;
          if (k < head.size() && head[k] == ':' &&
              (text == schema::kTraceEvents || text == schema::kSchemaVersion)) {
            return 1;
          }
        }
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        string_start = i + 1;
        break;
      case '{':
      case '[':
        ++depth;
        if (open == '[' && depth == 2) {
          if (c != '{') return 0;
          element_start = i;
        }
        break;
      case '}':
      case ']':
        --depth;
        if (depth == 0) return 0;  // the top-level value ended without a sign of events
        if (open == '[' && depth == 1) {
          const std::string_view element = head.substr(element_start, i + 1 - element_start);
          return element.find("\"ph\"") != std::string_view::npos ? 1 : 0;
        }
        break;
      default: break;
    }
  }
  if (!complete) return -1;
  // The data ends inside the first event: a truncated trace, which the importer
  // reports with its byte offset.
  if (open == '[' && depth >= 2 &&
      head.substr(element_start).find("\"ph\"") != std::string_view::npos) {
    return 1;
  }
  return 0;
}

}  // namespace

Importer ChromeJsonImporter() {
  return Importer{
      "chrome-json",
      "Chrome-trace JSON from opscope, PyTorch/Kineto or torch_npu (trace_view.json)",
      {"*.json"},
      SniffChromeJson,
      [](Source& source, TraceModel& model) { ImportChromeJson(source, model); },
  };
}

bool SniffChromeJson(Source& source) {
  for (size_t n = 4096;; n *= 4) {
    const std::string_view head = source.Peek(n);
    const bool complete = head.size() < n || source.PeekedAll();
    const int verdict = SniffChromeJsonHead(head, complete);
    if (verdict >= 0) return verdict == 1;
    if (complete || n >= kMaxPeekBytes) return false;
  }
}

namespace {

// Metadata events, replayed on the merged model in file order.
struct MetaEvent {
  bool process;  // process_name, else thread_name
  std::string pid, tid, name;
};

// What one thread parses: a model of its own (strings and tracks with its own
// ids, kept across batches) whose columns hold the current batch only.
struct Part {
  TraceModel model;
  simdjson::ondemand::parser parser;
  std::string pid_scratch, tid_scratch, text;
  std::string_view last_category;
  uint32_t last_category_id = 0;
  bool string_timestamps = false;
  bool operand_shapes = true;  // ImportSettings::operand_shapes
  std::vector<MetaEvent> meta;
  uint64_t instant = 0, counter = 0, flow = 0;
  int64_t recording_end = INT64_MIN;  // Kineto's "Record Window End", where read
  // Ends of host-to-device flows (Ascend), paired after the merge.
  struct FlowEnd {
    std::string id;
    bool start;
    int64_t ts;
    uint32_t track;
  };
  std::vector<FlowEnd> flow_ends;
  // Ends of torch_npu's "async_npu" flows (torch op -> the device task it
  // launched), on this part's tracks, paired after the merge.
  struct OpFlowEnd {
    std::string id;
    bool start;
    int64_t ts;
    uint32_t track;
    std::string name;  // the start's: its operator's name (PyTorch's pre-Kineto export)
  };
  std::vector<OpFlowEnd> op_flow_ends;
  // torch_npu's "AI Core Freq" counter samples (ReportedTables::core_clock).
  std::vector<ReportedClockSample> clock;
  // PyTorch's memory events, on this part's tracks (kineto_memory.h).
  std::vector<MemoryEvent> memory;
  // Events left out, each well-formed JSON that is not a usable event (a
  // "ts" that is no time, a complete event without "dur", ...), by why: how
  // many, and the first one's byte. The rest of the trace is read.
  struct Skipped {
    int64_t count = 0;
    uint64_t first = UINT64_MAX;
  };
  std::map<std::string, Skipped> skipped;
  std::string id_scratch;
  PartIds ids;  // its string and track ids in the merged model
};

// The arguments the importer reads (core/trace_schema.h). Events carry many
// others (Kineto: a dozen per kernel); every compare checks the length first,
// so an argument that is none of these costs a few integer compares.
enum class Arg : uint8_t {
  kOther,
  kName,
  kFlops,
  kBytes,
  kCorrelation,
  kExternalId,
  kInputDims,
  kInputType,
  kConcreteInputs,
  kTaskType,
  kShapes,
  kDtype,
  kLayout,
  kModule,
  // A collective's (TraceModel::CollectiveArgs).
  kCollectiveName,
  kProcessGroupName,
  kSeq,
  kInMsgNelems,
  kOutMsgNelems,
  kGroupSize,
  kSrcRank,
  kDstRank,
  // PyTorch's "[memory]" instant events (kineto_memory.h).
  kMemoryBytes,
  kMemoryAddr,
  kTotalAllocated,
  kTotalReserved,
  kDeviceId,
  kDeviceType,
  // An HCCL task's size, transport and link (trace_view.json's plane tasks).
  kSizeBytes,
  kTransportType,
  kLinkType,
  // A clock counter's value (torch_npu's "AI Core Freq" counter: "MHz").
  kMhz,
};

// The numbers Ascend's enums give a communication task's transport and link
// (docs/formats/ascend.md: ENUM_HCCL_TRANSPORT_TYPE, ENUM_HCCL_LINK_TYPE), from
// the names trace_view.json writes ("SDMA", "ON_CHIP"); -1 another name.
int8_t EnumNumber(std::string_view name, std::initializer_list<std::string_view> names) {
  int8_t i = 0;
  for (const std::string_view n : names) {
    if (name == n) return i;
    ++i;
  }
  return -1;
}
int8_t TransportNumber(std::string_view name) {
  return EnumNumber(name, {"SDMA", "RDMA", "LOCAL"});
}
int8_t LinkNumber(std::string_view name) {
  return EnumNumber(name, {"ON_CHIP", "HCCS", "PCIE", "ROCE", "SIO", "HCCS_SW", "STANDARD_ROCE"});
}

// The argument keys read, each with its meaning: one list, by length, from
// which the lookup's index by length is derived (a key added here is found
// whatever its length; static_asserts keep the list in order).
struct KnownArg {
  std::string_view key;
  Arg arg;
};
constexpr KnownArg kKnownArgs[] = {
    {"Seq", Arg::kSeq},
    {"MHz", Arg::kMhz},
    {"Addr", Arg::kMemoryAddr},
    {"name", Arg::kName},
    {"Bytes", Arg::kMemoryBytes},
    {schema::kFlops, Arg::kFlops},
    {schema::kBytes, Arg::kBytes},
    {schema::kDtype, Arg::kDtype},
    {schema::kShapes, Arg::kShapes},
    {schema::kLayout, Arg::kLayout},
    {schema::kModule, Arg::kModule},
    {"src rank", Arg::kSrcRank},
    {"dst rank", Arg::kDstRank},
    {"Device Id", Arg::kDeviceId},
    {"link type", Arg::kLinkType},
    {schema::kTaskType, Arg::kTaskType},
    {"size(Byte)", Arg::kSizeBytes},
    {"Group size", Arg::kGroupSize},
    {schema::kInputDims, Arg::kInputDims},
    {schema::kInputType, Arg::kInputType},
    {"Device Type", Arg::kDeviceType},
    {schema::kCorrelation, Arg::kCorrelation},
    {schema::kExternalId, Arg::kExternalId},
    {"In msg nelems", Arg::kInMsgNelems},
    {"transport type", Arg::kTransportType},
    {"Total Reserved", Arg::kTotalReserved},
    {"Out msg nelems", Arg::kOutMsgNelems},
    {"Total Allocated", Arg::kTotalAllocated},
    {"Collective name", Arg::kCollectiveName},
    {schema::kConcreteInputs, Arg::kConcreteInputs},
    {"Process Group Name", Arg::kProcessGroupName},
};
constexpr size_t kKnownArgCount = std::size(kKnownArgs);
constexpr size_t kLongestArgKey = kKnownArgs[kKnownArgCount - 1].key.size();
constexpr bool ByLength() {
  for (size_t i = 1; i < kKnownArgCount; ++i) {
    if (kKnownArgs[i].key.size() < kKnownArgs[i - 1].key.size()) return false;
  }
  return true;
}
static_assert(ByLength(), "kKnownArgs must be ordered by key length");
// The first entry of each length (and of every longer one), for lengths 0 to
// the longest + 1.
constexpr std::array<uint8_t, kLongestArgKey + 2> FirstOfLength() {
  std::array<uint8_t, kLongestArgKey + 2> first{};
  size_t i = 0;
  for (size_t n = 0; n < first.size(); ++n) {
    while (i < kKnownArgCount && kKnownArgs[i].key.size() < n) ++i;
    first[n] = static_cast<uint8_t>(i);
  }
  return first;
}
constexpr auto kFirstOfLength = FirstOfLength();

inline Arg ArgOf(std::string_view k) {
  if (k.size() > kLongestArgKey) return Arg::kOther;
  for (size_t i = kFirstOfLength[k.size()]; i < kFirstOfLength[k.size() + 1]; ++i) {
    if (std::memcmp(k.data(), kKnownArgs[i].key.data(), k.size()) == 0) return kKnownArgs[i].arg;
  }
  return Arg::kOther;
}

void ParseEvent(const std::string& path, std::string_view json, uint64_t offset, Part& part) {
  TraceModel& model = part.model;
  const auto bad = [&](uint64_t at, const std::string& what) {
    return Error(ErrorCode::kInvalidInput, path + ": byte " + std::to_string(at) + ": " + what);
  };
  // An event that is JSON but not a usable event: counted, and left out.
  const auto skip = [&](const std::string& why) {
    Part::Skipped& s = part.skipped[why];
    if (s.count++ == 0) s.first = offset;
  };
  simdjson::ondemand::document doc;
  if (auto error = part.parser.iterate(json.data(), json.size(), json.size() + 64).get(doc)) {
    throw bad(offset, std::string("malformed event: ") + simdjson::error_message(error));
  }
  simdjson::ondemand::object object;
  if (doc.get_object().get(object)) throw bad(offset, "an event is not an object");
  std::string_view ph, name, meta_name;
  std::string_view pid, tid, flow_id;
  int64_t ts = 0, dur = 0, flops = -1, bytes = -1, correlation = -1, external = -1;
  double mhz = 0;
  uint32_t name_id = 0, category_id = 0, task_type = 0, dims = 0, types = 0, concrete = 0,
           shapes = 0, dtype = 0, layout = 0, module = 0;
  bool has_ts = false, has_dur = false;
  TraceModel::CollectiveArgs collective;
  bool has_collective = false;
  MemoryEvent memory;  // a "[memory]" event's arguments
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) throw bad(offset, "malformed member name");
    simdjson::ondemand::value value;
    if (field.value().get(value))
      throw bad(offset, "malformed value of \"" + std::string(key) + "\"");
    if (key == "ph"sv) {
      if (value.get_string().get(ph)) return skip("\"ph\" is not a string");
      part.text.assign(ph);
      ph = part.text;
    } else if (key == "name"sv) {
      std::string_view n;
      if (value.get_string().get(n)) return skip("\"name\" is not a string");
      name_id = model.Intern(n);
      name = model.String(name_id);
    } else if (key == "cat"sv) {
      std::string_view c;
      if (value.get_string().get(c)) return skip("\"cat\" is not a string");
      // Few categories, repeated: compare with the previous one before hashing.
      if (c != part.last_category || part.last_category_id == 0) {
        part.last_category_id = model.Intern(c);
        part.last_category = model.String(part.last_category_id);
      }
      category_id = part.last_category_id;
    } else if (key == "pid"sv) {
      pid = IdText(value, part.pid_scratch);
    } else if (key == "tid"sv) {
      tid = IdText(value, part.tid_scratch);
    } else if (key == "id"sv) {
      flow_id = IdText(value, part.id_scratch);
    } else if (key == "ts"sv) {
      json_type type;
      part.string_timestamps |= !value.type().get(type) && type == json_type::string;
      // The value is read once (simdjson's on-demand values): its text, then the time.
      const std::string_view text = TimeText(value);
      if (!MicrosToNs(text, ts)) {
        return skip("\"ts\" is " + WhyNotMicros(text, "not a time in microseconds"));
      }
      has_ts = true;
    } else if (key == "dur"sv) {
      const std::string_view text = TimeText(value);
      if (!MicrosToNs(text, dur)) {
        return skip("\"dur\" is " + WhyNotMicros(text, "not a duration in microseconds"));
      }
      has_dur = true;
    } else if (key == "args"sv) {
      simdjson::ondemand::object args;
      if (value.get_object().get(args)) continue;
      for (auto arg : args) {
        std::string_view arg_key;
        if (arg.unescaped_key().get(arg_key)) break;
        switch (const Arg kind = ArgOf(arg_key)) {
          case Arg::kOther: break;
          case Arg::kName: {
            std::string_view n;
            if (!arg.value().get_string().get(n)) meta_name = model.String(model.Intern(n));
            break;
          }
          case Arg::kFlops:
          case Arg::kBytes:
          case Arg::kCorrelation:
          case Arg::kExternalId: {
            int64_t v = -1;
            if (!arg.value().get_int64().get(v)) {
              (kind == Arg::kFlops         ? flops
               : kind == Arg::kBytes       ? bytes
               : kind == Arg::kCorrelation ? correlation
                                           : external) = v;
            }
            break;
          }
          case Arg::kInputDims:
          case Arg::kInputType:
          case Arg::kConcreteInputs: {
            if (!part.operand_shapes) break;
            simdjson::ondemand::array array;
            std::string_view raw;
            if (!arg.value().get_array().get(array) && !array.raw_json().get(raw)) {
              (kind == Arg::kInputDims   ? dims
               : kind == Arg::kInputType ? types
                                         : concrete) = model.Intern(raw);
            }
            break;
          }
          case Arg::kCollectiveName:
          case Arg::kProcessGroupName: {
            std::string_view t;
            if (!arg.value().get_string().get(t) && !t.empty()) {
              (kind == Arg::kCollectiveName ? collective.op : collective.group) = model.Intern(t);
              has_collective = true;
            }
            break;
          }
          case Arg::kSeq:
          case Arg::kInMsgNelems:
          case Arg::kOutMsgNelems:
          case Arg::kGroupSize: {
            int64_t v = -1;
            if (!arg.value().get_int64().get(v) && v >= 0) {
              (kind == Arg::kSeq            ? collective.seq
               : kind == Arg::kInMsgNelems  ? collective.in_nelems
               : kind == Arg::kOutMsgNelems ? collective.out_nelems
                                            : collective.group_size) = v;
              has_collective = true;
            }
            break;
          }
          case Arg::kSrcRank:
          case Arg::kDstRank: {
            int64_t v = -1;
            if (!arg.value().get_int64().get(v) && v >= 0 && v <= INT32_MAX) {
              (kind == Arg::kSrcRank ? collective.src_rank : collective.dst_rank) =
                  static_cast<int32_t>(v);
              has_collective = true;
            }
            break;
          }
          case Arg::kMemoryBytes:
          case Arg::kMemoryAddr:
          case Arg::kTotalAllocated:
          case Arg::kTotalReserved:
          case Arg::kDeviceId:
          case Arg::kDeviceType: {
            int64_t v = 0;
            if (!arg.value().get_int64().get(v)) {
              (kind == Arg::kMemoryBytes      ? memory.bytes
               : kind == Arg::kMemoryAddr     ? memory.addr
               : kind == Arg::kTotalAllocated ? memory.total_allocated
               : kind == Arg::kTotalReserved  ? memory.total_reserved
               : kind == Arg::kDeviceId       ? memory.device_id
                                              : memory.device_type) = v;
            }
            break;
          }
          case Arg::kSizeBytes: {
            int64_t v = -1;
            if (!arg.value().get_int64().get(v) && v >= 0) bytes = v;
            break;
          }
          case Arg::kMhz: {
            double v = 0;
            if (!arg.value().get_double().get(v) && v > 0 && v < 1e6) mhz = v;
            break;
          }
          case Arg::kTransportType:
          case Arg::kLinkType: {
            std::string_view t;
            if (!arg.value().get_string().get(t)) {
              const int8_t v = kind == Arg::kTransportType ? TransportNumber(t) : LinkNumber(t);
              (kind == Arg::kTransportType ? collective.transport : collective.link) = v;
              has_collective |= v >= 0;
            }
            break;
          }
          case Arg::kTaskType:
          case Arg::kShapes:
          case Arg::kDtype:
          case Arg::kLayout:
          case Arg::kModule: {
            std::string_view t;
            if (!arg.value().get_string().get(t) && !t.empty()) {
              (kind == Arg::kTaskType ? task_type
               : kind == Arg::kShapes ? shapes
               : kind == Arg::kDtype  ? dtype
               : kind == Arg::kLayout ? layout
                                      : module) = model.Intern(t);
            }
            break;
          }
        }
      }
    }
  }
  if (ph.empty()) return skip("an event without \"ph\"");
  if (ph == "X"sv) {
    if (!has_ts || !has_dur) return skip("a complete event without \"ts\" or \"dur\"");
    if (dur < 0) return skip("a negative \"dur\"");
    if (has_collective) {
      collective.event = static_cast<uint32_t>(model.size());
      model.collective_args.push_back(collective);
    }
    model.Append(EventRow{.start_ns = ts,
                          .duration_ns = dur,
                          .name = name_id,
                          .category = category_id,
                          .track = model.TrackFor(pid, tid),
                          .flops = flops,
                          .bytes = bytes,
                          .correlation = correlation,
                          .kind = task_type,
                          .external_id = external,
                          .input_dims = dims,
                          .input_type = types,
                          .concrete_inputs = concrete,
                          .shapes = shapes,
                          .dtype = dtype,
                          .layout = layout,
                          .module = module});
  } else if (ph == "M"sv) {
    if (name == "process_name"sv) {
      part.meta.push_back({true, std::string(pid), {}, std::string(meta_name)});
    } else if (name == "thread_name"sv) {
      part.meta.push_back({false, std::string(pid), std::string(tid), std::string(meta_name)});
    }
  } else if (ph == "i"sv || ph == "I"sv) {
    ++part.instant;
    // libkineto's ChromeTraceLogger::finalizeTrace writes the end of the
    // capture window as a global instant, the trace's last event.
    if (has_ts && name == "Record Window End"sv) {
      part.recording_end = std::max(part.recording_end, ts);
    }
    if (has_ts && name == "[memory]"sv && memory.total_allocated >= 0) {
      memory.ts = ts;
      memory.track = model.TrackFor(pid, tid);
      part.memory.push_back(memory);
    }
  } else if (ph == "C"sv) {
    ++part.counter;
    if (has_ts && mhz > 0 && name == "AI Core Freq"sv) part.clock.push_back({ts, mhz});
  } else if (ph == "s"sv || ph == "f"sv || ph == "t"sv) {
    ++part.flow;
    if (ph != "t"sv && has_ts && !flow_id.empty() && category_id != 0) {
      const std::string_view category = model.String(category_id);
      if (category == "HostToDevice"sv) {
        part.flow_ends.push_back({std::string(flow_id), ph == "s"sv, ts, model.TrackFor(pid, tid)});
      } else if (category == "async_npu"sv || category == "cpu_to_cuda"sv) {
        // torch_npu's operator -> task flows, and the same pairing in
        // PyTorch's pre-Kineto export (cat "cpu_to_cuda": "s" at the
        // operator's start on its thread, "f" at its GPU time's start).
        part.op_flow_ends.push_back(
            {std::string(flow_id), ph == "s"sv, ts, model.TrackFor(pid, tid),
             ph == "s"sv && category == "cpu_to_cuda"sv ? std::string(name) : std::string()});
      }
    }
  }
}

// Appends a part's batch to the merged model, translating its ids; the ends of
// host-to-device flows go to `flows` (id -> host start, first device start).
// An async_npu flow's two ends in the merged model: where the torch op
// launched (its track and time) and where the device task starts.
struct OpFlow {
  uint32_t host_track = UINT32_MAX, device_track = UINT32_MAX;
  int64_t host_ns = -1, device_ns = -1;
  std::string name;  // its start's name ("" none)
};

void Merge(Part& part, TraceModel& model,
           std::unordered_map<std::string, TraceModel::LaunchFlow>& flows,
           std::unordered_map<std::string, OpFlow>& op_flows, std::vector<MemoryEvent>& memory) {
  part.ids.MoveEvents(part.model, model);
  for (const MetaEvent& m : part.meta) {
    if (m.process) {
      model.process_names[m.pid] = m.name;
    } else {
      model.tracks[model.TrackFor(m.pid, m.tid)].thread = m.name;
    }
  }
  part.meta.clear();
  model.instant_events += std::exchange(part.instant, 0);
  if (part.recording_end != INT64_MIN) {
    model.recording_end_ns = model.recording_end_ns == INT64_MAX
                                 ? part.recording_end
                                 : std::max(model.recording_end_ns, part.recording_end);
    part.recording_end = INT64_MIN;
  }
  model.counter_events += std::exchange(part.counter, 0);
  model.flow_events += std::exchange(part.flow, 0);
  for (auto& end : part.flow_ends) {
    auto [it, inserted] = flows.try_emplace(std::move(end.id), TraceModel::LaunchFlow{-1, -1});
    TraceModel::LaunchFlow& f = it->second;
    const uint32_t track = part.ids.Track(part.model, model, end.track);
    if (end.start) {
      if (f.host_ns < 0) f.host_ns = end.ts, f.host_track = track;
    } else if (f.device_ns < 0 || end.ts < f.device_ns) {
      f.device_ns = end.ts, f.device_track = track;
    }
  }
  part.flow_ends.clear();
  for (MemoryEvent& m : part.memory) {
    m.track = part.ids.Track(part.model, model, m.track);
    memory.push_back(m);
  }
  part.memory.clear();
  for (auto& end : part.op_flow_ends) {
    OpFlow& f = op_flows[std::move(end.id)];
    (end.start ? f.host_track : f.device_track) = part.ids.Track(part.model, model, end.track);
    (end.start ? f.host_ns : f.device_ns) = end.ts;
    if (end.start) f.name = std::move(end.name);
  }
  part.op_flow_ends.clear();
  model.reported.core_clock.insert(model.reported.core_clock.end(), part.clock.begin(),
                                   part.clock.end());
  part.clock.clear();
}

// torch_npu's async_npu flows tie each device task to the torch operator that
// launched it (docs/formats/ascend.md 3.1: the flow starts inside the operator on its
// thread and ends at the task's start on its stream). The pair shares an
// External id, as Kineto's do, so the analyses find the launcher the same way:
// the innermost framework operator enclosing the start, and the device task
// starting at the end. Returns how many tasks were linked.
size_t LinkTorchToNpu(const std::unordered_map<std::string, OpFlow>& op_flows, TraceModel& model) {
  if (op_flows.empty()) return 0;
  // Per track, its operators (host) or tasks (device) by start.
  std::vector<std::vector<uint32_t>> by_track(model.tracks.size());
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] == EventClass::kHostOp || IsDevice(model.cls[e])) {
      by_track[model.track[e]].push_back(static_cast<uint32_t>(e));
    }
  }
  for (auto& v : by_track) {
    std::stable_sort(v.begin(), v.end(),
                     [&](uint32_t a, uint32_t b) { return model.start_ns[a] < model.start_ns[b]; });
  }
  const auto first_at_or_after = [&](const std::vector<uint32_t>& v, int64_t ns) {
    return std::lower_bound(v.begin(), v.end(), ns,
                            [&](uint32_t e, int64_t t) { return model.start_ns[e] < t; });
  };
  // Synthetic ids above any Kineto writes (they count from 1).
  int64_t next_id = int64_t{1} << 60;
  size_t linked = 0;
  for (const auto& [id, f] : op_flows) {
    if (f.host_track == UINT32_MAX || f.device_track == UINT32_MAX || f.host_ns < 0) continue;
    const auto& tasks = by_track[f.device_track];
    const auto task = first_at_or_after(tasks, f.device_ns);
    if (task == tasks.end() || model.start_ns[*task] != f.device_ns ||
        !IsDevice(model.cls[*task]) || model.external_id[*task] >= 0) {
      continue;
    }
    // The innermost operator open at the flow's start: walking back from the
    // last one started by then, the first still open (nested operators start
    // later than those around them); where the flow's start is named (PyTorch's
    // pre-Kineto export names it after its operator, whose children can start
    // in the same microsecond), the innermost open one of that name. A bounded
    // walk: a flow whose operator is further back than that stays unlinked.
    const auto& ops = by_track[f.host_track];
    auto it = std::upper_bound(ops.begin(), ops.end(), f.host_ns,
                               [&](int64_t t, uint32_t e) { return t < model.start_ns[e]; });
    int64_t op = -1;
    for (int steps = 0; it != ops.begin() && steps < 256; ++steps) {
      --it;
      if (model.start_ns[*it] + model.duration_ns[*it] >= f.host_ns &&
          model.cls[*it] == EventClass::kHostOp) {
        if (op < 0) op = *it;
        if (f.name.empty() || model.String(model.name[*it]) == f.name) {
          op = *it;
          break;
        }
      }
    }
    if (op < 0) continue;
    if (model.external_id[static_cast<size_t>(op)] < 0) {
      model.external_id.Set(static_cast<size_t>(op), next_id++);
    }
    model.external_id.Set(*task, model.external_id[static_cast<size_t>(op)]);
    ++linked;
  }
  return linked;
}

}  // namespace

void ImportChromeJson(const std::filesystem::path& path, TraceModel& model,
                      const ImportOptions& options) {
  const auto source = Source::Open(path);
  ImportChromeJson(*source, model, options);
}

void ImportChromeJson(Source& source, TraceModel& model, const ImportOptions& options) {
  const std::string& path = source.name();
  const size_t chunk = ImportChunkBytes(options.chunk_bytes, source.expected_bytes());
  JsonEventStream stream(source, JsonReadOptions{chunk});
  // Batches are parsed at once and merged in file order (ordered_batches.h),
  // so the model is the same for any thread count.
  const ImportSettings settings = GetImportSettings();
  std::unordered_map<std::string, TraceModel::LaunchFlow> flows;  // filled by the merges
  std::unordered_map<std::string, OpFlow> op_flows;
  std::vector<MemoryEvent> memory;  // PyTorch's "[memory]" events, merged
  bool string_timestamps = false;
  std::map<std::string, Part::Skipped> skipped;  // over the whole file
  struct State {
    Part part;
    EventBatch batch;
  };
  RunOrderedBatches<State>(
      ImportThreads(options.threads, source.expected_bytes()),
      [&](State& s) { s.part.operand_shapes = settings.operand_shapes; },
      [&](State& s) { return stream.Next(s.batch); },
      [&](State& s) {
        for (const EventSpan& e : s.batch.spans) {
          ParseEvent(path, std::string_view(s.batch.buffer.data() + e.offset, e.length),
                     s.batch.base + e.offset, s.part);
        }
      },
      [&](State& s, uint64_t sequence) {
        const EventBatch& batch = s.batch;
        Merge(s.part, model, flows, op_flows, memory);
        for (auto& [why, n] : s.part.skipped) {
          Part::Skipped& all = skipped[why];
          all.first = std::min(all.first, n.first);
          all.count += n.count;
        }
        s.part.skipped.clear();
        if (sequence == 0 && !batch.spans.empty() && stream.expected_bytes() > 0) {
          // Reserve the columns for the whole file from the first batch's density
          // (+10%): no reallocation copies, no doubled peak. Untouched capacity
          // costs address space, not memory.
          const uint64_t covered =
              batch.base + batch.spans.back().offset + batch.spans.back().length;
          const double per_byte = static_cast<double>(model.size()) / static_cast<double>(covered);
          const double expected = static_cast<double>(stream.expected_bytes());
          model.Reserve(static_cast<size_t>(std::min(per_byte, 1.0 / 16) * expected * 1.1) + 1024);
        }
        string_timestamps |= s.part.string_timestamps;
      });
  if (!skipped.empty()) {
    // Where nothing usable is left, the first event left out is the error;
    // else the report says what was left out, and the rest is analysed.
    const auto first = std::min_element(
        skipped.begin(), skipped.end(),
        [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
    if (model.size() == 0) {
      throw Error(ErrorCode::kInvalidInput,
                  path + ": byte " + std::to_string(first->second.first) + ": " + first->first);
    }
    std::vector<std::pair<std::string, Part::Skipped>> reasons(skipped.begin(), skipped.end());
    std::sort(reasons.begin(), reasons.end(),
              [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
    int64_t total = 0;
    std::string why;
    for (const auto& [what, n] : reasons) {
      total += n.count;
      why += fmt::format("{}{} ({}, the first at byte {})", why.empty() ? "" : "; ", what, n.count,
                         n.first);
    }
    model.records_left_out += static_cast<uint64_t>(total);
    model.import_notes.push_back(fmt::format(
        "{} event{} left out, each JSON but not a usable event: {}. The other {} events are "
        "analysed",
        total, total == 1 ? " was" : "s were", why, model.size()));
  }
  const JsonDocumentInfo& info = stream.info();
  // Flows with both ends, also those that end before they start (the host's
  // and the device's clocks disagree): the launch pass counts them, and
  // concludes nothing about delays where they are most.
  size_t backward = 0;
  for (const auto& [id, f] : flows) {
    if (f.host_ns < 0 || f.device_ns < 0) continue;
    model.launch_flows.push_back(f);
    backward += f.device_ns < f.host_ns;
  }
  if (backward > 0) {
    model.import_notes.push_back(fmt::format(
        "{} of {} host-to-device flows end on the device before they start on the host (the "
        "host's and the device's clocks disagree): left out of the launch delays",
        backward, model.launch_flows.size()));
  }
  std::stable_sort(model.reported.core_clock.begin(), model.reported.core_clock.end(),
                   [](const auto& a, const auto& b) { return a.ns < b.ns; });
  std::sort(model.launch_flows.begin(), model.launch_flows.end(), [](const auto& a, const auto& b) {
    return a.host_ns != b.host_ns ? a.host_ns < b.host_ns : a.device_ns < b.device_ns;
  });
  model.NameProcesses();
  bool ascend = false, legacy = false;
  std::unordered_map<uint32_t, uint8_t> copy_of;  // a copy's name -> CopyInfo, once per name
  std::vector<int8_t> loading;                    // by name: a DataLoader's span; -1 not yet known
  std::vector<int8_t> communication;              // by name: a collective's; -1 not yet known
  for (size_t e = 0; e < model.size(); ++e) {
    const std::string_view process = model.tracks[model.track[e]].process;
    const uint32_t name_id = model.name[e];
    const auto communication_name = [&] {
      if (name_id >= communication.size()) communication.resize(model.string_count(), -1);
      if (communication[name_id] < 0) {
        communication[name_id] = IsCommunication(model.String(name_id));
      }
      return communication[name_id] == 1;
    };
    model.cls[e] = ClassOf(model.String(model.category[e]), model.String(name_id), process,
                           model.String(model.kind[e]), communication_name);
    const EventClass cls = model.cls[e];
    if (cls == EventClass::kAnnotation &&
        model.String(model.category[e]) == "cuda_profiler_range") {
      ++model.replay_ranges;  // libkineto's CUDA_PROFILER_RANGE: CUPTI's range profiler
    }
    if (cls == EventClass::kHostOp || cls == EventClass::kAnnotation ||
        cls == EventClass::kPython) {
      // The DataLoader's iterator (names.h IsDataLoaderSpan).
      const uint32_t name = model.name[e];
      if (name >= loading.size()) loading.resize(model.string_count(), -1);
      if (loading[name] < 0) loading[name] = IsDataLoaderSpan(model.String(name));
      if (loading[name] == 1) model.cls[e] = EventClass::kDataLoading;
    } else if (cls == EventClass::kMemcpy) {
      const auto [at, fresh] = copy_of.try_emplace(model.name[e]);
      if (fresh) at->second = KinetoCopy(model.String(model.name[e])).Packed();
      if (at->second != 0) model.copy.Set(e, at->second);
    }
    ascend |= process == "Ascend Hardware" || process == "CANN";
    legacy |= process == "CPU functions";
  }
  LinkTorchToNpu(op_flows, model);
  // PyTorch's memory events, once the operators are classed (kineto_memory.h).
  if (!memory.empty()) {
    if (auto m = KinetoMemory(model, std::move(memory), path)) model.reported.memory = std::move(m);
  }
  const auto other = info.members.find(std::string(schema::kOtherData));
  if (other != info.members.end() &&
      other->second.find("\"" + std::string(schema::kProducer) + "\":\"" +
                         std::string(schema::kProducerOpscope) + "\"") != std::string::npos) {
    model.format = "opscope";
  } else if (info.members.count(std::string(schema::kSchemaVersion))) {
    model.format = "kineto";
    model.written_by_pytorch = true;
  } else if (other != info.members.end() &&
             other->second.find("\"converted_by\":\"opscope convert\"") != std::string::npos) {
    // `opscope convert`'s output (convert/chrome_trace.h): any producer's
    // events, its times since the epoch written as strings.
    model.format = "opscope-convert";
  } else if (ascend || string_timestamps) {
    model.format = "ascend-trace-view";
    CompleteAscendModel(model);
  } else if (legacy) {
    model.format = "pytorch-legacy";
    model.written_by_pytorch = true;
  } else {
    model.format = "chrome-json";
  }
  const auto devices = info.members.find(std::string(schema::kDeviceProperties));
  if (devices != info.members.end()) {
    const auto at = devices->second.find("\"name\"");
    if (at != std::string::npos) {
      const auto open = devices->second.find('"', devices->second.find(':', at) + 1);
      const auto close = devices->second.find('"', open + 1);
      if (open != std::string::npos && close != std::string::npos) {
        model.device_name = devices->second.substr(open + 1, close - open - 1);
      }
    }
  }
  ReadKinetoLog(info.members, model);
  for (const auto& [key, value] : info.members) {
    if (key == schema::kDistributedInfo || key == schema::kDeviceProperties ||
        key == schema::kBaseTimeNanoseconds || key == schema::kOtherData ||
        key == schema::kSchemaVersion || key == schema::kDisplayTimeUnit) {
      model.metadata[key] = value;
    }
  }
  model.source = path;
}

}  // namespace opscope::analyze
