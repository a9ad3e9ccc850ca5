#include "collect/chrome_trace_writer.h"

#include "core/text.h"
#include "core/trace_schema.h"
#include "opscope/version.h"

namespace opscope::collect {

namespace trace_schema = core::trace_schema;

using core::AppendInt;
using core::AppendJsonString;
using core::AppendMicros;

void ChromeTraceWriter::Begin() {
  out_.buffer() += "{\"traceEvents\":[";
  first_ = true;
}

void ChromeTraceWriter::Open(char phase, int64_t pid, int64_t tid) {
  std::string& b = out_.buffer();
  b += first_ ? "\n{\"ph\":\"" : ",\n{\"ph\":\"";
  first_ = false;
  b += phase;
  b += "\",\"pid\":";
  AppendInt(b, pid);
  b += ",\"tid\":";
  AppendInt(b, tid);
}

void ChromeTraceWriter::Close() {
  out_.buffer() += '}';
  out_.MaybeFlush();
}

void ChromeTraceWriter::Metadata(const char* kind, int64_t pid, const int64_t* tid,
                                 std::string_view name, const int64_t* index) {
  Open('M', pid, tid != nullptr ? *tid : 0);
  std::string& b = out_.buffer();
  b += ",\"name\":\"";
  b += kind;
  b += "\",\"args\":{";
  if (index != nullptr) {
    b += "\"sort_index\":";
    AppendInt(b, *index);
  } else {
    b += "\"name\":";
    AppendJsonString(b, name);
  }
  b += '}';
  Close();
}

void ChromeTraceWriter::ProcessName(int64_t pid, std::string_view name) {
  Metadata("process_name", pid, nullptr, name, nullptr);
}

void ChromeTraceWriter::ProcessSortIndex(int64_t pid, int64_t index) {
  Metadata("process_sort_index", pid, nullptr, {}, &index);
}

void ChromeTraceWriter::ThreadName(int64_t pid, int64_t tid, std::string_view name) {
  Metadata("thread_name", pid, &tid, name, nullptr);
}

void ChromeTraceWriter::ThreadSortIndex(int64_t pid, int64_t tid, int64_t index) {
  Metadata("thread_sort_index", pid, &tid, {}, &index);
}

void ChromeTraceWriter::Complete(int64_t pid, int64_t tid, std::string_view name,
                                 std::string_view category, int64_t ts_ns, int64_t dur_ns,
                                 const EventArgs& args) {
  Open('X', pid, tid);
  std::string& b = out_.buffer();
  b += ",\"ts\":";
  AppendMicros(b, ts_ns);
  b += ",\"dur\":";
  AppendMicros(b, dur_ns);
  b += ",\"cat\":";
  AppendJsonString(b, category);
  b += ",\"name\":";
  AppendJsonString(b, name);
  if (!args.empty()) {
    b += ",\"args\":{";
    bool first = true;
    const auto key = [&](std::string_view k) {
      b += first ? "\"" : ",\"";
      first = false;
      b += k;
      b += "\":";
    };
    if (!args.shapes.empty()) {
      key(trace_schema::kShapes);
      AppendJsonString(b, args.shapes);
    }
    if (!args.dtype.empty()) {
      key(trace_schema::kDtype);
      AppendJsonString(b, args.dtype);
    }
    if (args.flops >= 0) {
      key(trace_schema::kFlops);
      AppendInt(b, args.flops);
    }
    if (args.bytes >= 0) {
      key(trace_schema::kBytes);
      AppendInt(b, args.bytes);
    }
    if (!args.layout.empty()) {
      key(trace_schema::kLayout);
      AppendJsonString(b, args.layout);
    }
    if (!args.module.empty()) {
      key(trace_schema::kModule);
      AppendJsonString(b, args.module);
    }
    if (args.external_id >= 0) {
      key(trace_schema::kExternalId);
      AppendInt(b, args.external_id);
    }
    if (!args.extra.empty()) {
      if (!first) b += ',';
      b += args.extra;
    }
    b += '}';
  }
  Close();
}

void ChromeTraceWriter::Instant(int64_t pid, int64_t tid, std::string_view name,
                                std::string_view category, int64_t ts_ns) {
  Open('i', pid, tid);
  std::string& b = out_.buffer();
  b += ",\"s\":\"t\",\"ts\":";
  AppendMicros(b, ts_ns);
  b += ",\"cat\":";
  AppendJsonString(b, category);
  b += ",\"name\":";
  AppendJsonString(b, name);
  Close();
}

void ChromeTraceWriter::Counter(int64_t pid, std::string_view name, int64_t ts_ns, double value) {
  Open('C', pid, 0);
  std::string& b = out_.buffer();
  b += ",\"ts\":";
  AppendMicros(b, ts_ns);
  b += ",\"name\":";
  AppendJsonString(b, name);
  b += ",\"args\":{\"value\":";
  core::AppendJsonNumber(b, value);
  b += '}';
  Close();
}

void ChromeTraceWriter::Flow(char phase, int64_t pid, int64_t tid, uint64_t id,
                             std::string_view category, int64_t ts_ns) {
  Open(phase, pid, tid);
  std::string& b = out_.buffer();
  b += ",\"ts\":";
  AppendMicros(b, ts_ns);
  b += ",\"id\":";
  core::AppendUint(b, id);
  b += ",\"cat\":";
  AppendJsonString(b, category);
  b += ",\"name\":";
  AppendJsonString(b, category);
  if (phase == 'f') b += ",\"bp\":\"e\"";
  Close();
}

void ChromeTraceWriter::End(const TraceMetadata& m) {
  std::string& b = out_.buffer();
  b += "\n],\n\"displayTimeUnit\":\"ns\",\n\"baseTimeNanoseconds\":";
  AppendInt(b, m.base_time_ns);
  b += ",\n\"otherData\":{\"schemaVersion\":";
  AppendInt(b, OPSCOPE_TRACE_FORMAT_VERSION);
  b += ",\"producer\":\"opscope\",\"opscope_version\":\"" OPSCOPE_VERSION_STRING "\",\"host\":";
  AppendJsonString(b, m.host);
  b += ",\"pid\":";
  AppendInt(b, m.pid);
  b += ",\"process_name\":";
  AppendJsonString(b, m.process_name);
  b += ",\"events\":";
  core::AppendUint(b, m.event_count);
  b += ",\"dropped_events\":";
  core::AppendUint(b, m.dropped_events);
  b += ",\"max_buffer_bytes\":";
  core::AppendUint(b, m.max_buffer_bytes);
  b += ",\"step\":";
  AppendInt(b, m.step);
  b += ",\"clock\":";
  AppendJsonString(b, m.clock);
  for (const auto& [key, json] : m.extra_json) {
    b += ',';
    AppendJsonString(b, key);
    b += ':';
    b += json;
  }
  b += "}\n}\n";
  out_.Flush();
}

}  // namespace opscope::collect
