#include "monitor/reading_format.h"

#include <fmt/format.h>

#include "core/json_writer.h"
#include "core/text.h"
#include "opscope/opscope.h"
#include "opscope/version.h"

namespace opscope::monitor {

std::string DeviceOf(const Metric& m) { return m.labels.empty() ? "" : m.labels[0].second; }

std::string ReadingJsonLine(const Reading& r, double time_s) {
  std::string line;
  core::JsonWriter json(line);
  json.BeginObject()
      .Member("schema_version", OPSCOPE_SCHEMA_VERSION)
      .Member("opscope_version", OPSCOPE_VERSION_STRING)
      .Member("index", r.index)
      .Member("time_s", time_s)
      .Member("unix_ns", r.unix_ns)
      .Member("sample_cost_us", r.cost_us)
      .Key("metrics")
      .BeginArray();
  for (const auto& m : r.metrics) {
    json.BeginObject().Member("device", DeviceOf(m)).Member("metric", m.Key());
    for (const auto& [k, v] : m.labels) {
      if (k == "pid") json.Member("pid", v);  // whose it is: a label, not part of the name
    }
    json.Member("value", m.value).Member("unit", m.unit);
    if (!m.value) json.Member("unavailable", m.unavailable);
    json.EndObject();
  }
  json.EndArray().EndObject();
  return line;
}

std::string ReadingHeader(const Reading& first, bool csv) {
  std::vector<std::string> header{"time_s", "sample_cost_us"};
  for (const auto& m : first.metrics) header.push_back(DeviceOf(m) + ":" + m.Key());
  std::string head;
  for (size_t i = 0; i < header.size(); ++i) {
    head += (i ? (csv ? "," : "  ") : "") + (csv ? core::EscapeCsvField(header[i]) : header[i]);
  }
  return head;
}

std::string ReadingLine(const Reading& r, double time_s, bool csv) {
  std::string line = fmt::format("{:.3f}{}{:.1f}", time_s, csv ? "," : "  ", r.cost_us);
  for (const auto& m : r.metrics) {
    line += csv ? "," : "  ";
    line += m.value ? fmt::format("{:.1f}", *m.value) : (csv ? "" : "n/a");
  }
  return line;
}

}  // namespace opscope::monitor
