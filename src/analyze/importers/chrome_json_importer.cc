#include "analyze/importers/chrome_json_importer.h"

#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <string>

#include "analyze/json_event_reader.h"
#include "analyze/roofline.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

using simdjson::ondemand::json_type;

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

void ImportChromeJson(const std::filesystem::path& path, TraceModel& model) {
  simdjson::ondemand::parser parser;
  std::string pid_scratch, tid_scratch, text;
  bool string_timestamps = false;
  std::string_view last_category;
  const auto bad = [&](uint64_t offset, const std::string& what) {
    return Error(ErrorCode::kInvalidInput,
                 path.string() + ": byte " + std::to_string(offset) + ": " + what);
  };
  const JsonDocumentInfo info = ReadJsonEvents(path, [&](std::string_view json, uint64_t offset) {
    simdjson::ondemand::document doc;
    if (auto error = parser.iterate(json.data(), json.size(), json.size() + 64).get(doc)) {
      throw bad(offset, std::string("malformed event: ") + simdjson::error_message(error));
    }
    simdjson::ondemand::object object;
    if (doc.get_object().get(object)) throw bad(offset, "an event is not an object");
    std::string_view ph, name, category, meta_name;
    std::string_view pid, tid;
    int64_t ts = 0, dur = 0, flops = -1, bytes = -1, correlation = -1, external = -1;
    std::string_view task_type, dims, types, concrete;
    bool has_ts = false, has_dur = false;
    for (auto field : object) {
      std::string_view key;
      if (field.unescaped_key().get(key)) throw bad(offset, "malformed member name");
      simdjson::ondemand::value value;
      if (field.value().get(value))
        throw bad(offset, "malformed value of \"" + std::string(key) + "\"");
      if (key == "ph") {
        if (value.get_string().get(ph)) throw bad(offset, "\"ph\" is not a string");
        text.assign(ph);
        ph = text;
      } else if (key == "name") {
        std::string_view n;
        if (value.get_string().get(n)) throw bad(offset, "\"name\" is not a string");
        name = model.String(model.Intern(n));
      } else if (key == "cat") {
        std::string_view c;
        if (value.get_string().get(c)) throw bad(offset, "\"cat\" is not a string");
        // Few categories, repeated: compare with the previous one before hashing.
        if (c != last_category) last_category = model.String(model.Intern(c));
        category = last_category;
      } else if (key == "pid") {
        pid = IdText(value, pid_scratch);
      } else if (key == "tid") {
        tid = IdText(value, tid_scratch);
      } else if (key == "ts") {
        json_type type;
        string_timestamps |= !value.type().get(type) && type == json_type::string;
        if (!TimeNs(value, ts)) throw bad(offset, "\"ts\" is not a time in microseconds");
        has_ts = true;
      } else if (key == "dur") {
        if (!TimeNs(value, dur)) throw bad(offset, "\"dur\" is not a duration in microseconds");
        has_dur = true;
      } else if (key == "args") {
        simdjson::ondemand::object args;
        if (value.get_object().get(args)) continue;
        for (auto arg : args) {
          std::string_view arg_key;
          if (arg.unescaped_key().get(arg_key)) break;
          if (arg_key == "name") {
            std::string_view n;
            if (!arg.value().get_string().get(n)) meta_name = model.String(model.Intern(n));
          } else if (arg_key == "flops" || arg_key == "bytes" || arg_key == "correlation") {
            int64_t v = -1;
            if (!arg.value().get_int64().get(v)) {
              (arg_key == "flops" ? flops : arg_key == "bytes" ? bytes : correlation) = v;
            }
          } else if (arg_key == "External id") {
            int64_t v = -1;
            if (!arg.value().get_int64().get(v)) external = v;
          } else if (arg_key == "Input Dims" || arg_key == "Input type" ||
                     arg_key == "Concrete Inputs") {
            simdjson::ondemand::array array;
            std::string_view raw;
            if (!arg.value().get_array().get(array) && !array.raw_json().get(raw)) {
              (arg_key == "Input Dims"   ? dims
               : arg_key == "Input type" ? types
                                         : concrete) = model.String(model.Intern(raw));
            }
          } else if (arg_key == "Task Type") {
            std::string_view t;
            if (!arg.value().get_string().get(t)) task_type = model.String(model.Intern(t));
          }
        }
      }
    }
    if (ph.empty()) throw bad(offset, "an event without \"ph\"");
    if (ph == "X") {
      if (!has_ts || !has_dur) throw bad(offset, "a complete event without \"ts\" or \"dur\"");
      if (dur < 0) throw bad(offset, "a negative \"dur\"");
      model.start_ns.push_back(ts);
      model.duration_ns.push_back(dur);
      model.name.push_back(model.Intern(name));
      model.category.push_back(model.Intern(category));
      model.track.push_back(model.TrackFor(pid, tid));
      model.cls.push_back(EventClass::kOther);
      model.flops.push_back(flops);
      model.bytes.push_back(bytes);
      model.correlation.push_back(correlation);
      // Mostly absent: id 0 without a lookup.
      const auto id = [&](std::string_view text) { return text.empty() ? 0u : model.Intern(text); };
      model.kind.push_back(id(task_type));
      model.external_id.push_back(external);
      model.input_dims.push_back(id(dims));
      model.input_type.push_back(id(types));
      model.concrete_inputs.push_back(id(concrete));
    } else if (ph == "M") {
      if (name == "process_name") {
        model.process_names[std::string(pid)] = std::string(meta_name);
      } else if (name == "thread_name") {
        model.tracks[model.TrackFor(pid, tid)].thread = std::string(meta_name);
      }
    } else if (ph == "i" || ph == "I") {
      ++model.instant_events;
    } else if (ph == "C") {
      ++model.counter_events;
    } else if (ph == "s" || ph == "f" || ph == "t") {
      ++model.flow_events;
    }
  });
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
