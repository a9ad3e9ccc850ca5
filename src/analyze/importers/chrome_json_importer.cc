#include "analyze/importers/chrome_json_importer.h"

#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "analyze/json_event_reader.h"
#include "analyze/roofline.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

using simdjson::ondemand::json_type;
using namespace std::string_view_literals;

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

bool TimeNs(simdjson::ondemand::value value, int64_t& ns) {
  json_type type;
  if (value.type().get(type)) return false;
  std::string_view text;
  if (type == json_type::string) {
    if (value.get_string().get(text)) return false;
  } else {
    text = Trim(value.raw_json_token());
  }
  return MicrosToNs(text, ns);
}

EventClass ClassOf(std::string_view category, std::string_view name, std::string_view process) {
  // Host-side step spans: Kineto files them as user_annotation, torch_npu as cpu_op.
  const bool step = name.rfind("ProfilerStep#", 0) == 0;
  if (step &&
      (category == "cpu_op" || category == "user_annotation" || process == "CPU functions")) {
    return EventClass::kStep;
  }
  if (!category.empty()) {
    if (category == "cpu_op") return EventClass::kHostOp;
    if (category == "user_annotation") return EventClass::kAnnotation;
    if (category == "kernel") return EventClass::kKernel;
    if (category == "gpu_memcpy") return EventClass::kMemcpy;
    if (category == "gpu_memset") return EventClass::kMemset;
    if (category == "cuda_runtime" || category == "cuda_driver" || category == "enqueue" ||
        category == "dequeue") {
      return EventClass::kRuntime;
    }
    if (category == "cuda_sync") return EventClass::kSync;
    if (category == "gpu_user_annotation") return EventClass::kDeviceAnnotation;
    if (category == "python_function") return EventClass::kPython;
    return EventClass::kOther;
  }
  if (process == "Ascend Hardware") return EventClass::kKernel;
  if (process == "CANN") return EventClass::kRuntime;
  if (process == "Overlap Analysis") return EventClass::kDerived;
  if (process == "CPU functions") return EventClass::kHostOp;
  return EventClass::kOther;
}

}  // namespace

bool MicrosToNs(std::string_view text, int64_t& ns) {
  if (text.empty()) return false;
  size_t i = 0;
  const bool negative = text[0] == '-';
  if (negative) ++i;
  int64_t whole = 0;
  const size_t digits_start = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (whole > (INT64_MAX - 9) / 10) return false;
    whole = whole * 10 + (text[i++] - '0');
  }
  if (i == digits_start) return false;
  int64_t fraction = 0;
  int fraction_digits = 0;
  bool round_up = false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (fraction_digits < 3) {
        fraction = fraction * 10 + (text[i] - '0');
        ++fraction_digits;
      } else if (fraction_digits == 3) {
        round_up = text[i] >= '5';
        ++fraction_digits;
      }
      ++i;
    }
  }
  if (i < text.size()) {
    // An exponent or other notation: fall back to a double.
    double value = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
    if (result.ec != std::errc() || result.ptr != text.data() + text.size() ||
        !std::isfinite(value) || std::abs(value) * 1000 > static_cast<double>(kMaxTimeNs)) {
      return false;
    }
    ns = static_cast<int64_t>(std::llround(value * 1000.0));
    return true;
  }
  for (int d = std::min(fraction_digits, 3); d < 3; ++d) fraction *= 10;
  // Beyond +-4e18 ns (126 years) sums and differences of two times could overflow.
  if (whole > kMaxTimeNs / 1000) return false;
  ns = whole * 1000 + fraction + (round_up ? 1 : 0);
  if (negative) ns = -ns;
  return true;
}

bool SniffChromeJson(std::string_view head) {
  size_t i = 0;
  while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  if (i >= head.size()) return false;
  if (head[i] == '{')
    return head.find("\"traceEvents\"") != std::string_view::npos ||
           head.find("\"schemaVersion\"") != std::string_view::npos;
  if (head[i] == '[') return head.find("\"ph\"") != std::string_view::npos;
  return false;
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
  std::vector<MetaEvent> meta;
  uint64_t instant = 0, counter = 0, flow = 0;
  // Its string and track ids in the merged model (UINT32_MAX: not yet mapped).
  std::vector<uint32_t> string_map, track_map;
};

void ParseEvent(const std::filesystem::path& path, std::string_view json, uint64_t offset,
                Part& part) {
  TraceModel& model = part.model;
  const auto bad = [&](uint64_t at, const std::string& what) {
    return Error(ErrorCode::kInvalidInput,
                 path.string() + ": byte " + std::to_string(at) + ": " + what);
  };
  simdjson::ondemand::document doc;
  if (auto error = part.parser.iterate(json.data(), json.size(), json.size() + 64).get(doc)) {
    throw bad(offset, std::string("malformed event: ") + simdjson::error_message(error));
  }
  simdjson::ondemand::object object;
  if (doc.get_object().get(object)) throw bad(offset, "an event is not an object");
  std::string_view ph, name, meta_name;
  std::string_view pid, tid;
  int64_t ts = 0, dur = 0, flops = -1, bytes = -1, correlation = -1, external = -1;
  uint32_t name_id = 0, category_id = 0, task_type = 0, dims = 0, types = 0, concrete = 0;
  bool has_ts = false, has_dur = false;
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) throw bad(offset, "malformed member name");
    simdjson::ondemand::value value;
    if (field.value().get(value))
      throw bad(offset, "malformed value of \"" + std::string(key) + "\"");
    if (key == "ph"sv) {
      if (value.get_string().get(ph)) throw bad(offset, "\"ph\" is not a string");
      part.text.assign(ph);
      ph = part.text;
    } else if (key == "name"sv) {
      std::string_view n;
      if (value.get_string().get(n)) throw bad(offset, "\"name\" is not a string");
      name_id = model.Intern(n);
      name = model.String(name_id);
    } else if (key == "cat"sv) {
      std::string_view c;
      if (value.get_string().get(c)) throw bad(offset, "\"cat\" is not a string");
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
    } else if (key == "ts"sv) {
      json_type type;
      part.string_timestamps |= !value.type().get(type) && type == json_type::string;
      if (!TimeNs(value, ts)) throw bad(offset, "\"ts\" is not a time in microseconds");
      has_ts = true;
    } else if (key == "dur"sv) {
      if (!TimeNs(value, dur)) throw bad(offset, "\"dur\" is not a duration in microseconds");
      has_dur = true;
    } else if (key == "args"sv) {
      simdjson::ondemand::object args;
      if (value.get_object().get(args)) continue;
      for (auto arg : args) {
        std::string_view arg_key;
        if (arg.unescaped_key().get(arg_key)) break;
        if (arg_key == "name"sv) {
          std::string_view n;
          if (!arg.value().get_string().get(n)) meta_name = model.String(model.Intern(n));
        } else if (arg_key == "flops"sv || arg_key == "bytes"sv || arg_key == "correlation"sv) {
          int64_t v = -1;
          if (!arg.value().get_int64().get(v)) {
            (arg_key == "flops"sv ? flops : arg_key == "bytes"sv ? bytes : correlation) = v;
          }
        } else if (arg_key == "External id"sv) {
          int64_t v = -1;
          if (!arg.value().get_int64().get(v)) external = v;
        } else if (arg_key == "Input Dims"sv || arg_key == "Input type"sv ||
                   arg_key == "Concrete Inputs"sv) {
          simdjson::ondemand::array array;
          std::string_view raw;
          if (!arg.value().get_array().get(array) && !array.raw_json().get(raw)) {
            (arg_key == "Input Dims"sv   ? dims
             : arg_key == "Input type"sv ? types
                                         : concrete) = model.Intern(raw);
          }
        } else if (arg_key == "Task Type"sv) {
          std::string_view t;
          if (!arg.value().get_string().get(t)) task_type = model.Intern(t);
        }
      }
    }
  }
  if (ph.empty()) throw bad(offset, "an event without \"ph\"");
  if (ph == "X"sv) {
    if (!has_ts || !has_dur) throw bad(offset, "a complete event without \"ts\" or \"dur\"");
    if (dur < 0) throw bad(offset, "a negative \"dur\"");
    model.start_ns.push_back(ts);
    model.duration_ns.push_back(dur);
    model.name.push_back(name_id);
    model.category.push_back(category_id);
    model.track.push_back(model.TrackFor(pid, tid));
    model.flops.push_back(flops);
    model.bytes.push_back(bytes);
    model.correlation.push_back(correlation);
    model.kind.push_back(task_type);
    model.external_id.push_back(external);
    model.input_dims.push_back(dims);
    model.input_type.push_back(types);
    model.concrete_inputs.push_back(concrete);
  } else if (ph == "M"sv) {
    if (name == "process_name"sv) {
      part.meta.push_back({true, std::string(pid), {}, std::string(meta_name)});
    } else if (name == "thread_name"sv) {
      part.meta.push_back({false, std::string(pid), std::string(tid), std::string(meta_name)});
    }
  } else if (ph == "i"sv || ph == "I"sv) {
    ++part.instant;
  } else if (ph == "C"sv) {
    ++part.counter;
  } else if (ph == "s"sv || ph == "f"sv || ph == "t"sv) {
    ++part.flow;
  }
}

// Appends a part's batch to the merged model, translating its ids.
void Merge(Part& part, TraceModel& model) {
  TraceModel& p = part.model;
  part.string_map.resize(p.string_count(), UINT32_MAX);
  part.track_map.resize(p.tracks.size(), UINT32_MAX);
  const auto str = [&](uint32_t id) {
    uint32_t& to = part.string_map[id];
    if (to == UINT32_MAX) to = model.Intern(p.String(id));
    return to;
  };
  const auto track = [&](uint32_t id) {
    uint32_t& to = part.track_map[id];
    if (to == UINT32_MAX) to = model.TrackFor(p.tracks[id].pid, p.tracks[id].tid);
    return to;
  };
  const size_t n = p.size();
  const auto append = [](auto& to, const auto& from) {
    to.insert(to.end(), from.begin(), from.end());
  };
  const auto append_ids = [&](std::vector<uint32_t>& to, const std::vector<uint32_t>& from) {
    to.reserve(to.size() + n);
    for (uint32_t id : from) to.push_back(str(id));
  };
  append(model.start_ns, p.start_ns);
  append(model.duration_ns, p.duration_ns);
  append_ids(model.name, p.name);
  append_ids(model.category, p.category);
  model.track.reserve(model.track.size() + n);
  for (uint32_t id : p.track) model.track.push_back(track(id));
  model.cls.resize(model.cls.size() + n, EventClass::kOther);
  append(model.flops, p.flops);
  append(model.bytes, p.bytes);
  append(model.correlation, p.correlation);
  append_ids(model.kind, p.kind);
  append(model.external_id, p.external_id);
  append_ids(model.input_dims, p.input_dims);
  append_ids(model.input_type, p.input_type);
  append_ids(model.concrete_inputs, p.concrete_inputs);
  for (auto* column :
       {&p.start_ns, &p.duration_ns, &p.flops, &p.bytes, &p.correlation, &p.external_id}) {
    column->clear();
  }
  for (auto* column : {&p.name, &p.category, &p.track, &p.kind, &p.input_dims, &p.input_type,
                       &p.concrete_inputs}) {
    column->clear();
  }
  for (const MetaEvent& m : part.meta) {
    if (m.process) {
      model.process_names[m.pid] = m.name;
    } else {
      model.tracks[model.TrackFor(m.pid, m.tid)].thread = m.name;
    }
  }
  part.meta.clear();
  model.instant_events += std::exchange(part.instant, 0);
  model.counter_events += std::exchange(part.counter, 0);
  model.flow_events += std::exchange(part.flow, 0);
}

}  // namespace

void ImportChromeJson(const std::filesystem::path& path, TraceModel& model,
                      const ImportOptions& options) {
  JsonEventStream stream(path, JsonReadOptions{options.chunk_bytes});
  // Threads take batches in file order under `read_mutex`, parse them into
  // their own part, and merge in file order under `merge_mutex`, so the model is
  // the same for any thread count. The first error in file order wins.
  const int threads = std::max(
      1, options.threads > 0 ? options.threads
                             : static_cast<int>(std::min(8u, std::thread::hardware_concurrency())));
  std::mutex read_mutex, merge_mutex;
  std::condition_variable merged_cv;
  uint64_t next_batch = 0, merged = 0;
  bool done = false, string_timestamps = false;
  std::atomic<bool> failed{false};
  std::vector<std::pair<uint64_t, std::exception_ptr>> errors;  // (batch, error)
  const auto work = [&] {
    Part part;
    EventBatch batch;
    while (!failed.load(std::memory_order_relaxed)) {
      uint64_t sequence = 0;
      {
        std::lock_guard lock(read_mutex);
        if (done) break;
        sequence = next_batch++;
        try {
          done = !stream.Next(batch);
        } catch (...) {
          std::lock_guard merge_lock(merge_mutex);
          errors.emplace_back(sequence, std::current_exception());
          failed = true;
          done = true;
          merged_cv.notify_all();
          break;
        }
      }
      // At the end the batch is empty; its number still passes through the merge.
      std::exception_ptr error;
      try {
        for (const EventSpan& e : batch.spans) {
          ParseEvent(path, std::string_view(batch.buffer.data() + e.offset, e.length),
                     batch.base + e.offset, part);
        }
      } catch (...) {
        error = std::current_exception();
      }
      std::unique_lock lock(merge_mutex);
      if (error) {
        errors.emplace_back(sequence, error);
        failed = true;
        merged_cv.notify_all();
        break;
      }
      merged_cv.wait(lock, [&] { return merged == sequence || failed.load(); });
      if (failed.load()) break;
      Merge(part, model);
      if (sequence == 0 && !batch.spans.empty() && stream.expected_bytes() > 0) {
        // Reserve the columns for the whole file from the first batch's density
        // (+10%): no reallocation copies, no doubled peak. Untouched capacity
        // costs address space, not memory.
        const uint64_t covered = batch.base + batch.spans.back().offset + batch.spans.back().length;
        const double per_byte = static_cast<double>(model.size()) / static_cast<double>(covered);
        const double expected = static_cast<double>(stream.expected_bytes());
        model.Reserve(static_cast<size_t>(std::min(per_byte, 1.0 / 16) * expected * 1.1) + 1024);
      }
      string_timestamps |= part.string_timestamps;
      ++merged;
      merged_cv.notify_all();
    }
  };
  // Anything else a thread throws (out of memory while merging) ends the import
  // too, after every thread has been joined.
  const auto guarded = [&] {
    try {
      work();
    } catch (...) {
      std::lock_guard lock(merge_mutex);
      errors.emplace_back(UINT64_MAX, std::current_exception());
      failed = true;
      merged_cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(guarded);
  guarded();
  for (auto& t : pool) t.join();
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::rethrow_exception(errors.front().second);
  }
  const JsonDocumentInfo& info = stream.info();
  for (auto& track : model.tracks) {
    const auto it = model.process_names.find(track.pid);
    if (it != model.process_names.end()) track.process = it->second;
  }
  bool ascend = false, legacy = false;
  for (size_t e = 0; e < model.size(); ++e) {
    const std::string_view process = model.tracks[model.track[e]].process;
    model.cls[e] = ClassOf(model.String(model.category[e]), model.String(model.name[e]), process);
    ascend |= process == "Ascend Hardware" || process == "CANN";
    legacy |= process == "CPU functions";
  }
  const auto other = info.members.find("otherData");
  if (other != info.members.end() &&
      other->second.find("\"producer\":\"opscope\"") != std::string::npos) {
    model.format = "opscope";
  } else if (info.members.count("schemaVersion")) {
    model.format = "kineto";
  } else if (ascend || string_timestamps) {
    model.format = "ascend-trace-view";
  } else if (legacy) {
    model.format = "pytorch-legacy";
  } else {
    model.format = "chrome-json";
  }
  const auto devices = info.members.find("deviceProperties");
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
  for (const auto& [key, value] : info.members) {
    if (key == "distributedInfo" || key == "deviceProperties" || key == "baseTimeNanoseconds" ||
        key == "otherData" || key == "schemaVersion" || key == "displayTimeUnit") {
      model.metadata[key] = value;
    }
  }
  model.source = path.string();
}

}  // namespace opscope::analyze
