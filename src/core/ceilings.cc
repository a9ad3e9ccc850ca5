#include "core/ceilings.h"

#include <simdjson.h>

#include "core/machine.h"
#include "core/output.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::core {

void SaveCeilings(const Ceilings& c, const std::filesystem::path& path) {
  std::string s = "{\"schema_version\":";
  AppendInt(s, OPSCOPE_SCHEMA_VERSION);
  s += ",\"opscope_version\":\"" OPSCOPE_VERSION_STRING "\",\"kind\":\"opscope-ceilings\"";
  s += ",\"machine\":" + MachineJson();
  s += ",\"device\":{\"id\":";
  AppendJsonString(s, c.device_id);
  s += ",\"name\":";
  AppendJsonString(s, c.device_name);
  s += "},\"flops_per_second\":{";
  bool first = true;
  for (const auto& [dtype, value] : c.flops_per_second) {
    s += first ? "" : ",";
    first = false;
    AppendJsonString(s, dtype);
    s += ':';
    AppendJsonNumber(s, value);
  }
  s += "},\"memory_bytes_per_second\":";
  AppendJsonNumber(s, c.memory_bytes_per_second);
  s += ",\"method\":{";
  first = true;
  for (const auto& [key, text] : c.method) {
    s += first ? "" : ",";
    first = false;
    AppendJsonString(s, key);
    s += ':';
    AppendJsonString(s, text);
  }
  s += '}';
  if (c.clock_ghz > 0) {
    s += ",\"clock\":{\"ghz\":";
    AppendJsonNumber(s, c.clock_ghz);
    s += ",\"source\":";
    AppendJsonString(s, c.clock_source);
    s += ",\"written_at\":";
    AppendJsonString(s, c.written_at);
    s += '}';
  }
  s += "}\n";
  AtomicFileOutput out(path, false);
  out.buffer() = std::move(s);
  out.Commit();
}

Ceilings LoadCeilings(const std::filesystem::path& path) {
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path.string()).get(text) != simdjson::SUCCESS) {
    throw Error(ErrorCode::kIo, "cannot read ceilings file '" + path.string() + "'");
  }
  const auto bad = [&](const std::string& what) {
    return Error(ErrorCode::kInvalidInput, "ceilings file '" + path.string() + "': " + what +
                                               " (write one with: opscope bench roofline --out " +
                                               path.string() + ")");
  };
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto error = parser.parse(text).get(doc)) {
    throw bad(std::string("not valid JSON: ") + simdjson::error_message(error));
  }
  std::string_view kind;
  if (doc["kind"].get(kind) || kind != "opscope-ceilings")
    throw bad("\"kind\" is not opscope-ceilings");
  Ceilings c;
  std::string_view id, name;
  if (!doc["device"]["id"].get(id)) c.device_id = std::string(id);
  if (!doc["device"]["name"].get(name)) c.device_name = std::string(name);
  simdjson::dom::object flops;
  if (doc["flops_per_second"].get(flops)) throw bad("\"flops_per_second\" missing");
  for (auto field : flops) {
    double value = 0;
    if (field.value.get(value) || !(value > 0)) {
      throw bad("flops_per_second." + std::string(field.key) + " is not a positive number");
    }
    c.flops_per_second[std::string(field.key)] = value;
  }
  if (doc["memory_bytes_per_second"].get(c.memory_bytes_per_second) ||
      !(c.memory_bytes_per_second > 0)) {
    throw bad("\"memory_bytes_per_second\" is not a positive number");
  }
  // Optional: files written before the clock was recorded have none.
  simdjson::dom::object clock;
  if (!doc["clock"].get(clock)) {
    std::string_view source, at;
    if (clock["ghz"].get(c.clock_ghz) || !(c.clock_ghz > 0)) {
      throw bad("clock.ghz is not a positive number");
    }
    if (!clock["source"].get(source)) c.clock_source = std::string(source);
    if (!clock["written_at"].get(at)) c.written_at = std::string(at);
  }
  return c;
}

}  // namespace opscope::core
