// rocprofv3's JSON output (rocprof_json_importer.h).
#include "analyze/importers/rocprof/rocprof_json_importer.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cctype>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyze/importers/json_file.h"
#include "analyze/importers/rocprof/rocprof_records.h"
#include "analyze/importers/timestamps.h"
#include "analyze/names.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

constexpr std::string_view kTool = "rocprofiler-sdk-tool";
constexpr size_t kMaxBytes = size_t{2} << 30;

int64_t Int(element e, std::string_view key, int64_t fallback = -1) {
  int64_t v = 0;
  if (e[key].get_int64().get(v) == simdjson::SUCCESS) return v;
  uint64_t u = 0;
  if (e[key].get_uint64().get(u) == simdjson::SUCCESS && u <= INT64_MAX) {
    return static_cast<int64_t>(u);
  }
  return fallback;
}
// A {"handle": N} member's N.
int64_t Handle(element e, std::string_view key) {
  element inner;
  if (e[key].get(inner) != simdjson::SUCCESS) return -1;
  return Int(inner, "handle");
}
std::string_view Str(element e, std::string_view key) {
  std::string_view v;
  return e[key].get_string().get(v) == simdjson::SUCCESS ? v : std::string_view();
}

class Reader {
 public:
  Reader(TraceModel& model, std::string path) : model_(model), path_(std::move(path)) {}

  void Process(element tool, size_t index) {
    process_ = index;
    element metadata;
    pid_ = std::to_string(
        tool["metadata"].get(metadata) == simdjson::SUCCESS ? Int(metadata, "pid", 0) : 0);
    Agents(tool);
    Symbols(tool);
    Operations(tool);
    element records;
    if (tool["buffer_records"].get(records) != simdjson::SUCCESS) {
      throw Error(ErrorCode::kInvalidInput,
                  path_ + ": " + std::string(kTool) + " entry " + std::to_string(index) +
                      " has no buffer_records: not rocprofv3's JSON output");
    }
    Dispatches(records);
    Copies(records);
    Calls(records, "hip_api");
    Calls(records, "rccl_api");
    Markers(records);
  }

  void Finish() {
    if (skipped_ > 0) {
      model_.records_left_out += static_cast<uint64_t>(skipped_);
      model_.import_notes.push_back(fmt::format(
          "{} records without a valid start and end timestamp were left out", skipped_));
    }
    model_.NameProcesses();
  }

 private:
  void Agents(element tool) {
    agents_.clear();
    array list;
    if (tool["agents"].get(list) != simdjson::SUCCESS) return;
    for (const element a : list) {
      const int64_t handle = Handle(a, "id");
      if (Int(a, "type") != 2) continue;  // ROCPROFILER_AGENT_TYPE_GPU
      std::string product(Str(a, "product_name"));
      if (product.empty()) product = Str(a, "name");
      const std::string pid =
          fmt::format("GPU {}", Int(a, "logical_node_id", Int(a, "node_id", 0)));
      agents_[handle] = pid;
      model_.process_names[pid] = product.empty() ? pid : fmt::format("{} ({})", pid, product);
      if (model_.device_name.empty()) model_.device_name = product;
    }
  }

  void Symbols(element tool) {
    symbols_.clear();
    array list;
    if (tool["kernel_symbols"].get(list) != simdjson::SUCCESS) return;
    for (const element k : list) {
      std::string_view name = Str(k, "demangled_kernel_name");
      if (name.empty()) name = Str(k, "formatted_kernel_name");
      if (name.empty()) name = Str(k, "kernel_name");
      symbols_[Int(k, "kernel_id")] = model_.Intern(KernelSymbolName(name));
    }
  }

  // strings.buffer_records: each kind's name and its operations' names.
  void Operations(element tool) {
    kinds_.clear();
    array list;
    if (tool["strings"]["buffer_records"].get(list) != simdjson::SUCCESS) return;
    for (const element k : list) {
      Kind kind{std::string(Str(k, "kind")), {}};
      array ops;
      if (k["operations"].get(ops) == simdjson::SUCCESS) {
        for (const element op : ops) {
          std::string_view name;
          kind.operations.emplace_back(op.get_string().get(name) == simdjson::SUCCESS ? name : "");
        }
      }
      kinds_.push_back(std::move(kind));
    }
  }
  std::string_view OperationOf(element r) const {
    const int64_t kind = Int(r, "kind"), op = Int(r, "operation");
    if (kind < 0 || static_cast<size_t>(kind) >= kinds_.size()) return {};
    const auto& ops = kinds_[static_cast<size_t>(kind)].operations;
    if (op < 0 || static_cast<size_t>(op) >= ops.size()) return {};
    return ops[static_cast<size_t>(op)];  // a view of the stored name, never of a temporary
  }

  bool Span(element r, EventRow& row) {
    const int64_t start = Int(r, "start_timestamp"), end = Int(r, "end_timestamp");
    if (start < 0 || end < start || end > kMaxTimeNs) return ++skipped_, false;
    row.start_ns = start, row.duration_ns = end - start;
    return true;
  }
  int64_t Correlation(element r) {
    element c;
    if (r["correlation_id"].get(c) != simdjson::SUCCESS) return -1;
    const int64_t internal = Int(c, "internal");
    if (internal < 0) return -1;
    return static_cast<int64_t>(process_) << 40 | (internal & 0xFFFFFFFFFF);
  }
  uint32_t Gpu(int64_t agent, std::string_view lane) {
    const auto it = agents_.find(agent);
    return model_.TrackFor(it != agents_.end() ? it->second : fmt::format("agent {}", agent), lane);
  }
  uint32_t Thread(element r) {
    model_.process_names.emplace(pid_, "process " + pid_);
    return model_.TrackFor(pid_, std::to_string(Int(r, "thread_id", 0)));
  }

  void Dispatches(element records) {
    array list;
    if (records["kernel_dispatch"].get(list) != simdjson::SUCCESS) return;
    std::unordered_map<uint32_t, EventClass> cls_of;
    const uint32_t unknown = model_.Intern("(unknown kernel)");
    for (const element r : list) {
      EventRow row;
      if (!Span(r, row)) continue;
      element info;
      if (r["dispatch_info"].get(info) != simdjson::SUCCESS) {
        ++skipped_;
        continue;
      }
      const auto sym = symbols_.find(Int(info, "kernel_id"));
      row.name = sym != symbols_.end() ? sym->second : unknown;
      auto [it, added] = cls_of.emplace(row.name, EventClass::kKernel);
      if (added && IsCommunication(model_.String(row.name)))
        it->second = EventClass::kCommunication;
      row.cls = it->second;
      row.category = model_.Intern("kernel");
      row.track = Gpu(Handle(info, "agent_id"), fmt::format("queue {}", Handle(info, "queue_id")));
      row.correlation = Correlation(r);
      model_.Append(row);
    }
  }

  void Copies(element records) {
    array list;
    if (records["memory_copy"].get(list) != simdjson::SUCCESS) return;
    for (const element r : list) {
      EventRow row;
      if (!Span(r, row)) continue;
      const int64_t src = Handle(r, "src_agent_id"), dst = Handle(r, "dst_agent_id");
      CopyInfo copy;
      copy.direction = MemoryCopyDirection(OperationOf(r), src == dst);
      // On the GPU end's copy lane (the source's for device to host).
      const int64_t agent = copy.direction == CopyDirection::kDeviceToHost ? src : dst;
      row.name = model_.Intern(fmt::format("Memcpy {}", Name(copy.direction)));
      row.category = model_.Intern("gpu_memcpy");
      row.cls = EventClass::kMemcpy;
      row.bytes = Int(r, "bytes");
      row.copy = copy.Packed();
      row.track = Gpu(agent, "copies");
      row.correlation = Correlation(r);
      model_.Append(row);
    }
  }

  void Calls(element records, std::string_view kind) {
    array list;
    if (records[kind].get(list) != simdjson::SUCCESS) return;
    const uint32_t category = model_.Intern(kind == "hip_api" ? "cuda_runtime" : "rccl_api");
    for (const element r : list) {
      EventRow row;
      if (!Span(r, row)) continue;
      const std::string_view op = OperationOf(r);
      row.name = model_.Intern(op.empty() ? std::string_view(kind) : op);
      row.category = category;
      row.cls = EventClass::kRuntime;
      row.track = Thread(r);
      row.correlation = Correlation(r);
      model_.Append(row);
    }
  }

  void Markers(element records) {
    array list;
    if (records["marker_api"].get(list) != simdjson::SUCCESS) return;
    for (const element r : list) {
      EventRow row;
      if (!Span(r, row)) continue;
      if (row.duration_ns == 0) {
        ++model_.instant_events;  // a mark
        continue;
      }
      std::string_view text = Str(r, "message");
      if (text.empty()) text = OperationOf(r);
      row.name = model_.Intern(text);
      row.category = model_.Intern("user_annotation");
      row.cls = IsIterationMarker(text) ? EventClass::kStep : EventClass::kAnnotation;
      row.track = Thread(r);
      model_.Append(row);
    }
  }

  struct Kind {
    std::string name;
    std::vector<std::string> operations;
  };
  TraceModel& model_;
  std::string path_;
  size_t process_ = 0;
  std::string pid_;
  std::unordered_map<int64_t, std::string> agents_;  // GPU agent handle -> track pid
  std::unordered_map<int64_t, uint32_t> symbols_;    // kernel_id -> interned name
  std::vector<Kind> kinds_;
  int64_t skipped_ = 0;
};

}  // namespace

bool SniffRocprofJson(Source& source) {
  const std::string_view head = source.Peek(256);
  size_t i = head.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  const auto blank = [&] {
    while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  };
  blank();
  if (i >= head.size() || head[i] != '{') return false;
  ++i;
  blank();
  return head.substr(i).starts_with("\"rocprofiler-sdk-tool\"");
}

void ImportRocprofJson(Source& source, TraceModel& model) {
  simdjson::dom::parser parser;
  const element root = ReadJsonFile(source, parser, kMaxBytes, "rocprofv3's JSON output");
  array tools;
  if (root[kTool].get(tools) != simdjson::SUCCESS) {
    throw Error(ErrorCode::kInvalidInput, source.name() + ": no \"" + std::string(kTool) +
                                              "\" array: not rocprofv3's JSON output");
  }
  model.format = "rocprofv3-json";
  model.source = source.name();
  Reader reader(model, source.name());
  size_t index = 0;
  for (const element tool : tools) reader.Process(tool, index++);
  reader.Finish();
}

Importer RocprofJsonImporter() {
  return Importer{
      "rocprofv3-json",
      "rocprofv3's JSON output (rocprofiler-sdk-tool, *_results.json)",
      {"*_results.json"},
      SniffRocprofJson,
      [](Source& source, TraceModel& model) { ImportRocprofJson(source, model); },
  };
}

}  // namespace opscope::analyze
