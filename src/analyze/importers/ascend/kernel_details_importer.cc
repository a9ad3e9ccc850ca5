#include "analyze/importers/ascend/kernel_details_importer.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

#include "analyze/flat_map.h"
#include "analyze/importers/ascend/ascend_cost.h"
#include "analyze/importers/ascend/op_type.h"
#include "analyze/importers/ascend/side_file_readers.h"
#include "analyze/importers/csv_reader.h"
#include "analyze/importers/timestamps.h"
#include "analyze/names.h"
#include "analyze/ordered_batches.h"
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
  // The CSV writers keep one pair of quotes around shapes (docs/formats/ascend.md 2.1).
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
  CompleteAscendCosts(model);  // the tasks have their shapes now
  return matched;
}

Importer KernelDetailsImporter() {
  return Importer{
      "ascend-kernel-details",
      "torch_npu's kernel_details.csv, msprof's op_summary_*.csv",
      {"kernel_details*.csv", "op_summary_*.csv"},
      SniffKernelDetails,
      [](Source& source, TraceModel& model) { ImportKernelDetails(source, model); },
      ImportKernelDetailsRank,
      [](Source& source) {
        return MissingCsvColumns(source, {"Name", "Start Time(us)", "Duration(us)"}, 2,
                                 "torch_npu's kernel_details.csv (msprof's op_summary_*.csv)");
      },
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

// The columns of kernel_details.csv (or op_summary) that the tasks take.
struct KernelDetailsColumns {
  size_t name, start, dur, type, core, stream, task, blocks, mix_blocks, in_shapes, out_shapes,
      in_types, out_types, in_formats, out_formats, model_id;
  std::string start_name, dur_name;  // as the file names them, for errors
};

// What one thread parses: its own model (strings and tracks with its own ids,
// kept across batches) holding the current batch's tasks, and the batch's
// PMU figures for the AI Core pipeline.
struct KernelDetailsPart {
  TraceModel model;
  PartIds ids;
  // The class of a (name, type) pair, decided once (it lower-cases both).
  Int64Map<uint8_t> class_of;  // (name, type) -> class + 1
  InOutInterner shapes_of{model}, types_of{model}, formats_of{model};
  std::vector<std::pair<std::string, uint32_t>> tracks;  // stream -> its track
  // Per name: the texts of its last task (each length, then its bytes) and
  // the ids they gave.
  struct Ids {
    bool known = false;
    std::string key;
    uint32_t type = 0, kind = 0, shapes = 0, dtype = 0, layout = 0;
    EventClass cls = EventClass::kOther;
  };
  std::vector<Ids> last;
  Int64Map<uint32_t> last_of;  // name id -> index in `last` + 1
  std::string key;
  // Per task of the batch, for the pipeline: the raw stream and task id
  // (interned here, only where L2 rates are matched by them), blocks, and
  // Slots() figures.
  struct Task {
    uint32_t stream = 0, task = 0;
    double blocks = -1, mix_blocks = -1;
    bool in_graph = false;  // PipelineTask::in_graph
  };
  std::vector<Task> tasks;
  std::vector<double> values;
  size_t pipeline_error_at = SIZE_MAX;  // the batch's first task whose figures are bad
  std::string pipeline_error;
  CsvBatch batch;
  size_t skip = 0;  // bytes at the batch's front already read (the header)
  std::vector<std::string_view> fields;
};

void ParseKernelDetailsBatch(const std::string& path, const CsvHeader& header,
                             const KernelDetailsColumns& c, const AiCorePipelineBuilder* builder,
                             bool task_keys, KernelDetailsPart& part) {
  TraceModel& model = part.model;
  part.tasks.clear();
  part.values.clear();
  part.pipeline_error_at = SIZE_MAX;
  const std::string_view bytes = part.batch.bytes().substr(std::min(part.skip, part.batch.size));
  int first_line = part.batch.first_line;
  if (part.skip > 0) {
    first_line += static_cast<int>(
        std::count(part.batch.buffer.begin(),
                   part.batch.buffer.begin() + static_cast<std::ptrdiff_t>(part.skip), '\n'));
  }
  CsvReader csv(path, bytes, first_line);
  std::vector<std::string_view>& fields = part.fields;
  const auto bad = [&](int at, const std::string& what) {
    return Error(ErrorCode::kInvalidInput, path + ": line " + std::to_string(at) + ": " + what);
  };
  const auto shapes_join = [](std::string_view in, std::string_view out) {
    return AscendInOut(AscendShapes(in), AscendShapes(out));
  };
  const auto in_out = [](std::string_view in, std::string_view out) {
    return AscendInOut(in, out);
  };
  const auto track_of = [&](std::string_view stream) {
    if (stream.empty() || stream == "N/A") stream = "0";
    for (const auto& [name, id] : part.tracks) {
      if (name == stream) return id;
    }
    const uint32_t id = model.TrackFor("Ascend Hardware", stream);
    part.tracks.emplace_back(std::string(stream), id);
    return id;
  };
  const size_t slots = builder != nullptr ? builder->Slots() : 0;
  while (header.NextRecord(csv, fields, path)) {
    const int record_line = csv.record_line();
    int64_t start = 0, duration = 0;
    if (!MicrosToNs(TrimField(fields[c.start]), start)) {
      throw bad(record_line, "'" + c.start_name + "' is " +
                                 WhyNotMicros(TrimField(fields[c.start]), "not a time") + ": '" +
                                 std::string(fields[c.start]) + "'");
    }
    if (!MicrosToNs(TrimField(fields[c.dur]), duration) || duration < 0) {
      throw bad(record_line,
                "'" + c.dur_name + "' is " +
                    (duration < 0 ? std::string("not a duration")
                                  : WhyNotMicros(TrimField(fields[c.dur]), "not a duration")) +
                    ": '" + std::string(fields[c.dur]) + "'");
    }
    const auto text = [&](size_t col) {
      return col == SIZE_MAX ? std::string_view() : TrimField(fields[col]);
    };
    const std::string_view name = TrimField(fields[c.name]);
    const uint32_t name_id = model.Intern(name);
    // A kernel's tasks mostly repeat its type, core, shapes, types and
    // formats (the same operator each step): when the texts are the last
    // task's of this name, byte for byte, their ids are too, and the eight
    // lookups are skipped.
    const std::string_view texts[] = {text(c.type),       text(c.core),       text(c.in_shapes),
                                      text(c.out_shapes), text(c.in_types),   text(c.out_types),
                                      text(c.in_formats), text(c.out_formats)};
    std::string& key = part.key;
    key.clear();
    for (const std::string_view t : texts) {
      const auto n = static_cast<uint32_t>(t.size());
      key.append(reinterpret_cast<const char*>(&n), sizeof n).append(t);
    }
    uint32_t& at = part.last_of[name_id];
    if (at == 0) {
      part.last.emplace_back();
      at = static_cast<uint32_t>(part.last.size());
    }
    KernelDetailsPart::Ids& ids = part.last[at - 1];
    if (!ids.known || ids.key != key) {
      const std::string_view type = texts[0] == "N/A" ? "" : texts[0];
      const std::string_view core = texts[1] == "N/A" ? "" : texts[1];
      ids.type = model.Intern(type);
      uint8_t& cls = part.class_of[static_cast<int64_t>(uint64_t{name_id} << 32 | ids.type)];
      if (cls == 0) cls = static_cast<uint8_t>(AscendTaskClass(name, type, core)) + 1;
      ids.cls = static_cast<EventClass>(cls - 1);
      ids.kind = model.Intern(core);
      ids.shapes = part.shapes_of(texts[2], texts[3], shapes_join);
      ids.dtype = part.types_of(texts[4], texts[5], in_out);
      ids.layout = part.formats_of(texts[6], texts[7], in_out);
      ids.key = key;
      ids.known = true;
    }
    model.Append(EventRow{
        .start_ns = start,
        .duration_ns = duration,
        .name = name_id,
        .category = ids.type,
        .track = track_of(text(c.stream)),
        .cls = ids.cls,
        .kind = ids.kind,
        .shapes = ids.shapes,
        .dtype = ids.dtype,
        .layout = ids.layout,
    });
    if (builder == nullptr || part.pipeline_error_at != SIZE_MAX) continue;
    KernelDetailsPart::Task& task = part.tasks.emplace_back();
    if (task_keys) {
      task.stream = model.Intern(text(c.stream));
      task.task = model.Intern(text(c.task));
    }
    if (double blocks = 0; ParseAscendNumber(text(c.blocks), blocks) && blocks >= 0) {
      task.blocks = blocks;
    }
    if (double blocks = 0; ParseAscendNumber(text(c.mix_blocks), blocks) && blocks >= 0) {
      task.mix_blocks = blocks;
    }
    if (double id = 0; ParseAscendNumber(text(c.model_id), id) && InGraphModel(id)) {
      task.in_graph = true;
    }
    part.values.resize(part.tasks.size() * slots);
    try {
      builder->ParseFields(fields, part.values.data() + (part.tasks.size() - 1) * slots,
                           [&] { return path + ": line " + std::to_string(record_line); });
    } catch (const Error& e) {
      // The tasks go on; the pipeline will have no table.
      part.pipeline_error_at = part.tasks.size() - 1;
      part.pipeline_error = e.what();
    }
  }
}

}  // namespace

void ImportKernelDetails(Source& source, TraceModel& model, KernelDetailsPipeline* pipeline,
                         const ImportOptions& options) {
  const std::string& path = source.name();
  // Runs of whole records, parsed at once and merged in file order
  // (ordered_batches.h): the model is the same for any thread count.
  const uint64_t expected = source.expected_bytes();
  CsvBatcher batcher(source, ImportChunkBytes(options.chunk_bytes, expected));
  // The first run holds the header.
  CsvBatch first;
  batcher.Next(first);
  CsvReader head(path, first.bytes(), first.first_line);
  const CsvHeader header = ReadCsvHeader(head, path);
  const size_t header_bytes = static_cast<size_t>(head.consumed());
  const auto bad = [&](int at, const std::string& what) {
    return Error(ErrorCode::kInvalidInput, path + ": line " + std::to_string(at) + ": " + what);
  };
  // kernel_details.csv renames msprof's op_summary columns (docs/formats/ascend.md, 3.2):
  // either name is read, so op_summary_*.csv goes through the same code.
  const auto find = [&](const char* kernel_details, const char* op_summary) {
    const size_t at = header.Find(kernel_details);
    return at != SIZE_MAX ? at : header.Find(op_summary);
  };
  const KernelDetailsColumns columns{
      .name = find("Name", "Op Name"),
      .start = find("Start Time(us)", "Task Start Time(us)"),
      .dur = find("Duration(us)", "Task Duration(us)"),
      .type = find("Type", "OP Type"),
      .core = find("Accelerator Core", "Task Type"),
      .stream = find("Stream ID", "Stream ID"),
      .task = find("Task ID", "Task ID"),
      .blocks = find("Block Num", "Block Dim"),
      .mix_blocks = find("Mix Block Num", "Mix Block Dim"),
      .in_shapes = find("Input Shapes", "Input Shapes"),
      .out_shapes = find("Output Shapes", "Output Shapes"),
      .in_types = find("Input Data Types", "Input Data Types"),
      .out_types = find("Output Data Types", "Output Data Types"),
      .in_formats = find("Input Formats", "Input Formats"),
      .out_formats = find("Output Formats", "Output Formats"),
      .model_id = find("Model ID", "Model ID"),
      .start_name =
          header.Find("Start Time(us)") != SIZE_MAX ? "Start Time(us)" : "Task Start Time(us)",
      .dur_name = header.Find("Duration(us)") != SIZE_MAX ? "Duration(us)" : "Task Duration(us)",
  };
  for (const auto& [col, what] : {std::pair{columns.name, "'Name' (or op_summary's 'Op Name')"},
                                  {columns.start, "'Start Time(us)' (or 'Task Start Time(us)')"},
                                  {columns.dur, "'Duration(us)' (or 'Task Duration(us)')"}}) {
    if (col == SIZE_MAX) throw bad(1, std::string("no ") + what + " column");
  }
  std::optional<AiCorePipelineBuilder> builder;
  if (pipeline != nullptr) {
    std::vector<std::string> names;
    for (const auto& [column, at] : header.column) names.push_back(column);
    builder.emplace(path, names, "(us)");
    builder->BindColumns([&](std::string_view column) { return header.Find(column); });
    if (pipeline->l2_cache != nullptr) {
      try {
        builder->ReadL2(*pipeline->l2_cache);
      } catch (const Error& e) {
        pipeline->l2_error = e.what();  // the pipeline goes on without L2 rates
      }
    }
  }
  // L2 rates are matched by stream and task id: only then are those kept.
  const bool task_keys = pipeline != nullptr && pipeline->l2_cache != nullptr;
  bool pipeline_failed = false, first_taken = false;
  RunOrderedBatches<KernelDetailsPart>(
      ImportThreads(options.threads, expected), [](KernelDetailsPart&) {},
      [&](KernelDetailsPart& part) {
        part.skip = 0;
        if (!first_taken) {
          first_taken = true;
          std::swap(part.batch, first);
          part.skip = header_bytes;
          return true;
        }
        return batcher.Next(part.batch);
      },
      [&](KernelDetailsPart& part) {
        ParseKernelDetailsBatch(path, header, columns, builder ? &*builder : nullptr, task_keys,
                                part);
      },
      [&](KernelDetailsPart& part, uint64_t sequence) {
        const size_t at = model.size();
        part.ids.MoveEvents(part.model, model);
        if (builder && !pipeline_failed) {
          const size_t slots = builder->Slots();
          for (size_t r = 0; r < part.tasks.size(); ++r) {
            if (r == part.pipeline_error_at) {
              pipeline->error = part.pipeline_error;
              pipeline_failed = true;
              break;
            }
            const KernelDetailsPart::Task& t = part.tasks[r];
            const size_t e = at + r;
            const PipelineTask task{
                .name = model.String(model.name[e]),
                .type = model.String(model.category[e]),
                .core = model.String(model.kind[e]),
                .stream = part.model.String(t.stream),
                .task = part.model.String(t.task),
                .dur_ns = model.duration_ns[e],
                .start_ns = model.start_ns[e],
                .blocks = t.blocks,
                .mix_blocks = t.mix_blocks,
                .name_id = model.name[e],
                .shapes = model.String(model.shapes[e]),
                .dtype = model.String(model.dtype[e]),
                .shapes_id = model.shapes[e],
                .in_graph = t.in_graph,
            };
            builder->AddParsed(task, part.values.data() + r * slots);
          }
        }
        if (sequence == 0 && model.size() > at && expected > 0) {
          // Reserve for the whole file from the first run's density (+2%): no
          // growth copies, no doubled peak.
          const double per_byte = static_cast<double>(model.size() - at) /
                                  static_cast<double>(part.batch.size - part.skip);
          model.Reserve(at + static_cast<size_t>(per_byte * static_cast<double>(expected) * 1.02));
        }
      });
  for (auto& track : model.tracks) track.process = "Ascend Hardware";
  model.format = "ascend-kernel-details";
  CompleteAscendModel(model);
  model.source = path;
  if (builder && !pipeline_failed) pipeline->table = builder->Finish();
}

}  // namespace opscope::analyze
