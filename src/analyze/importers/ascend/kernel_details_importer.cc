#include "analyze/importers/ascend/kernel_details_importer.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

#include "analyze/flat_map.h"
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

size_t EnrichFromKernelDetails(Source& kernel_details, TraceModel& model,
                               KernelDetailsPipeline* pipeline) {
  TraceModel rows;
  ImportKernelDetails(kernel_details, rows, pipeline);
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

namespace {

// "in->out" of a pair of columns, interned once per distinct pair: each side
// interned as it is (a hash lookup, no copy), the pair mapped to the joined
// text's id. `join` builds the joined text (AscendInOut of the two).
class InOutInterner {
 public:
  explicit InOutInterner(TraceModel& model) : model_(model) {}
  template <typename Join>
  uint32_t operator()(std::string_view in, std::string_view out, const Join& join) {
    const uint32_t a = model_.Intern(in), b = model_.Intern(out);
    uint32_t& id = pairs_[static_cast<int64_t>(uint64_t{a} << 32 | b)];
    if (id == 0) {
      const std::string text = join(in, out);
      id = (text.empty() ? 0 : model_.Intern(text)) + 1;
    }
    return id - 1;
  }

 private:
  TraceModel& model_;
  Int64Map<uint32_t> pairs_;  // (in, out) -> the joined text's id + 1
};

}  // namespace

void ImportKernelDetails(Source& source, TraceModel& model, KernelDetailsPipeline* pipeline) {
  const std::string& path = source.name();
  CsvReader csv(source);
  std::vector<std::string_view> fields;
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
               stream_col = find("Stream ID", "Stream ID"), task_col = find("Task ID", "Task ID"),
               blocks_col = find("Block Num", "Block Dim"),
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
  std::optional<AiCorePipelineBuilder> builder;
  if (pipeline != nullptr) {
    std::vector<std::string> columns;
    for (const auto& [column, at] : header.column) columns.push_back(column);
    builder.emplace(path, columns, "(us)");
    builder->BindColumns([&](std::string_view column) { return header.Find(column); });
    if (pipeline->l2_cache != nullptr) {
      try {
        builder->ReadL2(*pipeline->l2_cache);
      } catch (const Error& e) {
        pipeline->l2_error = e.what();  // the pipeline goes on without L2 rates
      }
    }
  }
  // The class of a (name, type) pair, decided once (it lower-cases both).
  Int64Map<uint8_t> class_of;  // (name, type) -> class + 1
  InOutInterner shapes_of(model), types_of(model), formats_of(model);
  const auto shapes_join = [](std::string_view in, std::string_view out) {
    return AscendInOut(AscendShapes(in), AscendShapes(out));
  };
  const auto in_out = [](std::string_view in, std::string_view out) {
    return AscendInOut(in, out);
  };
  // The track of each stream, found once per stream.
  std::vector<std::pair<std::string, uint32_t>> tracks;
  const auto track_of = [&](std::string_view stream) {
    if (stream.empty() || stream == "N/A") stream = "0";
    for (const auto& [name, id] : tracks) {
      if (name == stream) return id;
    }
    const uint32_t id = model.TrackFor("Ascend Hardware", stream);
    tracks.emplace_back(std::string(stream), id);
    return id;
  };
  bool reserved = false;
  size_t rows = 0;
  while (header.NextRecord(csv, fields, path)) {
    const int record_line = csv.record_line();
    // Reserve for the whole file once its rows' size is known (no growth copies).
    if (!reserved && ++rows == 4096) {
      reserved = true;
      const uint64_t total = source.expected_bytes();
      if (total > csv.consumed() && csv.consumed() > 0) {
        model.Reserve(model.size() + static_cast<size_t>(static_cast<double>(total) /
                                                         static_cast<double>(csv.consumed()) *
                                                         static_cast<double>(rows) * 1.02));
      }
    }
    int64_t start = 0, duration = 0;
    if (!MicrosToNs(TrimField(fields[start_col]), start)) {
      throw bad(record_line,
                "'" + start_name + "' is not a time: '" + std::string(fields[start_col]) + "'");
    }
    if (!MicrosToNs(TrimField(fields[dur_col]), duration) || duration < 0) {
      throw bad(record_line,
                "'" + dur_name + "' is not a duration: '" + std::string(fields[dur_col]) + "'");
    }
    const auto text = [&](size_t col) {
      return col == SIZE_MAX ? std::string_view() : TrimField(fields[col]);
    };
    const std::string_view name = TrimField(fields[name_col]);
    const std::string_view type = text(type_col) == "N/A" ? "" : text(type_col);
    const std::string_view core = text(core_col) == "N/A" ? "" : text(core_col);
    const uint32_t name_id = model.Intern(name), type_id = model.Intern(type);
    uint8_t& cls = class_of[static_cast<int64_t>(uint64_t{name_id} << 32 | type_id)];
    if (cls == 0) cls = static_cast<uint8_t>(AscendTaskClass(name, type)) + 1;
    model.Append(EventRow{
        .start_ns = start,
        .duration_ns = duration,
        .name = name_id,
        .category = type_id,
        .track = track_of(text(stream_col)),
        .cls = static_cast<EventClass>(cls - 1),
        .kind = model.Intern(core),
        .shapes = shapes_of(text(in_shapes_col), text(out_shapes_col), shapes_join),
        .dtype = types_of(text(in_types_col), text(out_types_col), in_out),
        .layout = formats_of(text(in_formats_col), text(out_formats_col), in_out),
    });
    if (builder) {
      PipelineTask task;
      task.name = name;
      task.name_id = name_id;
      task.type = text(type_col);
      task.core = text(core_col);
      task.stream = text(stream_col);
      task.task = text(task_col);
      task.dur_ns = duration;
      if (double blocks = 0; ParseAscendNumber(text(blocks_col), blocks) && blocks >= 0) {
        task.blocks = blocks;
      }
      try {
        builder->AddFields(task, fields,
                           [&] { return path + ": line " + std::to_string(record_line); });
      } catch (const Error& e) {
        pipeline->error = e.what();
        builder.reset();  // the tasks go on; the pipeline has no table
      }
    }
  }
  for (auto& track : model.tracks) track.process = "Ascend Hardware";
  model.format = "ascend-kernel-details";
  model.source = path;
  if (builder) pipeline->table = builder->Finish();
}

}  // namespace opscope::analyze
