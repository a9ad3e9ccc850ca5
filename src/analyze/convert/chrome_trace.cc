#include "analyze/convert/chrome_trace.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "analyze/analyze_files.h"
#include "analyze/convert/launch_flows.h"
#include "analyze/multirank.h"
#include "core/text.h"
#include "core/trace_schema.h"
#include "opscope/opscope.h"

namespace opscope::analyze {

namespace {

using core::AppendInt;
using core::AppendJsonString;
using core::AppendMicros;

// Kineto's operator arguments are kept as the JSON text they were read as;
// written back as JSON where that text is whole (a text kept by its ends,
// trace_model.h, is written as a string).
void AppendRawOrString(std::string& out, std::string_view text) {
  const bool whole =
      text.size() < TraceModel::kKeptHead && text.size() >= 2 &&
      ((text.front() == '[' && text.back() == ']') || (text.front() == '{' && text.back() == '}'));
  if (whole) {
    // Without the white space outside strings (Kineto indents each value).
    bool in_string = false, escaped = false;
    for (const char c : text) {
      if (in_string) {
        in_string = escaped || c != '"';
        escaped = !escaped && c == '\\';
      } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
        continue;
      } else {
        in_string = c == '"';
      }
      out += c;
    }
  } else {
    AppendJsonString(out, text);
  }
}

// A time in microseconds with three decimals. From 2^42 us (about 51 days:
// times since the epoch, as torch_npu and rocpd record them) a JSON number
// read as a double no longer holds the nanosecond, so the time is written as
// a string, as torch_npu writes its own; Perfetto and opscope read both.
void AppendTime(std::string& out, int64_t ns) {
  constexpr int64_t kExactNs = (int64_t{1} << 42) * 1000;
  const bool text = ns >= kExactNs || ns <= -kExactNs;
  if (text) out += '"';
  AppendMicros(out, ns);
  if (text) out += '"';
}

void AppendMetadata(std::string& out, const char* what, uint32_t pid, uint32_t tid, const char* key,
                    std::string_view text, int64_t number) {
  out += ",\n{\"ph\":\"M\",\"name\":\"";
  out += what;
  out += "\",\"pid\":";
  AppendInt(out, pid);
  out += ",\"tid\":";
  AppendInt(out, tid);
  out += ",\"args\":{\"";
  out += key;
  out += "\":";
  if (number >= 0) {
    AppendInt(out, number);
  } else {
    AppendJsonString(out, text);
  }
  out += "}}";
}

}  // namespace

void ChromeTraceWriter::Begin() {
  out_.buffer() += "{\"traceEvents\":[";
  first_ = true;
}

void ChromeTraceWriter::Flow(uint32_t from_track, int64_t from_ns, uint32_t to_track, int64_t to_ns,
                             const std::vector<uint32_t>& tids, const std::vector<uint32_t>& pids) {
  // Kineto's own spelling of a launch's flow: "s" at the launch call, bound to
  // the slice it starts in, "f" at the device task's start ("bp":"e": bound to
  // the slice that encloses it, the task itself).
  std::string& out = out_.buffer();
  for (const bool start : {true, false}) {
    const uint32_t track = start ? from_track : to_track;
    out += start ? ",\n{\"ph\":\"s\"" : ",\n{\"ph\":\"f\",\"bp\":\"e\"";
    out += ",\"cat\":\"ac2g\",\"name\":\"launch\",\"id\":";
    AppendInt(out, static_cast<int64_t>(next_flow_));
    out += ",\"pid\":";
    AppendInt(out, pids[track]);
    out += ",\"tid\":";
    AppendInt(out, tids[track]);
    out += ",\"ts\":";
    AppendTime(out, start ? from_ns : to_ns);
    out += '}';
  }
  ++next_flow_;
}

ConvertedTrace ChromeTraceWriter::Add(const TraceModel& model, const std::string& label) {
  ConvertedTrace c;
  c.format = model.format;
  c.events = model.size();
  c.tracks = model.tracks.size();
  c.notes = model.import_notes;
  std::string& out = out_.buffer();
  // A process per process of the input and a thread per track, numbered
  // afresh: two inputs' pids may be the same numbers (two hosts, two runs).
  std::vector<uint32_t> pids(model.tracks.size()), tids(model.tracks.size());
  std::unordered_map<std::string, uint32_t> pid_of;  // the input's pid -> the output's
  for (size_t t = 0; t < model.tracks.size(); ++t) {
    const Track& track = model.tracks[t];
    auto [at, fresh] = pid_of.try_emplace(track.pid, next_pid_);
    if (fresh) {
      ++next_pid_;
      std::string name = label.empty() ? "" : label + ": ";
      name += track.process;
      // The input's numeric pid kept beside the name: the output's pids are
      // numbered afresh.
      const bool number =
          !track.pid.empty() && track.pid.find_first_not_of("0123456789") == std::string::npos;
      if (number && track.process != track.pid) {
        name += " (pid " + track.pid + ")";
      }
      // The first metadata event opens the list: no comma before it.
      const size_t mark = out.size();
      AppendMetadata(out, "process_name", at->second, 0, "name", name, -1);
      if (first_) out.erase(mark, 1), first_ = false;
      AppendMetadata(out, "process_sort_index", at->second, 0, "sort_index", "", at->second);
    }
    pids[t] = at->second;
    tids[t] = next_tid_++;
    AppendMetadata(out, "thread_name", pids[t], tids[t], "name", track.thread, -1);
    AppendMetadata(out, "thread_sort_index", pids[t], tids[t], "sort_index", "", tids[t]);
  }
  const auto text = [&](const IdColumn& column, size_t e) { return model.String(column[e]); };
  for (size_t e = 0; e < model.size(); ++e) {
    out += ",\n{\"ph\":\"X\",\"pid\":";
    AppendInt(out, pids[model.track[e]]);
    out += ",\"tid\":";
    AppendInt(out, tids[model.track[e]]);
    out += ",\"ts\":";
    AppendTime(out, model.start_ns[e]);
    out += ",\"dur\":";
    AppendMicros(out, model.duration_ns[e]);
    out += ",\"name\":";
    AppendJsonString(out, text(model.name, e));
    out += ",\"cat\":";
    const std::string_view category = text(model.category, e);
    AppendJsonString(out, category.empty() ? Name(model.cls[e]) : category);
    out += ",\"args\":{\"class\":\"";
    out += Name(model.cls[e]);
    out += '"';
    const auto number = [&](std::string_view key, int64_t value) {
      if (value < 0) return;
      out += ",\"";
      out += key;
      out += "\":";
      AppendInt(out, value);
    };
    number(core::trace_schema::kCorrelation, model.correlation[e]);
    number(core::trace_schema::kExternalId, model.external_id[e]);
    number(core::trace_schema::kFlops, model.flops[e]);
    number(core::trace_schema::kBytes, model.bytes[e]);
    const auto string = [&](std::string_view key, const IdColumn& column, bool raw) {
      if (column[e] == 0) return;
      out += ",\"";
      out += key;
      out += "\":";
      if (raw) {
        AppendRawOrString(out, text(column, e));
      } else {
        AppendJsonString(out, text(column, e));
      }
    };
    string(core::trace_schema::kTaskType, model.kind, false);
    string(core::trace_schema::kInputDims, model.input_dims, true);
    string(core::trace_schema::kInputType, model.input_type, true);
    string(core::trace_schema::kConcreteInputs, model.concrete_inputs, true);
    string(core::trace_schema::kShapes, model.shapes, false);
    string(core::trace_schema::kDtype, model.dtype, false);
    string(core::trace_schema::kLayout, model.layout, false);
    string(core::trace_schema::kModule, model.module, false);
    string("op_type", model.op_type, false);
    string("compute_dtype", model.compute_dtype, false);
    if (model.cls[e] == EventClass::kMemcpy && model.copy[e] != 0) {
      const CopyInfo copy = model.Copy(e);
      out += ",\"copy\":\"";
      out += Name(copy.direction);
      out += '"';
      if (copy.host_memory != HostMemory::kUnknown) {
        out += ",\"host_memory\":\"";
        out += Name(copy.host_memory);
        out += '"';
      }
    }
    out += "}}";
    out_.MaybeFlush();
  }
  // A flow from each launch call to the device work that carries its
  // correlation id, and torch_npu's host-to-device flows.
  const uint64_t flows_before = next_flow_;
  ForEachLaunchArrow(model, [&](const LaunchArrow& a) {
    Flow(a.from_track, a.from_ns, a.to_track, a.to_ns, tids, pids);
    out_.MaybeFlush();
  });
  c.flows = next_flow_ - flows_before;
  if (!model.device_name.empty() &&
      std::find(devices_.begin(), devices_.end(), model.device_name) == devices_.end()) {
    devices_.push_back(model.device_name);
  }
  return c;
}

void ChromeTraceWriter::End(const std::vector<ConvertedTrace>& traces) {
  std::string& out = out_.buffer();
  out += "\n],\"displayTimeUnit\":\"ns\"";
  if (!devices_.empty()) {
    out += ",\"deviceProperties\":[";
    for (size_t d = 0; d < devices_.size(); ++d) {
      out += d == 0 ? "{\"id\":" : ",{\"id\":";
      AppendInt(out, static_cast<int64_t>(d));
      out += ",\"name\":";
      AppendJsonString(out, devices_[d]);
      out += '}';
    }
    out += ']';
  }
  out += ",\"otherData\":{\"converted_by\":\"opscope convert\",\"inputs\":[";
  for (size_t i = 0; i < traces.size(); ++i) {
    const ConvertedTrace& t = traces[i];
    out += i == 0 ? "\n{\"path\":" : ",\n{\"path\":";
    AppendJsonString(out, t.path);
    out += ",\"rank\":";
    AppendInt(out, t.rank);
    out += ",\"format\":";
    AppendJsonString(out, t.format);
    out += ",\"events\":";
    AppendInt(out, static_cast<int64_t>(t.events));
    out += ",\"flows\":";
    AppendInt(out, static_cast<int64_t>(t.flows));
    out += ",\"notes\":[";
    for (size_t n = 0; n < t.notes.size(); ++n) {
      if (n > 0) out += ',';
      AppendJsonString(out, t.notes[n]);
    }
    out += "]}";
  }
  out += "]}}\n";
  out_.Flush();
}

ConvertOutcome WriteChromeTrace(TraceInputs inputs, core::OutputStream& out) {
  ConvertOutcome outcome;
  outcome.unused = std::move(inputs.unused);
  ChromeTraceWriter writer(out);
  writer.Begin();
  // Of several inputs, one that cannot be read is listed with why, and the
  // others are written; where none can be, the first one's error is the
  // command's.
  std::optional<Error> first_error;
  const bool several = inputs.traces.size() > 1;
  for (const TraceInput& input : inputs.traces) {
    TraceModel model;
    try {
      ImportInput(input, outcome.unused, model);
    } catch (const Error& e) {
      if (!ListedUnreadable(e, input, several, outcome.unused, first_error)) throw;
      continue;
    }
    // The rank its folder names, else its own metadata; a trace of no known
    // rank is labelled by its path.
    const int rank = input.rank >= 0 ? input.rank : DistributedRank(model);
    std::string label;
    if (several) label = rank >= 0 ? "rank " + std::to_string(rank) : input.Shown();
    ConvertedTrace c = writer.Add(model, label);
    c.path = input.Shown();
    c.rank = rank;
    outcome.traces.push_back(std::move(c));
  }
  if (outcome.traces.empty() && first_error) throw *first_error;
  writer.End(outcome.traces);
  std::stable_sort(outcome.unused.begin(), outcome.unused.end(),
                   [](const UnusedFile& a, const UnusedFile& b) { return a.path < b.path; });
  return outcome;
}

}  // namespace opscope::analyze
