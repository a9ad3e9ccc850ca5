// Pickle streams as plain data (pickle_reader.h).
#include "analyze/importers/torch_memory/pickle_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <memory>

#include "opscope/opscope.h"

namespace opscope::analyze::pickle {

int64_t Document::Int(Id id, int64_t fallback) const {
  const Kind k = kind(id);
  return k == Kind::kInt || k == Kind::kBool ? values_[id].i : fallback;
}

std::string_view Document::Str(Id id) const {
  const Kind k = kind(id);
  return k == Kind::kString || k == Kind::kBytes ? std::string_view(strings_[values_[id].index])
                                                 : std::string_view();
}

std::span<const Id> Document::Items(Id id) const {
  switch (kind(id)) {
    case Kind::kList:
    case Kind::kTuple:
    case Kind::kDict:
    case Kind::kSet: return containers_[values_[id].index];
    default: return {};
  }
}

Id Document::Get(Id dict, std::string_view key) const {
  if (kind(dict) != Kind::kDict) return kAbsent;
  const std::vector<Id>& items = containers_[values_[dict].index];
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    if (kind(items[i]) == Kind::kString && Str(items[i]) == key) return items[i + 1];
  }
  return kAbsent;
}

bool LooksLikePickle(std::string_view first) {
  return first.size() >= 2 && static_cast<uint8_t>(first[0]) == 0x80 &&
         static_cast<uint8_t>(first[1]) >= 2 && static_cast<uint8_t>(first[1]) <= 5;
}

// The opcodes, as pickletools names them.
enum Op : uint8_t {
  MARK = '(',
  STOP = '.',
  POP = '0',
  POP_MARK = '1',
  DUP = '2',
  FLOAT = 'F',
  INT = 'I',
  BININT = 'J',
  BININT1 = 'K',
  LONG = 'L',
  BININT2 = 'M',
  NONE = 'N',
  PERSID = 'P',
  BINPERSID = 'Q',
  REDUCE = 'R',
  STRING = 'S',
  BINSTRING = 'T',
  SHORT_BINSTRING = 'U',
  UNICODE = 'V',
  BINUNICODE = 'X',
  APPEND = 'a',
  BUILD = 'b',
  GLOBAL = 'c',
  DICT = 'd',
  EMPTY_DICT = '}',
  APPENDS = 'e',
  GET = 'g',
  BINGET = 'h',
  INST = 'i',
  LONG_BINGET = 'j',
  LIST = 'l',
  EMPTY_LIST = ']',
  OBJ = 'o',
  PUT = 'p',
  BINPUT = 'q',
  LONG_BINPUT = 'r',
  SETITEM = 's',
  TUPLE = 't',
  EMPTY_TUPLE = ')',
  SETITEMS = 'u',
  BINFLOAT = 'G',
  BINBYTES = 'B',
  SHORT_BINBYTES = 'C',
  PROTO = 0x80,
  NEWOBJ = 0x81,
  EXT1 = 0x82,
  EXT2 = 0x83,
  EXT4 = 0x84,
  TUPLE1 = 0x85,
  TUPLE2 = 0x86,
  TUPLE3 = 0x87,
  NEWTRUE = 0x88,
  NEWFALSE = 0x89,
  LONG1 = 0x8a,
  LONG4 = 0x8b,
  SHORT_BINUNICODE = 0x8c,
  BINUNICODE8 = 0x8d,
  BINBYTES8 = 0x8e,
  EMPTY_SET = 0x8f,
  ADDITEMS = 0x90,
  FROZENSET = 0x91,
  NEWOBJ_EX = 0x92,
  STACK_GLOBAL = 0x93,
  MEMOIZE = 0x94,
  FRAME = 0x95,
  BYTEARRAY8 = 0x96,
  NEXT_BUFFER = 0x97,
  READONLY_BUFFER = 0x98,
};

class Parser {
 public:
  Parser(Source& source, size_t max_values) : source_(source), max_values_(max_values) {}

  Document Run() {
    for (;;) {
      op_offset_ = offset();
      const uint8_t op = Byte();
      if (op == STOP) break;
      Step(op);
    }
    if (stack_.size() != 1 || !marks_.empty()) {
      Fail(fmt::format("STOP with {} values and {} marks on the stack (one value expected)",
                       stack_.size(), marks_.size()));
    }
    doc_.root_ = stack_.back();
    return std::move(doc_);
  }

 private:
  static constexpr size_t kChunk = size_t{1} << 20;
  static constexpr size_t kMaxLine = size_t{1} << 16;

  [[noreturn]] void Fail(const std::string& problem) const {
    throw Error(ErrorCode::kInvalidInput, fmt::format("{}: byte {}: {} (a Python pickle expected)",
                                                      source_.name(), op_offset_, problem));
  }

  uint64_t offset() const { return consumed_ + pos_; }

  bool Fill() {
    if (pos_ < len_) return true;
    consumed_ += len_;
    pos_ = 0;
    len_ = source_.Read(buf_.get(), kChunk);
    return len_ > 0;
  }
  uint8_t Byte() {
    if (!Fill()) Fail("the stream ends before STOP");
    return static_cast<uint8_t>(buf_[pos_++]);
  }
  uint64_t Little(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t{Byte()} << (8 * i);
    return v;
  }
  // n bytes appended to `out`, read as they come (a length past the data's
  // end fails at the end, without reserving it).
  void Bytes(uint64_t n, std::string& out) {
    while (n > 0) {
      if (!Fill()) Fail("the stream ends inside a string");
      const size_t take = static_cast<size_t>(std::min<uint64_t>(n, len_ - pos_));
      out.append(buf_.get() + pos_, take);
      pos_ += take, n -= take;
    }
  }
  std::string Line() {
    std::string line;
    for (;;) {
      const uint8_t c = Byte();
      if (c == '\n') break;
      if (line.size() >= kMaxLine) Fail("a text argument longer than 64 KiB");
      line.push_back(static_cast<char>(c));
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
  }
  int64_t DecimalLine() {
    std::string line = Line();
    if (!line.empty() && line.back() == 'L') line.pop_back();
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
    if (ec != std::errc() || end != line.data() + line.size()) {
      Fail(fmt::format("'{}' is not a decimal integer", line.substr(0, 40)));
    }
    return v;
  }

  Id New(Kind kind) {
    if (doc_.values_.size() >= max_values_) {
      Fail(fmt::format("more than {} values", max_values_));
    }
    doc_.values_.push_back({});
    doc_.values_.back().kind = kind;
    return static_cast<Id>(doc_.values_.size() - 1);
  }
  Id NewInt(int64_t v, Kind kind = Kind::kInt) {
    const Id id = New(kind);
    doc_.values_[id].i = v;
    return id;
  }
  Id NewString(std::string text, Kind kind = Kind::kString) {
    const Id id = New(kind);
    doc_.values_[id].index = static_cast<uint32_t>(doc_.strings_.size());
    doc_.strings_.push_back(std::move(text));
    return id;
  }
  Id NewContainer(Kind kind, std::vector<Id> items = {}) {
    const Id id = New(kind);
    doc_.values_[id].index = static_cast<uint32_t>(doc_.containers_.size());
    doc_.containers_.push_back(std::move(items));
    return id;
  }
  Id NewOpaque(std::string what = {}) { return NewString(std::move(what), Kind::kOpaque); }
  std::vector<Id>& ItemsOf(Id id, Kind want, const char* op) {
    if (doc_.kind(id) != want) Fail(fmt::format("{} on a value that is not a container", op));
    return doc_.containers_[doc_.values_[id].index];
  }

  Id Pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back()))
      Fail("a value expected on the stack");
    const Id id = stack_.back();
    stack_.pop_back();
    return id;
  }
  Id& Top() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back()))
      Fail("a value expected on the stack");
    return stack_.back();
  }
  void Push(Id id) { stack_.push_back(id); }
  // The values above the last mark, and the mark removed.
  std::vector<Id> PopMark() {
    if (marks_.empty()) Fail("no MARK to pop to");
    const size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<Id> items(stack_.begin() + static_cast<ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return items;
  }
  void Memo(uint64_t index, Id id) {
    if (index > doc_.values_.size() + 1024) Fail(fmt::format("memo index {} too large", index));
    if (index >= memo_.size()) memo_.resize(index + 1, kAbsent);
    if (memo_[index] == kAbsent) ++memo_count_;
    memo_[index] = id;
  }
  Id Memoised(uint64_t index) {
    if (index >= memo_.size() || memo_[index] == kAbsent) {
      Fail(fmt::format("memo entry {} was never stored", index));
    }
    return memo_[index];
  }
  // A call of an opaque global: the few that only rebuild plain data keep
  // it (torch.jit's typed-list builders, OrderedDict); others are opaque.
  Id Call(Id callable, Id args) {
    const std::string_view name =
        doc_.kind(callable) == Kind::kOpaque
            ? std::string_view(doc_.strings_[doc_.values_[callable].index])
            : std::string_view();
    const std::span<const Id> a = doc_.Items(args);
    if (name.starts_with("torch.jit._pickle.build_") && a.size() == 1) return a[0];
    if (name == "collections.OrderedDict" && a.empty()) return NewContainer(Kind::kDict);
    return NewOpaque();
  }
  Id Integer(const std::string& bytes) {  // little-endian two's complement
    if (bytes.empty()) return NewInt(0);
    if (bytes.size() > 8) return NewOpaque("int");
    uint64_t v = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
      v |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
    }
    if (bytes.size() < 8 && (static_cast<uint8_t>(bytes.back()) & 0x80)) {
      v |= ~uint64_t{0} << (8 * bytes.size());  // sign-extend
    }
    return NewInt(static_cast<int64_t>(v));
  }

  void Step(uint8_t op) {
    std::string text;
    switch (op) {
      case PROTO: {
        const uint8_t v = Byte();
        if (v > 5) Fail(fmt::format("protocol {} (5 is the highest known)", v));
        return;
      }
      case FRAME:
        Little(8);  // framing only groups opcodes
        return;
      case MARK: marks_.push_back(stack_.size()); return;
      case POP:
        if (!marks_.empty() && marks_.back() == stack_.size()) {
          marks_.pop_back();  // as pickle's own reader: POP of a bare mark
        } else {
          Pop();
        }
        return;
      case POP_MARK: PopMark(); return;
      case DUP: Push(Top()); return;
      case NONE: Push(New(Kind::kNone)); return;
      case NEWTRUE:
      case NEWFALSE: Push(NewInt(op == NEWTRUE ? 1 : 0, Kind::kBool)); return;
      case BININT: Push(NewInt(static_cast<int32_t>(static_cast<uint32_t>(Little(4))))); return;
      case BININT1: Push(NewInt(Byte())); return;
      case BININT2: Push(NewInt(static_cast<int64_t>(Little(2)))); return;
      case LONG1:
      case LONG4: {
        const uint64_t n = op == LONG1 ? Byte() : Little(4);
        Bytes(n, text);
        Push(Integer(text));
        return;
      }
      case INT: {
        const std::string line = Line();
        if (line == "00" || line == "01") {
          Push(NewInt(line == "01" ? 1 : 0, Kind::kBool));
          return;
        }
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
        if (ec != std::errc() || end != line.data() + line.size()) Fail("a malformed INT");
        Push(NewInt(v));
        return;
      }
      case LONG: Push(NewInt(DecimalLine())); return;
      case BINFLOAT:  // 8 big-endian bytes; no field the importer reads is a float
        for (int i = 0; i < 8; ++i) Byte();
        Push(New(Kind::kFloat));
        return;
      case FLOAT: {
        const std::string line = Line();
        double v = 0;
        const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
        if (ec != std::errc()) Fail("a malformed FLOAT");
        Push(New(Kind::kFloat));
        return;
      }
      case SHORT_BINUNICODE:
      case SHORT_BINSTRING:
      case SHORT_BINBYTES:
        Bytes(Byte(), text);
        Push(NewString(std::move(text), op == SHORT_BINBYTES ? Kind::kBytes : Kind::kString));
        return;
      case BINUNICODE:
      case BINSTRING:
      case BINBYTES:
        Bytes(Little(4), text);
        Push(NewString(std::move(text), op == BINBYTES ? Kind::kBytes : Kind::kString));
        return;
      case BINUNICODE8:
      case BINBYTES8:
      case BYTEARRAY8:
        Bytes(Little(8), text);
        Push(NewString(std::move(text), op == BINUNICODE8 ? Kind::kString : Kind::kBytes));
        return;
      case UNICODE:  // raw-unicode-escape text: kept as written
        Push(NewString(Line()));
        return;
      case STRING: {  // a quoted repr: the quotes removed, escapes kept
        std::string line = Line();
        if (line.size() >= 2 && (line.front() == '\'' || line.front() == '"') &&
            line.back() == line.front()) {
          line = line.substr(1, line.size() - 2);
        }
        Push(NewString(std::move(line)));
        return;
      }
      case EMPTY_LIST: Push(NewContainer(Kind::kList)); return;
      case EMPTY_DICT: Push(NewContainer(Kind::kDict)); return;
      case EMPTY_SET: Push(NewContainer(Kind::kSet)); return;
      case EMPTY_TUPLE: Push(NewContainer(Kind::kTuple)); return;
      case LIST: Push(NewContainer(Kind::kList, PopMark())); return;
      case TUPLE: Push(NewContainer(Kind::kTuple, PopMark())); return;
      case FROZENSET: Push(NewContainer(Kind::kSet, PopMark())); return;
      case DICT: {
        std::vector<Id> items = PopMark();
        if (items.size() % 2) Fail("DICT with an odd number of keys and values");
        Push(NewContainer(Kind::kDict, std::move(items)));
        return;
      }
      case TUPLE1:
      case TUPLE2:
      case TUPLE3: {
        std::vector<Id> items(op - TUPLE1 + 1);
        for (size_t i = items.size(); i-- > 0;) items[i] = Pop();
        Push(NewContainer(Kind::kTuple, std::move(items)));
        return;
      }
      case APPEND: {
        const Id v = Pop();
        ItemsOf(Top(), Kind::kList, "APPEND").push_back(v);
        return;
      }
      case APPENDS: {
        std::vector<Id> items = PopMark();
        std::vector<Id>& list = ItemsOf(Top(), Kind::kList, "APPENDS");
        list.insert(list.end(), items.begin(), items.end());
        return;
      }
      case ADDITEMS: {
        std::vector<Id> items = PopMark();
        std::vector<Id>& set = ItemsOf(Top(), Kind::kSet, "ADDITEMS");
        set.insert(set.end(), items.begin(), items.end());
        return;
      }
      case SETITEM: {
        const Id v = Pop(), k = Pop();
        std::vector<Id>& dict = ItemsOf(Top(), Kind::kDict, "SETITEM");
        dict.push_back(k), dict.push_back(v);
        return;
      }
      case SETITEMS: {
        std::vector<Id> items = PopMark();
        if (items.size() % 2) Fail("SETITEMS with an odd number of keys and values");
        std::vector<Id>& dict = ItemsOf(Top(), Kind::kDict, "SETITEMS");
        dict.insert(dict.end(), items.begin(), items.end());
        return;
      }
      case PUT: Memo(static_cast<uint64_t>(DecimalLine()), Top()); return;
      case BINPUT: Memo(Byte(), Top()); return;
      case LONG_BINPUT: Memo(Little(4), Top()); return;
      case MEMOIZE: Memo(memo_count_, Top()); return;
      case GET: Push(Memoised(static_cast<uint64_t>(DecimalLine()))); return;
      case BINGET: Push(Memoised(Byte())); return;
      case LONG_BINGET: Push(Memoised(Little(4))); return;
      case GLOBAL: {
        std::string module = Line();
        const std::string name = Line();
        Push(NewOpaque(module + "." + name));
        return;
      }
      case STACK_GLOBAL: {
        const Id name = Pop(), module = Pop();
        Push(NewOpaque(fmt::format("{}.{}", doc_.Str(module), doc_.Str(name))));
        return;
      }
      case REDUCE: {
        const Id args = Pop(), callable = Pop();
        Push(Call(callable, args));
        return;
      }
      case BUILD:
        Pop();  // the state; the object stays as it is
        Top();
        return;
      case NEWOBJ:
        Pop(), Pop();
        Push(NewOpaque());
        return;
      case NEWOBJ_EX:
        Pop(), Pop(), Pop();
        Push(NewOpaque());
        return;
      case INST:
        Line(), Line(), PopMark();
        Push(NewOpaque());
        return;
      case OBJ:
        PopMark();
        Push(NewOpaque());
        return;
      case EXT1:
      case EXT2:
      case EXT4:
        Little(op == EXT1 ? 1 : op == EXT2 ? 2 : 4);
        Push(NewOpaque());
        return;
      case PERSID:
      case BINPERSID: Fail("a persistent id (an object stored outside the pickle)");
      case NEXT_BUFFER:
      case READONLY_BUFFER: Fail("an out-of-band buffer (data stored outside the pickle)");
      default: Fail(fmt::format("unknown opcode 0x{:02x}", op));
    }
  }

  Source& source_;
  size_t max_values_;
  std::unique_ptr<char[]> buf_ = std::make_unique<char[]>(kChunk);
  size_t pos_ = 0, len_ = 0;
  uint64_t consumed_ = 0, op_offset_ = 0;
  Document doc_;
  std::vector<Id> stack_;
  std::vector<size_t> marks_;
  std::vector<Id> memo_;
  uint64_t memo_count_ = 0;
};

Document Parse(Source& source, size_t max_values) { return Parser(source, max_values).Run(); }

}  // namespace opscope::analyze::pickle
