#include "analyze/importers/ascend/kernel_details_importer.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "analyze/importers/csv_reader.h"
#include "analyze/importers/timestamps.h"
#include "analyze/names.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

bool SniffKernelDetailsHead(std::string_view header) {
  if (header.starts_with("\xEF\xBB\xBF")) header.remove_prefix(3);  // a UTF-8 byte-order mark
  return header.find("Name") != std::string_view::npos &&
         header.find("Start Time(us)") != std::string_view::npos &&
         header.find("Duration(us)") != std::string_view::npos;
}

}  // namespace

std::string AscendShapes(std::string_view text) {
  // The CSV writers keep one pair of quotes around shapes (ascend.md 2.1).
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    text = text.substr(1, text.size() - 2);
  }
  return text == "N/A" ? std::string() : std::string(text);
}

std::string AscendInOut(std::string_view in, std::string_view out) {
  const auto known = [](std::string_view s) { return !s.empty() && s != "N/A"; };
  if (!known(in) && !known(out)) return {};
  return std::string(known(in) ? in : "?") + "->" + std::string(known(out) ? out : "?");
}

size_t EnrichFromKernelDetails(Source& kernel_details, TraceModel& model) {
  TraceModel rows;
  ImportKernelDetails(kernel_details, rows);
  // name -> (start, row), sorted by start
  std::unordered_map<std::string, std::vector<std::pair<int64_t, size_t>>> by_name;
  for (size_t r = 0; r < rows.size(); ++r) {
    by_name[std::string(rows.String(rows.name[r]))].push_back({rows.start_ns[r], r});
  }
  for (auto& [name, v] : by_name) std::sort(v.begin(), v.end());
  std::vector<uint32_t> mapped(rows.string_count(), UINT32_MAX);
  const auto copy = [&](uint32_t id) {
    if (id == 0) return uint32_t{0};
    if (mapped[id] == UINT32_MAX) mapped[id] = model.Intern(rows.String(id));
    return mapped[id];
  };
  std::unordered_map<uint32_t, const std::vector<std::pair<int64_t, size_t>>*> of_name;
  size_t matched = 0;
  for (size_t e = 0; e < model.size(); ++e) {
    if (!IsDevice(model.cls[e])) continue;
    auto [it, inserted] = of_name.try_emplace(model.name[e], nullptr);
    if (inserted) {
      const auto found = by_name.find(std::string(model.String(model.name[e])));
      it->second = found == by_name.end() ? nullptr : &found->second;
    }
    if (it->second == nullptr) continue;
    const auto& v = *it->second;
    const auto at = std::lower_bound(v.begin(), v.end(), std::pair{model.start_ns[e], size_t{0}});
    if (at == v.end() || at->first != model.start_ns[e]) continue;
    const size_t r = at->second;
    if (model.shapes[e] == 0) model.shapes[e] = copy(rows.shapes[r]);
    if (model.dtype[e] == 0) model.dtype[e] = copy(rows.dtype[r]);
    if (model.layout[e] == 0) model.layout[e] = copy(rows.layout[r]);
    if (model.kind[e] == 0) model.kind[e] = copy(rows.kind[r]);
    ++matched;
  }
  return matched;
}

Importer KernelDetailsImporter() {
  return Importer{
      "ascend-kernel-details",
      "torch_npu's kernel_details.csv, msprof's op_summary_*.csv",
      {"kernel_details*.csv", "op_summary_*.csv"},
      SniffKernelDetails,
      [](Source& source, TraceModel& model) { ImportKernelDetails(source, model); },
  };
}

bool SniffKernelDetails(Source& source) {
  // The header line: as long as it takes, up to 64 KiB.
  for (size_t n = 4096; n <= (size_t{64} << 10); n *= 4) {
    const std::string_view head = source.Peek(n);
    const size_t end = head.find('\n');
    if (end != std::string_view::npos) return SniffKernelDetailsHead(head.substr(0, end));
    if (head.size() < n) return SniffKernelDetailsHead(head);
  }
  return false;
}

void ImportKernelDetails(Source& source, TraceModel& model) {
  const std::string& path = source.name();
  CsvReader csv(source);
  std::vector<std::string> fields;
  const auto bad = [&](int at, const std::string& what) {
    return Error(ErrorCode::kInvalidInput, path + ": line " + std::to_string(at) + ": " + what);
  };
  const CsvHeader header = ReadCsvHeader(csv, path);
  // kernel_details.csv renames msprof's op_summary columns (ascend.md, 3.2):
  // either name is read, so op_summary_*.csv goes through the same code.
  const auto find = [&](const char* kernel_details, const char* op_summary) {
    const size_t at = header.Find(kernel_details);
    return at != SIZE_MAX ? at : header.Find(op_summary);
  };
  const size_t name_col = find("Name", "Op Name"),
               start_col = find("Start Time(us)", "Task Start Time(us)"),
               dur_col = find("Duration(us)", "Task Duration(us)"),
               type_col = find("Type", "OP Type"), core_col = find("Accelerator Core", "Task Type"),
               stream_col = find("Stream ID", "Stream ID"),
               in_shapes_col = find("Input Shapes", "Input Shapes"),
               out_shapes_col = find("Output Shapes", "Output Shapes"),
               in_types_col = find("Input Data Types", "Input Data Types"),
               out_types_col = find("Output Data Types", "Output Data Types"),
               in_formats_col = find("Input Formats", "Input Formats"),
               out_formats_col = find("Output Formats", "Output Formats");
  for (const auto& [col, what] : {std::pair{name_col, "'Name' (or op_summary's 'Op Name')"},
                                  {start_col, "'Start Time(us)' (or 'Task Start Time(us)')"},
                                  {dur_col, "'Duration(us)' (or 'Task Duration(us)')"}}) {
    if (col == SIZE_MAX) throw bad(1, std::string("no ") + what + " column");
  }
  // The names the file uses, for errors.
  const std::string start_name =
      header.Find("Start Time(us)") != SIZE_MAX ? "Start Time(us)" : "Task Start Time(us)";
  const std::string dur_name =
      header.Find("Duration(us)") != SIZE_MAX ? "Duration(us)" : "Task Duration(us)";
  // The class of a (name, type) pair, decided once (it lower-cases both).
  std::unordered_map<uint64_t, EventClass> class_of;
  while (header.NextRecord(csv, fields, path)) {
    const int record_line = csv.record_line();
    int64_t start = 0, duration = 0;
    if (!MicrosToNs(TrimField(fields[start_col]), start)) {
      throw bad(record_line, "'" + start_name + "' is not a time: '" + fields[start_col] + "'");
    }
    if (!MicrosToNs(TrimField(fields[dur_col]), duration) || duration < 0) {
      throw bad(record_line, "'" + dur_name + "' is not a duration: '" + fields[dur_col] + "'");
    }
    const auto text = [&](size_t col) {
      return col == SIZE_MAX ? std::string_view() : TrimField(fields[col]);
    };
    const std::string_view stream = text(stream_col);
    const std::string_view name = TrimField(fields[name_col]);
    const std::string_view type = text(type_col) == "N/A" ? "" : text(type_col);
    const std::string shapes =
        AscendInOut(AscendShapes(text(in_shapes_col)), AscendShapes(text(out_shapes_col)));
    const std::string dtype = AscendInOut(text(in_types_col), text(out_types_col));
    const std::string layout = AscendInOut(text(in_formats_col), text(out_formats_col));
    const uint32_t name_id = model.Intern(name), type_id = model.Intern(type);
    const auto [cls, fresh] =
        class_of.try_emplace((uint64_t{name_id} << 32) | type_id, EventClass::kOther);
    if (fresh) cls->second = AscendTaskClass(name, type);
    model.Append(EventRow{
        .start_ns = start,
        .duration_ns = duration,
        .name = name_id,
        .category = type_id,
        .track =
            model.TrackFor("Ascend Hardware", stream.empty() || stream == "N/A" ? "0" : stream),
        .cls = cls->second,
        .kind = model.Intern(text(core_col) == "N/A" ? "" : text(core_col)),
        .shapes = shapes.empty() ? 0 : model.Intern(shapes),
        .dtype = dtype.empty() ? 0 : model.Intern(dtype),
        .layout = layout.empty() ? 0 : model.Intern(layout),
    });
  }
  for (auto& track : model.tracks) track.process = "Ascend Hardware";
  model.format = "ascend-kernel-details";
  model.source = path;
}

}  // namespace opscope::analyze
