#include "analyze/importers/ascend/profiler_info.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "analyze/importers/json_file.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr size_t kMaxBytes = size_t{16} << 20;
// A hostile file stays small in the report: this many settings, each value
// this many bytes at most (cut with "...").
constexpr size_t kMaxSettings = 256;
constexpr size_t kMaxValueBytes = 1024;

std::string Text(simdjson::dom::element e, int depth = 0) {
  std::string_view text;
  bool b = false;
  switch (e.type()) {
    case simdjson::dom::element_type::STRING:
      return e.get_string().get(text) == simdjson::SUCCESS ? std::string(text) : std::string();
    case simdjson::dom::element_type::BOOL:
      return e.get_bool().get(b) == simdjson::SUCCESS && b ? "true" : "false";
    case simdjson::dom::element_type::NULL_VALUE: return "none";
    case simdjson::dom::element_type::ARRAY: {
      std::string out;
      for (const simdjson::dom::element item : e.get_array()) {
        out += (out.empty() ? "" : ", ") + (depth < 2 ? Text(item, depth + 1) : "...");
        if (out.size() > kMaxValueBytes) break;
      }
      return out;
    }
    case simdjson::dom::element_type::OBJECT: {
      std::string out;
      for (const auto [key, value] : e.get_object()) {
        out += (out.empty() ? "" : ", ") + std::string(key) + "=" +
               (depth < 2 ? Text(value, depth + 1) : "...");
        if (out.size() > kMaxValueBytes) break;
      }
      return out;
    }
    default: return simdjson::to_string(e);
  }
}

void Add(Recording& out, std::string_view key, simdjson::dom::element value) {
  if (out.settings.size() >= kMaxSettings) return;
  while (key.starts_with('_')) key.remove_prefix(1);
  std::string text = Text(value);
  if (text.size() > kMaxValueBytes) text = text.substr(0, kMaxValueBytes) + "...";
  out.settings.push_back({std::string(key), std::move(text)});
}

}  // namespace

Recording ReadProfilerInfo(Source& source) {
  simdjson::dom::parser parser;
  const simdjson::dom::element root =
      ReadJsonFile(source, parser, kMaxBytes, "a profiler_info.json");
  simdjson::dom::object config;
  if (root["config"].get_object().get(config) != simdjson::SUCCESS) {
    throw Error(ErrorCode::kInvalidInput, source.name() + ": no 'config' object");
  }
  Recording out;
  out.source = source.name();
  for (const char* part : {"common_config", "experimental_config"}) {
    simdjson::dom::object settings;
    if (config[part].get_object().get(settings) != simdjson::SUCCESS) continue;
    for (const auto [key, value] : settings) Add(out, key, value);
  }
  for (const char* key : {"torch_npu_version", "cann_version"}) {
    simdjson::dom::element value;
    if (root[key].get(value) == simdjson::SUCCESS) Add(out, key, value);
  }
  return out;
}

namespace {

constexpr std::string_view kReaderName = "profiler_info";

void Tables(const ReportedTables& reported, const TableContext& c,
            std::vector<core::ResultTable>& tables) {
  const Recording* r = reported.own.Get<Recording>(kReaderName);
  if (r == nullptr) return;
  core::ResultTable table;
  table.section = "recording";
  table.title = fmt::format("How rank {} was recorded ({})", c.rank,
                            std::filesystem::path(r->source).filename().string());
  table.columns = {{"trace", "Trace", 0, false}, {"setting", "Setting"}, {"value", "Value"}};
  for (const RecordingSetting& s : r->settings) {
    table.AddRow({std::string(c.path), s.key, s.value});
  }
  table.notes.push_back(
      "The profiler's own settings for this run, as it wrote them: what it collected decides "
      "which tables and findings this report can have (no shapes: no FLOPs or layout checks; "
      "no memory profiling: no memory tables; no pipe counters: no pipe bounds).");
  tables.push_back(std::move(table));
}

}  // namespace

SideFileReader ProfilerInfoReader() {
  return {kReaderName,
          {{"profiler_info", {"profiler_info.json", "profiler_info_*.json"}}},
          "torch_npu's profiler_info_{rank}.json: what the run recorded (activities, schedule, "
          "shapes, memory, stacks, modules, profiler level, AI Core metrics, export type, "
          "versions) -> recording",
          [](RankFiles& files, TraceModel& model) {
            const auto source = Source::Open(files.Path("profiler_info"));
            model.reported.own.Set(kReaderName, ReadProfilerInfo(*source));
          },
          Tables};
}

}  // namespace opscope::analyze
