// Python's pickle streams decoded as plain data, never executed: protocols 2
// to 5 and the text opcodes of 0 and 1, from the opcode table the pickle
// module documents (Lib/pickletools.py: each opcode, its argument and its
// effect on the stack and the memo). The values are None, booleans, integers
// (up to 64 bits; a longer one is opaque), floats, strings, bytes, lists,
// tuples, dicts and sets. A reference to a class or function (GLOBAL,
// STACK_GLOBAL) and what calling or building one gives (REDUCE, NEWOBJ,
// BUILD) are opaque values: nothing is imported or called.
//
// The stream is read through a Source in chunks (the file is never held
// whole); the values it builds are kept compactly (16 bytes each, strings
// once, containers as lists of value ids), a memoised value once however
// often it is referenced (BINGET), as the pickler shares it.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_TORCH_MEMORY_PICKLE_READER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_TORCH_MEMORY_PICKLE_READER_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/source.h"

namespace opscope::analyze::pickle {

enum class Kind : uint8_t {
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kBytes,
  kList,
  kTuple,
  kDict,
  kSet,
  kOpaque,  // a global, an object built by calling one, an integer past 64 bits
};

using Id = uint32_t;
constexpr Id kAbsent = UINT32_MAX;

class Document {
 public:
  Id root() const { return root_; }
  Kind kind(Id id) const { return id < values_.size() ? values_[id].kind : Kind::kNone; }
  // The integer (a boolean as 0/1), else `fallback`.
  int64_t Int(Id id, int64_t fallback = -1) const;
  // The text of a string (or bytes), else "".
  std::string_view Str(Id id) const;
  // A list's, tuple's or set's elements; a dict's keys and values, alternating.
  std::span<const Id> Items(Id id) const;
  // A dict's value under a string key, else kAbsent.
  Id Get(Id dict, std::string_view key) const;

 private:
  friend class Parser;
  struct Value {
    Kind kind = Kind::kNone;
    uint32_t index = 0;  // a string's or a container's
    int64_t i = 0;       // an integer's or a boolean's (a float keeps only its kind)
  };
  std::vector<Value> values_;
  std::vector<std::string> strings_;
  std::vector<std::vector<Id>> containers_;
  Id root_ = kAbsent;
};

// True when the source starts as a pickle of protocol 2 to 5 does (PROTO n).
bool LooksLikePickle(std::string_view first_bytes);

// Decodes the source's one pickle (up to STOP). Throws Error(kInvalidInput)
// naming the source, the byte offset and the problem for a truncated or
// malformed stream, an unsupported opcode (persistent ids, out-of-band
// buffers) or one that builds more than `max_values` values.
Document Parse(Source& source, size_t max_values = size_t{1} << 28);

}  // namespace opscope::analyze::pickle

#endif  // OPSCOPE_ANALYZE_IMPORTERS_TORCH_MEMORY_PICKLE_READER_H_
