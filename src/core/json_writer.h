// A small JSON writer: members and elements are separated and strings escaped
// by the writer, so no output is assembled by hand. Appends to a string; the
// caller decides where it goes. Misuse (a value where a key is due, an
// unbalanced End) throws Error(kInternal).
#ifndef OPSCOPE_CORE_JSON_WRITER_H_
#define OPSCOPE_CORE_JSON_WRITER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace opscope::core {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  // The next member's name, inside an object.
  JsonWriter& Key(std::string_view key);

  JsonWriter& String(std::string_view value);
  JsonWriter& Number(double value);  // non-finite numbers as null
  JsonWriter& Int(int64_t value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  JsonWriter& Number(const std::optional<double>& value) { return value ? Number(*value) : Null(); }

  // Key and value in one call.
  template <typename T>
  JsonWriter& Member(std::string_view key, const T& value) {
    Key(key);
    return Value(value);
  }

  // True when every object and array begun has ended.
  bool complete() const { return stack_.empty() && wrote_value_; }

 private:
  JsonWriter& Value(std::string_view v) { return String(v); }
  JsonWriter& Value(const std::string& v) { return String(v); }
  JsonWriter& Value(const char* v) { return String(v); }
  JsonWriter& Value(double v) { return Number(v); }
  JsonWriter& Value(const std::optional<double>& v) { return Number(v); }
  JsonWriter& Value(bool v) { return Bool(v); }
  template <typename I>
  JsonWriter& Value(I v) requires std::is_integral_v<I> {
    return Int(static_cast<int64_t>(v));
  }
  void BeforeValue();

  struct Level {
    bool object;
    bool first = true;
    bool key_pending = false;
  };
  std::string& out_;
  std::vector<Level> stack_;
  bool wrote_value_ = false;
};

}  // namespace opscope::core

#endif  // OPSCOPE_CORE_JSON_WRITER_H_
