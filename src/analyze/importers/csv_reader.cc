#include "analyze/importers/csv_reader.h"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "opscope/opscope.h"

namespace opscope::analyze {

std::string_view TrimField(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

namespace {

// The first of the four bytes in [p, end), or end. Sixteen bytes at a time
// where SSE2 is there (every x86-64), a byte at a time elsewhere.
const char* FindAny(const char* p, const char* end, char a, char b, char c, char d) {
#if defined(__SSE2__)
  const __m128i va = _mm_set1_epi8(a), vb = _mm_set1_epi8(b), vc = _mm_set1_epi8(c),
                vd = _mm_set1_epi8(d);
  for (; end - p >= 16; p += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, va), _mm_cmpeq_epi8(x, vb)),
                                     _mm_or_si128(_mm_cmpeq_epi8(x, vc), _mm_cmpeq_epi8(x, vd)));
    if (const int mask = _mm_movemask_epi8(hit)) return p + __builtin_ctz(mask);
  }
#endif
  for (; p < end; ++p) {
    if (*p == a || *p == b || *p == c || *p == d) return p;
  }
  return end;
}

// The bytes that end a run of a field's characters (, LF " CR), found 64 at
// a time: a block's bits are computed once and every field inside the block
// is a shift and a count of trailing zeros, instead of a scan per field
// (kernel_details.csv has fifty fields of a few bytes each per record).
class SpecialFinder {
 public:
  explicit SpecialFinder(const char* end) : end_(end) {}
  // The first special byte in [p, end), or end.
  const char* Find(const char* p) {
    while (true) {
      if (block_ != nullptr && p >= block_ && p - block_ < 64) {
        const uint64_t bits = mask_ >> (p - block_);
        if (bits != 0) return p + __builtin_ctzll(bits);
        p = block_ + 64;
      }
      if (end_ - p < 64) return FindAny(p, end_, ',', '\n', '"', '\r');
      block_ = p;
      mask_ = Mask(p);
    }
  }
  // The first quote or line feed in [p, end), or end (inside quotes).
  const char* FindInQuotes(const char* p) {
    while (true) {
      p = Find(p);
      if (p == end_ || *p == '"' || *p == '\n') return p;
      ++p;
    }
  }

 private:
  static uint64_t Mask(const char* p) {
#if defined(__SSE2__)
    const __m128i comma = _mm_set1_epi8(','), lf = _mm_set1_epi8('\n'), quote = _mm_set1_epi8('"'),
                  cr = _mm_set1_epi8('\r');
    uint64_t mask = 0;
    for (int i = 0; i < 4; ++i) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
      const __m128i hit =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, comma), _mm_cmpeq_epi8(x, lf)),
                       _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, cr)));
      mask |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(hit))) << (16 * i);
    }
    return mask;
#else
    uint64_t mask = 0;
    for (int i = 0; i < 64; ++i) {
      const char c = p[i];
      if (c == ',' || c == '\n' || c == '"' || c == '\r') mask |= uint64_t{1} << i;
    }
    return mask;
#endif
  }

  const char* end_;
  const char* block_ = nullptr;  // the 64 bytes `mask_` describes
  uint64_t mask_ = 0;
};

// How many quotes and line feeds [p, end) holds. With SSE2, each 16-byte
// compare subtracts its matches (-1 each) from byte counters, summed every
// 255 blocks before they could wrap (no popcount instruction needed).
void CountQuotesAndLines(const char* p, const char* end, size_t& quotes, size_t& lines) {
  quotes = 0, lines = 0;
#if defined(__SSE2__)
  const __m128i vq = _mm_set1_epi8('"'), vn = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
  const auto sum = [&](__m128i bytes) {
    // Two sums of eight bytes, each under 2^16, in the low halves of two words.
    const __m128i s = _mm_sad_epu8(bytes, zero);
    return static_cast<size_t>(_mm_cvtsi128_si32(s)) +
           static_cast<size_t>(_mm_cvtsi128_si32(_mm_srli_si128(s, 8)));
  };
  while (end - p >= 16) {
    __m128i q = zero, n = zero;
    for (int i = 0; i < 255 && end - p >= 16; ++i, p += 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      q = _mm_sub_epi8(q, _mm_cmpeq_epi8(x, vq));
      n = _mm_sub_epi8(n, _mm_cmpeq_epi8(x, vn));
    }
    quotes += sum(q);
    lines += sum(n);
  }
#endif
  for (; p < end; ++p) {
    quotes += *p == '"';
    lines += *p == '\n';
  }
}

}  // namespace

bool CsvBatcher::Next(CsvBatch& batch) {
  batch.first_line = line_;
  // The bytes read past the last run first. The buffer keeps its length from
  // run to run: only the bytes read are written.
  size_t size = carry_.size();
  size_t target = std::max(batch_bytes_, size + 1);
  if (batch.buffer.size() < target) batch.buffer.resize(target);
  std::copy(carry_.begin(), carry_.end(), batch.buffer.begin());
  while (true) {
    if (batch.buffer.size() < target) batch.buffer.resize(target);
    while (size < target && !eof_) {
      const size_t n = source_.Read(batch.buffer.data() + size, target - size);
      if (n == 0) eof_ = true;
      size += n;
    }
    if (eof_) {  // the rest is the last run
      carry_.clear();
      batch.size = size;
      return size > 0;
    }
    // The last line end outside quotes: the quotes' parity gives the state at
    // the end; walking back, each quote flips it.
    const char* const data = batch.buffer.data();
    size_t quotes = 0, lines = 0;
    CountQuotesAndLines(data, data + size, quotes, lines);
    bool quoted = quotes % 2 == 1;
    size_t cut = size, lines_after = 0;
    for (; cut > 0; --cut) {
      const char c = data[cut - 1];
      if (c == '\n') {
        if (!quoted) break;
        ++lines_after;
      } else if (c == '"') {
        quoted = !quoted;
      }
    }
    if (cut > 0) {
      carry_.assign(data + cut, data + size);
      batch.size = cut;
      line_ += static_cast<int>(lines - lines_after);
      return true;
    }
    if (size > CsvReader::kMaxRecordBytes) {  // one record fills it all
      throw Error(ErrorCode::kInvalidInput,
                  source_.name() + ": line " + std::to_string(line_) +
                      ": a record is longer than " +
                      std::to_string(CsvReader::kMaxRecordBytes >> 20) +
                      " MiB (the file is corrupt, or not the CSV it seems)");
    }
    target = size * 2;
  }
}

bool CsvReader::PeekChar(char& c) {
  if (at_ == end_) {
    if (eof_) return false;
    consumed_ += end_;
    end_ = source_->Read(buffer_.data(), buffer_.size());
    at_ = 0;
    if (end_ == 0) {
      eof_ = true;
      return false;
    }
  }
  c = data()[at_];
  return true;
}

// Scans runs of ordinary characters in the buffer at once and appends them
// whole; the strings of `fields` keep their capacity from record to record, so
// a file of like records allocates almost nothing after its first.
namespace {

// A CSV record is text: a NUL byte in a field is a corrupt or binary file,
// not a value (it would end the field wherever C strings read it).
template <typename Field>
void RefuseNul(const std::vector<Field>& fields, const std::string& name, int line) {
  for (size_t f = 0; f < fields.size(); ++f) {
    const std::string_view text(fields[f]);
    if (const size_t at = text.find('\0'); at != std::string_view::npos) {
      throw Error(ErrorCode::kInvalidInput, name + ": line " + std::to_string(line) + ": field " +
                                                std::to_string(f + 1) +
                                                " holds a NUL byte (a CSV record is text)");
    }
  }
}

}  // namespace

bool CsvReader::Next(std::vector<std::string>& fields) {
  record_line_ = line_;
  size_t n = 0;  // fields of this record so far, the current one excluded
  const auto next_field = [&]() -> std::string& {
    if (n == fields.size()) fields.emplace_back();
    std::string& f = fields[n];
    f.clear();
    return f;
  };
  const auto fail = [&](const std::string& what) {
    return Error(ErrorCode::kInvalidInput,
                 name_ + ": line " + std::to_string(record_line_) + ": " + what);
  };
  std::string* field = &next_field();
  bool quoted = false, any = false;
  size_t record_bytes = 0;
  const auto consumed = [&](size_t k) {
    record_bytes += k;
    if (record_bytes > kMaxRecordBytes) {
      throw fail("a record is longer than " + std::to_string(kMaxRecordBytes >> 20) +
                 " MiB (the file is corrupt, or not the CSV it seems)");
    }
  };
  char c;
  while (PeekChar(c)) {
    any = true;
    const char* begin = data() + at_;
    const char* end = data() + end_;
    const char* q = begin;
    if (quoted) {
      while (q < end && *q != '"' && *q != '\n') ++q;
    } else {
      while (q < end && *q != ',' && *q != '\n' && *q != '"' && *q != '\r') ++q;
    }
    consumed(static_cast<size_t>(q - begin));
    field->append(begin, q);
    at_ += static_cast<size_t>(q - begin);
    if (q == end) continue;  // the buffer ended inside a run: read on
    c = *q;
    ++at_;
    consumed(1);
    if (quoted) {
      if (c == '\n') {
        ++line_;
        field->push_back('\n');
      } else {  // a quote: doubled, it is one; alone, it closes the field
        char after;
        if (PeekChar(after) && after == '"') {
          ++at_;
          consumed(1);
          field->push_back('"');
        } else {
          quoted = false;
        }
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      if (n + 2 > kMaxRecordFields) {  // this field and at least one more
        throw fail("a record has more than " + std::to_string(kMaxRecordFields) + " fields");
      }
      ++n;
      field = &next_field();
    } else if (c == '\n') {
      ++line_;
      fields.resize(n + 1);
      RefuseNul(fields, name_, record_line_);
      return true;
    }  // '\r' outside quotes is dropped
  }
  if (quoted) throw fail("a quoted field is not closed before the end of the file");
  fields.resize(any ? n + 1 : 0);
  RefuseNul(fields, name_, record_line_);
  return any;
}

bool CsvReader::Refill() {
  if (eof_) return false;
  if (at_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + at_, end_ - at_);
    consumed_ += at_;
    end_ -= at_;
    at_ = 0;
  }
  if (end_ == buffer_.size()) {  // one record fills the buffer: grow it, up to the cap
    if (buffer_.size() > kMaxRecordBytes) {
      record_line_ = line_;
      throw Error(ErrorCode::kInvalidInput,
                  name_ + ": line " + std::to_string(line_) + ": a record is longer than " +
                      std::to_string(kMaxRecordBytes >> 20) +
                      " MiB (the file is corrupt, or not the CSV it seems)");
    }
    buffer_.resize(buffer_.size() * 2);
  }
  const size_t n = source_->Read(buffer_.data() + end_, buffer_.size() - end_);
  if (n == 0) eof_ = true;
  end_ += n;
  return n > 0;
}

int CsvReader::ParseViews(std::vector<std::string_view>& fields) {
  const char* const begin = data() + at_;
  const char* const end = data() + end_;
  if (begin == end) return eof_ ? -1 : 0;
  fields.clear();
  size_t scratch = 0;  // scratch strings used by this record
  int newlines = 0;
  const char* p = begin;
  SpecialFinder finder(end);
  while (true) {  // one field
    // A field is made of segments: unquoted runs and quoted pieces. One
    // segment is a view of the buffer; more are joined in a scratch string.
    const char* seg_begin = nullptr;
    const char* seg_end = nullptr;
    std::string* built = nullptr;
    const auto add = [&](const char* a, const char* b) {
      if (a == b) return;
      if (seg_begin == nullptr && built == nullptr) {
        seg_begin = a, seg_end = b;
        return;
      }
      if (built == nullptr) {
        if (scratch == scratch_.size()) scratch_.emplace_back();
        built = &scratch_[scratch++];
        built->assign(seg_begin, seg_end);
      }
      built->append(a, b);
    };
    bool quoted = false, record_end = false;
    while (true) {
      if (quoted) {
        const char* q = finder.FindInQuotes(p);
        if (q == end) {
          if (!eof_) return 0;
          record_line_ = line_;
          throw Error(ErrorCode::kInvalidInput,
                      name_ + ": line " + std::to_string(line_) +
                          ": a quoted field is not closed before the end of the file");
        }
        add(p, q);
        if (*q == '\n') {
          ++newlines;
          add(q, q + 1);
          p = q + 1;
          continue;
        }
        if (q + 1 == end && !eof_) return 0;  // a doubled quote, or the closing one?
        if (q + 1 < end && q[1] == '"') {
          add(q, q + 1);
          p = q + 2;
        } else {
          quoted = false;
          p = q + 1;
        }
        continue;
      }
      const char* q = finder.Find(p);
      add(p, q);
      if (q == end) {
        if (!eof_) return 0;
        p = end, record_end = true;  // the last record, without a line end
        break;
      }
      p = q + 1;
      if (*q == '"') {
        quoted = true;
      } else if (*q == ',') {
        break;
      } else if (*q == '\n') {
        ++newlines, record_end = true;
        break;
      }  // '\r' outside quotes is dropped
    }
    if (fields.size() + 1 > kMaxRecordFields) {
      record_line_ = line_;
      throw Error(ErrorCode::kInvalidInput, name_ + ": line " + std::to_string(line_) +
                                                ": a record has more than " +
                                                std::to_string(kMaxRecordFields) + " fields");
    }
    fields.push_back(built != nullptr       ? std::string_view(*built)
                     : seg_begin != nullptr ? std::string_view(seg_begin, seg_end - seg_begin)
                                            : std::string_view());
    if (record_end) break;
  }
  record_line_ = line_;
  RefuseNul(fields, name_, record_line_);
  line_ += newlines;
  at_ += static_cast<size_t>(p - begin);
  return 1;
}

bool CsvReader::NextViews(std::vector<std::string_view>& fields) {
  while (true) {
    const int r = ParseViews(fields);
    if (r == 1) return true;
    if (r < 0) return false;
    if (end_ - at_ > kMaxRecordBytes) {
      record_line_ = line_;
      throw Error(ErrorCode::kInvalidInput,
                  name_ + ": line " + std::to_string(line_) + ": a record is longer than " +
                      std::to_string(kMaxRecordBytes >> 20) +
                      " MiB (the file is corrupt, or not the CSV it seems)");
    }
    if (!Refill() && at_ == end_) return false;
  }
}

size_t CsvHeader::Find(std::string_view name) const {
  const auto it = column.find(name);
  return it == column.end() ? SIZE_MAX : it->second;
}

namespace {

// The next data record by `read` (Next or NextViews), blank lines skipped.
template <typename Fields, typename Read>
bool NextDataRecord(size_t expected, CsvReader& csv, Fields& fields, const std::string& name,
                    Read&& read) {
  while (read(fields)) {
    if (fields.size() == 1 && TrimField(fields[0]).empty()) continue;  // a blank line
    if (fields.size() != expected) {
      throw Error(ErrorCode::kInvalidInput, name + ": line " + std::to_string(csv.record_line()) +
                                                ": " + std::to_string(fields.size()) +
                                                " fields where the header has " +
                                                std::to_string(expected));
    }
    return true;
  }
  return false;
}

}  // namespace

bool CsvHeader::NextRecord(CsvReader& csv, std::vector<std::string>& fields,
                           const std::string& name) const {
  return NextDataRecord(this->fields, csv, fields, name, [&](auto& f) { return csv.Next(f); });
}

bool CsvHeader::NextRecord(CsvReader& csv, std::vector<std::string_view>& fields,
                           const std::string& name) const {
  return NextDataRecord(this->fields, csv, fields, name, [&](auto& f) { return csv.NextViews(f); });
}

CsvHeader ReadCsvHeader(CsvReader& csv, const std::string& name) {
  std::vector<std::string> fields;
  if (!csv.Next(fields)) {
    throw Error(ErrorCode::kInvalidInput, name + ": line 1: the file is empty");
  }
  if (!fields.empty() && fields[0].starts_with("\xEF\xBB\xBF")) fields[0].erase(0, 3);
  CsvHeader header;
  header.fields = fields.size();
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string column(TrimField(fields[i]));
    if (!header.column.emplace(column, i).second) {
      throw Error(ErrorCode::kInvalidInput,
                  name + ": line 1: the column '" + column + "' appears twice");
    }
  }
  return header;
}

}  // namespace opscope::analyze
