#include "analyze/json_event_reader.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr size_t kPadding = 64;
constexpr size_t kMaxMember = size_t{16} << 20;

std::string SizeText(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  return std::to_string(bytes) + " bytes";
}

enum class Where { kStart, kTopObject, kTopArray, kDone };

// State the block scanner shares with the byte-by-byte one.
struct ScanState {
  int depth;
  bool in_string;
  size_t value_start;
  size_t gap_start;  // where the bytes between two events begin (valid if gap_known)
  bool gap_known;
};

bool HasAvx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul");
  }();
  return has;
}

// Bit k set where byte k of the 64 bytes (lo, hi) equals c.
__attribute__((target("avx2"))) inline uint64_t Mask64(__m256i lo, __m256i hi, __m256i c) {
  const uint64_t l = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, c)));
  const uint64_t h = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, c)));
  return l | (h << 32);
}

// Inside the events array, scans 64-byte blocks with AVX2: quote and bracket
// bitmasks, the in-string mask by a carry-less prefix XOR of the quotes, and the
// brackets outside strings in order. Returns where the byte-by-byte scanner must
// take over: the end of the last whole block, a block holding a backslash, a
// bracket that would close the array or open a non-object, or a gap between
// events holding anything but whitespace and commas (so errors keep their
// wording and offset).
template <typename Emit>
__attribute__((target("avx2,pclmul"))) size_t ScanBlocks(const char* data, size_t i, size_t end,
                                                         int events_depth, ScanState& st,
                                                         Emit&& emit) {
  const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\');
  const __m256i open_brace = _mm256_set1_epi8('{'), open_bracket = _mm256_set1_epi8('[');
  const __m256i close_brace = _mm256_set1_epi8('}'), close_bracket = _mm256_set1_epi8(']');
  const auto gap_clean = [&](size_t from, size_t to) {
    for (size_t k = from; k < to; ++k) {
      const char c = data[k];
      if (c != ',' && c != ' ' && c != '\n' && c != '\r' && c != '\t') return false;
    }
    return true;
  };
  for (; i + 64 <= end; i += 64) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i + 32));
    if (Mask64(lo, hi, backslash) != 0) break;  // escapes: the byte scanner takes this block
    const uint64_t quotes = Mask64(lo, hi, quote);
    // Prefix XOR: bit k is 1 between an opening quote (inclusive) and its closing one.
    const __m128i product = _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<int64_t>(quotes)),
                                                 _mm_set1_epi8(static_cast<char>(0xFF)), 0);
    const uint64_t inside =
        static_cast<uint64_t>(_mm_cvtsi128_si64(product)) ^ (st.in_string ? ~uint64_t{0} : 0);
    const uint64_t opens = (Mask64(lo, hi, open_brace) | Mask64(lo, hi, open_bracket)) & ~inside;
    const uint64_t closes = (Mask64(lo, hi, close_brace) | Mask64(lo, hi, close_bracket)) & ~inside;
    uint64_t brackets = opens | closes;
    int depth = st.depth;
    while (brackets != 0) {
      const int k = __builtin_ctzll(brackets);
      const size_t at = i + static_cast<size_t>(k);
      // Between events, only commas and whitespace may stand before this bracket.
      if (depth == events_depth && st.gap_known && !gap_clean(st.gap_start, at)) {
        st.depth = depth;
        st.in_string = false;
        return st.gap_start;
      }
      if (opens >> k & 1) {
        if (depth == events_depth) {
          if (data[at] != '{') {
            st.depth = depth;
            st.in_string = false;
            return at;
          }
          st.value_start = at;
          st.gap_known = false;
        }
        ++depth;
      } else {
        if (depth - 1 < events_depth) {  // closes the array: not ours to handle
          st.depth = depth;
          st.in_string = false;
          return at;
        }
        --depth;
        if (depth == events_depth) {
          if (data[at] != '}') {
            st.depth = depth + 1;
            st.in_string = false;
            return at;
          }
          emit(st.value_start, at + 1);
          st.gap_start = at + 1;
          st.gap_known = true;
        }
      }
      brackets &= brackets - 1;
    }
    st.depth = depth;
    st.in_string = (inside >> 63) & 1;
  }
  // Stopping between events: the gap so far must be clean too.
  if (st.depth == events_depth && st.gap_known && !gap_clean(st.gap_start, i)) {
    st.in_string = false;  // between events, outside any string
    return st.gap_start;
  }
  return i;
}

}  // namespace

struct JsonEventStream::State {
  State(std::unique_ptr<Source> own, Source& s, const JsonReadOptions& o)
      : owned(std::move(own)),
        source(s),
        chunk(std::max<size_t>(o.chunk_bytes, 1)),
        max_event(std::max<size_t>(o.max_event_bytes, 1)),
        simd(o.simd && HasAvx2()) {
    buffer.resize(chunk + kPadding);
  }
  Error Fail(uint64_t offset, const std::string& what) const {
    return Error(ErrorCode::kInvalidInput,
                 source.name() + ": byte " + std::to_string(offset) + ": " + what);
  }
  // Reads and scans one chunk, appending the complete events to `spans`.
  void Round(std::vector<EventSpan>& spans);

  std::unique_ptr<Source> owned;  // when the stream opened the source itself
  Source& source;
  size_t chunk;
  size_t max_event;
  bool simd;
  JsonDocumentInfo info;
  // buffer holds [carry | new chunk | padding]; `carry` is an incomplete event.
  std::vector<char> buffer;
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
  size_t gap_start = 0;  // after the last event, in the buffer (when gap_known)
  bool gap_known = false;
  size_t keep_from = 0;        // first byte of the buffer the next round must see again
  std::exception_ptr pending;  // an error found after events that came first
};

void JsonEventStream::State::Round(std::vector<EventSpan>& spans) {
  if (used + chunk + kPadding > buffer.size()) buffer.resize(used + chunk + kPadding);
  const size_t got = source.Read(buffer.data() + used, chunk);
  eof = got == 0;
  const size_t end = used + got;
  std::memset(buffer.data() + end, ' ', kPadding);
  size_t i = used;
  keep_from = end;
  if (events_array && depth == events_depth) {  // new bytes begin between events
    gap_start = i;
    gap_known = true;
  }
  char* data = buffer.data();
  const auto emit = [&](size_t from, size_t to) {
    spans.push_back(EventSpan{from, to - from});
    ++info.events;
  };
  // The block scanner resumes only past bytes the byte scanner must see itself.
  size_t bytewise_until = i;
  for (; i < end; ++i) {
    if (i >= bytewise_until && events_array && depth >= events_depth && !escaped && simd &&
        i + 64 <= end) {
      ScanState st{depth, in_string, value_start, gap_start, gap_known};
      const size_t stop = ScanBlocks(data, i, end, events_depth, st, emit);
      depth = st.depth;
      in_string = st.in_string;
      value_start = st.value_start;
      gap_start = st.gap_start;
      gap_known = st.gap_known;
      if (stop >= end) break;
      // Hand the rest of that block (or the byte that stopped it) to the byte scanner.
      bytewise_until = std::max(stop + 1, i + ((stop - i) / 64 + 1) * 64);
      if (stop < i) bytewise_until = i + 64;
      i = std::max(stop, i);
      if (i >= end) break;
    }
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
          throw Fail(base + i, "an event is not a JSON object");
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
          if (info.bare_array) {
            events_array = true, events_depth = 1;
            gap_start = i + 1, gap_known = true;  // only events may follow
          }
          continue;
        }
        if (where == Where::kDone)
          throw Fail(base + i, "content after the end of the JSON document");
        if (events_array && depth == events_depth) {
          if (c != '{') throw Fail(base + i, "an event is not a JSON object");
          value_start = i;
          gap_known = false;
        } else if (where == Where::kTopObject && depth == 1) {
          if (expect_key) throw Fail(base + i, "expected a member name");
          if (member_key == "traceEvents") {
            if (c != '[') throw Fail(base + i, "\"traceEvents\" is not an array");
            events_array = true;
            events_depth = 2;
            gap_start = i + 1, gap_known = true;
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
          throw Fail(base + i, std::string("unexpected '") + c + "'");
        }
        --depth;
        if (events_array && depth == events_depth) {
          if (c != '}') throw Fail(base + i, "mismatched ']'");
          emit(value_start, i + 1);
          gap_start = i + 1;
          gap_known = true;
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
        if (events_array && depth == events_depth)
          throw Fail(base + i, "an event is not a JSON object");
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
        if (where == Where::kStart) throw Fail(base + i, "not a JSON object or array");
        if (events_array && depth == events_depth)
          throw Fail(base + i, "an event is not a JSON object");
        if (where == Where::kDone)
          throw Fail(base + i, "content after the end of the JSON document");
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
  if (inside_event && end - value_start > max_event) {
    throw Fail(base + value_start,
               "an event is longer than " + SizeText(max_event) +
                   ", the most opscope reads as one event (the file is corrupt, or not a "
                   "profiler's trace)");
  }
  if (keep_from < end && inside_member && end - keep_from > kMaxMember) {
    keep_from = end;  // too large to keep: its text is skipped, the scan goes on
    member_depth = -2;
  }
  used = end;
}

JsonEventStream::JsonEventStream(Source& source, const JsonReadOptions& options)
    : state_(std::make_unique<State>(nullptr, source, options)) {}

JsonEventStream::JsonEventStream(const std::filesystem::path& path,
                                 const JsonReadOptions& options) {
  auto source = Source::Open(path);
  Source& ref = *source;
  state_ = std::make_unique<State>(std::move(source), ref, options);
}

JsonEventStream::~JsonEventStream() = default;

const JsonDocumentInfo& JsonEventStream::info() const { return state_->info; }

uint64_t JsonEventStream::expected_bytes() const { return state_->source.expected_bytes(); }

bool JsonEventStream::Next(EventBatch& batch) {
  State& s = *state_;
  batch.spans.clear();
  if (s.pending) std::rethrow_exception(std::exchange(s.pending, nullptr));
  while (!s.eof) {
    try {
      s.Round(batch.spans);
    } catch (const Error&) {
      if (batch.spans.empty()) throw;
      // The events before the error come first; the error with the next call.
      s.pending = std::current_exception();
      s.eof = true;
      batch.base = s.base;
      std::swap(batch.buffer, s.buffer);
      return true;
    }
    // The batch takes the buffer; the carry moves to a fresh one (the batch's old buffer).
    const size_t keep = s.used - s.keep_from;
    const uint64_t base = s.base;
    std::swap(batch.buffer, s.buffer);
    if (s.buffer.size() < keep + s.chunk + kPadding) s.buffer.resize(keep + s.chunk + kPadding);
    if (keep > 0) std::memcpy(s.buffer.data(), batch.buffer.data() + s.keep_from, keep);
    s.base += s.keep_from;
    s.used = keep;
    s.value_start = 0;
    s.gap_known = false;  // buffer positions changed; the next gap is checked bytewise
    s.info.bytes = s.base + s.used;
    if (!batch.spans.empty()) {
      batch.base = base;
      return true;
    }
  }
  if (s.where == Where::kStart) throw s.Fail(s.base + s.used, "the file is empty");
  if (s.where != Where::kDone || s.in_string) {
    throw s.Fail(s.base + s.used, "the JSON ends early (the file is truncated)");
  }
  return false;
}

JsonDocumentInfo ReadJsonEvents(
    const std::filesystem::path& path,
    const std::function<void(std::string_view json, uint64_t offset)>& on_event,
    const JsonReadOptions& options) {
  JsonEventStream stream(path, options);
  EventBatch batch;
  while (stream.Next(batch)) {
    for (const EventSpan& e : batch.spans) {
      on_event(std::string_view(batch.buffer.data() + e.offset, e.length), batch.base + e.offset);
    }
  }
  return stream.info();
}

}  // namespace opscope::analyze
