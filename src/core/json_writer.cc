#include "core/json_writer.h"

#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::core {

void JsonWriter::BeforeValue() {
  if (stack_.empty()) {
    if (wrote_value_) throw Error(ErrorCode::kInternal, "JsonWriter: a second top-level value");
    wrote_value_ = true;
    return;
  }
  Level& level = stack_.back();
  if (level.object) {
    if (!level.key_pending) throw Error(ErrorCode::kInternal, "JsonWriter: a value without a key");
    level.key_pending = false;
    return;
  }
  if (!level.first) out_ += ',';
  level.first = false;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  if (stack_.empty() || !stack_.back().object || stack_.back().key_pending) {
    throw Error(ErrorCode::kInternal, "JsonWriter: a key outside an object");
  }
  Level& level = stack_.back();
  if (!level.first) out_ += ',';
  level.first = false;
  level.key_pending = true;
  AppendJsonString(out_, key);
  out_ += ':';
  return *this;
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  stack_.push_back({true});
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  if (stack_.empty() || !stack_.back().object || stack_.back().key_pending) {
    throw Error(ErrorCode::kInternal, "JsonWriter: EndObject without its object");
  }
  stack_.pop_back();
  out_ += '}';
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  stack_.push_back({false});
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  if (stack_.empty() || stack_.back().object) {
    throw Error(ErrorCode::kInternal, "JsonWriter: EndArray without its array");
  }
  stack_.pop_back();
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendJsonString(out_, value);
  return *this;
}

JsonWriter& JsonWriter::Number(double value) {
  BeforeValue();
  AppendJsonNumber(out_, value);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  BeforeValue();
  out_ += std::to_string(value);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
  return *this;
}

}  // namespace opscope::core
