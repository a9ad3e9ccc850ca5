// Streams the events of a Chrome-trace JSON document, whole files never in
// memory: the source (any container, see source.h) is read in chunks; a scanner that tracks
// strings and nesting finds each event object of the top-level array, or of the
// "traceEvents" array of a top-level object; the other top-level members are
// kept as raw JSON (each up to 16 MiB) for the importers' metadata.
//
// One event may be at most kMaxEventBytes (64 MiB) long: a longer one (a
// corrupt or hostile file, such as a gzip whose one event has a 2 GiB name) is
// an error at the event's first byte, and memory stays bounded by the cap and
// the chunk size, never by the input.
//
// Errors carry the file and the byte offset (of the uncompressed text):
// Error(kInvalidInput) for malformed or truncated JSON, Error(kIo) for I/O.
#ifndef OPSCOPE_ANALYZE_JSON_EVENT_READER_H_
#define OPSCOPE_ANALYZE_JSON_EVENT_READER_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/source.h"

namespace opscope::analyze {

struct JsonDocumentInfo {
  bool bare_array = false;  // [ {...}, ... ] rather than {"traceEvents": [...], ...}
  std::map<std::string, std::string> members;  // other top-level members, raw JSON
  uint64_t events = 0;
  uint64_t bytes = 0;  // uncompressed
};

constexpr size_t kMaxEventBytes = size_t{64} << 20;

struct JsonReadOptions {
  size_t chunk_bytes = size_t{8} << 20;     // tests use tiny chunks to cross boundaries
  bool simd = true;                         // AVX2 block scanning where the CPU has it
  size_t max_event_bytes = kMaxEventBytes;  // tests use a small cap
};

// Where an event lies in a batch's buffer.
struct EventSpan {
  size_t offset;
  size_t length;
};

// The complete events of one chunk. Each event is followed by at least 64
// readable bytes (simdjson padding); file offset = base + span offset.
struct EventBatch {
  std::vector<char> buffer;
  std::vector<EventSpan> spans;
  uint64_t base = 0;
};

// The same scan, a batch at a time, so that batches can be parsed on other
// threads while the next one is read.
class JsonEventStream {
 public:
  // Reads `source` from its start; the source must outlive the stream.
  explicit JsonEventStream(Source& source, const JsonReadOptions& options = {});
  JsonEventStream(const std::filesystem::path& path, const JsonReadOptions& options = {});
  ~JsonEventStream();
  JsonEventStream(const JsonEventStream&) = delete;
  JsonEventStream& operator=(const JsonEventStream&) = delete;

  // Moves the next events into `batch` (reusing its memory); false at the end
  // of the document. A malformed document throws, after the batch of the
  // events before the error has been returned.
  bool Next(EventBatch& batch);
  // Complete once Next returned false.
  const JsonDocumentInfo& info() const;
  // The document's size in bytes as known before reading it (the file's size, or
  // the size a gzip trailer records); 0 when unknown. For reserving memory only.
  uint64_t expected_bytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Calls on_event(json, offset) for each event object. `json` stays valid during
// the call only and is followed by at least 64 readable bytes (simdjson padding).
JsonDocumentInfo ReadJsonEvents(
    const std::filesystem::path& path,
    const std::function<void(std::string_view json, uint64_t offset)>& on_event,
    const JsonReadOptions& options = {});

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_JSON_EVENT_READER_H_
