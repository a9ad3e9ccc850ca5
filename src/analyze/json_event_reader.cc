#include "analyze/json_event_reader.h"

#include <zlib.h>

#include <cstring>
#include <memory>
#include <vector>

#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr size_t kChunk = size_t{8} << 20;
constexpr size_t kPadding = 64;
constexpr size_t kMaxMember = size_t{16} << 20;

// Reads a file, inflating gzip transparently (zlib's gzread passes plain files through).
class Source {
 public:
  explicit Source(const std::filesystem::path& path) : path_(path) {
    file_ = gzopen(path.c_str(), "rb");
    if (file_ == nullptr) {
      throw Error(ErrorCode::kIo, "cannot open '" + path.string() + "': " + std::strerror(errno));
    }
    gzbuffer(file_, 1 << 20);
  }
  ~Source() { gzclose(file_); }
  size_t Read(char* out, size_t n) {
    const int got = gzread(file_, out, static_cast<unsigned>(n));
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(file_, &code);
      throw Error(code == Z_ERRNO ? ErrorCode::kIo : ErrorCode::kInvalidInput,
                  "cannot read '" + path_.string() + "': " + (message ? message : "gzip error"));
    }
    return static_cast<size_t>(got);
  }

 private:
  std::filesystem::path path_;
  gzFile file_;
};

enum class Where { kStart, kTopObject, kTopArray, kDone };

}  // namespace

std::string ReadHead(const std::filesystem::path& path, size_t bytes) {
  Source source(path);
  std::string head(bytes, '\0');
  head.resize(source.Read(head.data(), bytes));
  return head;
}

JsonDocumentInfo ReadJsonEvents(
    const std::filesystem::path& path,
    const std::function<void(std::string_view json, uint64_t offset)>& on_event) {
  Source source(path);
  JsonDocumentInfo info;
  const auto fail = [&](uint64_t offset, const std::string& what) {
    return Error(ErrorCode::kInvalidInput,
                 path.string() + ": byte " + std::to_string(offset) + ": " + what);
  };
  // buffer holds [carry | new chunk | padding]; `carry` is an incomplete event.
  std::vector<char> buffer(kChunk + kPadding);
  size_t used = 0;
  uint64_t base = 0;  // file offset of buffer[0]
  Where where = Where::kStart;
  int depth = 0;  // nesting depth inside the top-level value
  bool in_string = false, escaped = false;
  size_t value_start = 0;  // start of the current event or member value
  int member_depth = -1;   // depth at which the current member value started
  std::string member_key;  // key of the current top-level member
  std::string key_text;    // collecting a top-level key
  bool collecting_key = false, expect_key = true;
  bool events_array = false;  // inside the array whose elements are events
  int events_depth = 0;       // depth of that array
  bool eof = false;
  while (!eof) {
    if (used + kChunk + kPadding > buffer.size()) buffer.resize(used + kChunk + kPadding);
    const size_t got = source.Read(buffer.data() + used, kChunk);
    eof = got == 0;
    const size_t end = used + got;
    std::memset(buffer.data() + end, ' ', kPadding);
    size_t i = used;
    size_t keep_from = end;  // first byte the next round must see again
    char* data = buffer.data();
    for (; i < end; ++i) {
      const char c = data[i];
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
          if (collecting_key) {
            collecting_key = false;
            member_key = key_text;
          }
        } else if (collecting_key) {
          key_text += c;
        }
        continue;
      }
      switch (c) {
        case ' ':
        case '\n':
        case '\r':
        case '\t': continue;
        case '"':
          in_string = true;
          if (events_array && depth == events_depth)
            throw fail(base + i, "an event is not a JSON object");
          if (where == Where::kTopObject && depth == 1 && expect_key) {
            collecting_key = true;
            key_text.clear();
          } else if (where == Where::kTopObject && depth == 1 && member_depth < 0) {
            member_depth = depth;  // a string member value
            value_start = i;
          }
          continue;
        case '{':
        case '[':
          if (where == Where::kStart) {
            where = c == '[' ? Where::kTopArray : Where::kTopObject;
            info.bare_array = c == '[';
            depth = 1;
            if (info.bare_array) events_array = true, events_depth = 1;
            continue;
          }
          if (where == Where::kDone)
            throw fail(base + i, "content after the end of the JSON document");
          if (events_array && depth == events_depth) {
            if (c != '{') throw fail(base + i, "an event is not a JSON object");
            value_start = i;
          } else if (where == Where::kTopObject && depth == 1) {
            if (expect_key) throw fail(base + i, "expected a member name");
            if (member_key == "traceEvents") {
              if (c != '[') throw fail(base + i, "\"traceEvents\" is not an array");
              events_array = true;
              events_depth = 2;
            } else {
              member_depth = depth;
              value_start = i;
            }
          }
          ++depth;
          continue;
        case '}':
        case ']':
          if (where == Where::kStart || where == Where::kDone || depth == 0) {
            throw fail(base + i, std::string("unexpected '") + c + "'");
          }
          --depth;
          if (events_array && depth == events_depth) {
            if (c != '}') throw fail(base + i, "mismatched ']'");
            on_event(std::string_view(data + value_start, i + 1 - value_start), base + value_start);
            ++info.events;
          } else if (events_array && depth == events_depth - 1) {
            events_array = false;  // the events array closed
            if (where == Where::kTopArray) where = Where::kDone;
          } else if (where == Where::kTopObject && depth == 1 && member_depth != -1) {
            // An object or array member closed (-2: one too large to keep).
            if (member_depth == 1)
              info.members[member_key].assign(data + value_start, i + 1 - value_start);
            member_depth = -1;
          } else if (where == Where::kTopObject && depth == 0) {
            if (member_depth == 1) {  // a scalar last member, ended by the '}'
              info.members[member_key].assign(data + value_start, i - value_start);
            }
            member_depth = -1;
            where = Where::kDone;
          }
          continue;
        case ':':
          if (where == Where::kTopObject && depth == 1) expect_key = false;
          continue;
        case ',':
          if (where == Where::kTopObject && depth == 1) {
            if (member_depth == 1) {  // a scalar member value ends here
              info.members[member_key].assign(data + value_start, i - value_start);
            }
            member_depth = -1;
            expect_key = true;
          }
          continue;
        default:
          if (where == Where::kStart) throw fail(base + i, "not a JSON object or array");
          if (events_array && depth == events_depth)
            throw fail(base + i, "an event is not a JSON object");
          if (where == Where::kDone)
            throw fail(base + i, "content after the end of the JSON document");
          if (where == Where::kTopObject && depth == 1 && member_depth < 0 && !expect_key) {
            member_depth = 1;  // a number, true, false or null
            value_start = i;
          }
          continue;
      }
    }
    // Keep what an unfinished event or member needs; drop the rest.
    const bool inside_event = events_array && depth > events_depth;
    const bool inside_member = where == Where::kTopObject && member_depth == 1;
    if (inside_event || inside_member) keep_from = value_start;
    if (keep_from < end) {
      if (inside_member && end - keep_from > kMaxMember) {
        keep_from = end;  // too large to keep: its text is skipped, the scan goes on
        member_depth = -2;
      } else {
        std::memmove(buffer.data(), buffer.data() + keep_from, end - keep_from);
      }
    }
    base += keep_from;
    used = end - keep_from;
    value_start = 0;
    info.bytes = base + used;
  }
  if (where == Where::kStart) throw fail(base + used, "the file is empty");
  if (where != Where::kDone || in_string) {
    throw fail(base + used, "the JSON ends early (the file is truncated)");
  }
  return info;
}

}  // namespace opscope::analyze
