// Streams the Chrome trace-event JSON format (the object form) to an OutputStream.
// Timestamps are written in microseconds with nanosecond fractions, relative to
// the trace's base time; names are escaped by core::AppendJsonString.
#ifndef OPSCOPE_COLLECT_CHROME_TRACE_WRITER_H_
#define OPSCOPE_COLLECT_CHROME_TRACE_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/output.h"

namespace opscope::collect {

struct EventArgs {
  std::string_view shapes;
  std::string_view dtype;
  int64_t flops = -1;
  int64_t bytes = -1;
  std::string_view layout;
  std::string_view module;
  int64_t external_id = -1;  // Kineto's "External id": links a scope to its device work
  std::string_view extra;    // further members, already encoded: "\"stream\":7,..."
  bool empty() const {
    return shapes.empty() && dtype.empty() && flops < 0 && bytes < 0 && layout.empty() &&
           module.empty() && external_id < 0 && extra.empty();
  }
};

struct TraceMetadata {
  int64_t base_time_ns = 0;  // wall-clock nanoseconds since the epoch at ts 0
  std::string host;
  int64_t pid = 0;
  std::string process_name;
  uint64_t event_count = 0;
  uint64_t dropped_events = 0;
  uint64_t max_buffer_bytes = 0;
  int64_t step = -1;
  std::string clock;
  // Further metadata: key and an already-encoded JSON value.
  std::vector<std::pair<std::string, std::string>> extra_json;
};

class ChromeTraceWriter {
 public:
  explicit ChromeTraceWriter(core::OutputStream& out) : out_(out) {}

  void Begin();
  void ProcessName(int64_t pid, std::string_view name);
  void ProcessSortIndex(int64_t pid, int64_t index);
  void ThreadName(int64_t pid, int64_t tid, std::string_view name);
  void ThreadSortIndex(int64_t pid, int64_t tid, int64_t index);
  void Complete(int64_t pid, int64_t tid, std::string_view name, std::string_view category,
                int64_t ts_ns, int64_t dur_ns, const EventArgs& args = {});
  void Instant(int64_t pid, int64_t tid, std::string_view name, std::string_view category,
               int64_t ts_ns);
  void Counter(int64_t pid, std::string_view name, int64_t ts_ns, double value);
  // phase 's' starts a flow, 'f' ends it (bound to the enclosing slice).
  void Flow(char phase, int64_t pid, int64_t tid, uint64_t id, std::string_view category,
            int64_t ts_ns);
  void End(const TraceMetadata& metadata);

 private:
  void Open(char phase, int64_t pid, int64_t tid);
  void Close();
  void Metadata(const char* kind, int64_t pid, const int64_t* tid, std::string_view name,
                const int64_t* index);

  core::OutputStream& out_;
  bool first_ = true;
};

}  // namespace opscope::collect

#endif  // OPSCOPE_COLLECT_CHROME_TRACE_WRITER_H_
