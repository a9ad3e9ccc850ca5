#include "analyze/json_event_reader.h"

#include <immintrin.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

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

std::string ReadHead(const std::filesystem::path& path, size_t bytes) {
  Source source(path);
  std::string head(bytes, '\0');
  head.resize(source.Read(head.data(), bytes));
  return head;
}

JsonDocumentInfo ReadJsonEvents(
    const std::filesystem::path& path,
    const std::function<void(std::string_view json, uint64_t offset)>& on_event,
    const JsonReadOptions& options) {
  Source source(path);
  JsonDocumentInfo info;
  const size_t kChunk = std::max<size_t>(options.chunk_bytes, 1);
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
  const bool simd = options.simd && HasAvx2();
  size_t gap_start = 0;  // after the last event, in the buffer (when gap_known)
  bool gap_known = false;
  while (!eof) {
    if (used + kChunk + kPadding > buffer.size()) buffer.resize(used + kChunk + kPadding);
    const size_t got = source.Read(buffer.data() + used, kChunk);
    eof = got == 0;
    const size_t end = used + got;
    std::memset(buffer.data() + end, ' ', kPadding);
    size_t i = used;
    size_t keep_from = end;                       // first byte the next round must see again
    if (events_array && depth == events_depth) {  // new bytes begin between events
      gap_start = i;
      gap_known = true;
    }
    char* data = buffer.data();
    // The block scanner resumes only past bytes the byte scanner must see itself.
    size_t bytewise_until = i;
    for (; i < end; ++i) {
      if (i >= bytewise_until && events_array && depth >= events_depth && !escaped && simd &&
          i + 64 <= end) {
        ScanState st{depth, in_string, value_start, gap_start, gap_known};
        const size_t stop = ScanBlocks(data, i, end, events_depth, st, [&](size_t from, size_t to) {
          on_event(std::string_view(data + from, to - from), base + from);
          ++info.events;
        });
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
            if (info.bare_array) {
              events_array = true, events_depth = 1;
              gap_start = i + 1, gap_known = true;  // only events may follow
            }
            continue;
          }
          if (where == Where::kDone)
            throw fail(base + i, "content after the end of the JSON document");
          if (events_array && depth == events_depth) {
            if (c != '{') throw fail(base + i, "an event is not a JSON object");
            value_start = i;
            gap_known = false;
          } else if (where == Where::kTopObject && depth == 1) {
            if (expect_key) throw fail(base + i, "expected a member name");
            if (member_key == "traceEvents") {
              if (c != '[') throw fail(base + i, "\"traceEvents\" is not an array");
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
            throw fail(base + i, std::string("unexpected '") + c + "'");
          }
          --depth;
          if (events_array && depth == events_depth) {
            if (c != '}') throw fail(base + i, "mismatched ']'");
            on_event(std::string_view(data + value_start, i + 1 - value_start), base + value_start);
            ++info.events;
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
            throw fail(base + i, "an event is not a JSON object");
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
    gap_known = false;  // buffer positions changed; the next gap is checked bytewise
    info.bytes = base + used;
  }
  if (where == Where::kStart) throw fail(base + used, "the file is empty");
  if (where != Where::kDone || in_string) {
    throw fail(base + used, "the JSON ends early (the file is truncated)");
  }
  return info;
}

}  // namespace opscope::analyze
