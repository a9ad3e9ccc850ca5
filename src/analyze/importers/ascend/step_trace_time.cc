#include "analyze/importers/ascend/step_trace_time.h"

#include <utility>

#include "analyze/importers/csv_reader.h"
#include "analyze/importers/timestamps.h"
#include "analyze/side_files.h"
#include "opscope/opscope.h"

namespace opscope::analyze {

std::vector<ReportedStep> ReadStepTraceTime(Source& source) {
  const std::string& path = source.name();
  CsvReader csv(source);
  std::vector<std::string> fields;
  const auto bad = [&](int line, const std::string& what) {
    return Error(ErrorCode::kInvalidInput, path + ": line " + std::to_string(line) + ": " + what);
  };
  const CsvHeader header = ReadCsvHeader(csv, path);
  for (const char* required : {"Step", "Computing"}) {
    if (header.Find(required) == SIZE_MAX) {
      throw bad(1, std::string("no '") + required + "' column");
    }
  }
  // Where each duration lands, by its column name.
  const std::pair<const char*, int64_t ReportedStep::*> durations[] = {
      {"Computing", &ReportedStep::computing_ns},
      {"Communication", &ReportedStep::communication_ns},
      {"Communication(Not Overlapped)", &ReportedStep::comm_not_overlapped_ns},
      {"Overlapped", &ReportedStep::overlapped_ns},
      {"Free", &ReportedStep::free_ns},
      {"Stage", &ReportedStep::stage_ns},
      {"Bubble", &ReportedStep::bubble_ns},
      {"Preparing", &ReportedStep::preparing_ns},
  };
  std::vector<ReportedStep> rows;
  while (header.NextRecord(csv, fields, path)) {
    const int line = csv.record_line();
    ReportedStep row;
    if (const size_t c = header.Find("Device_id"); c != SIZE_MAX) row.device = TrimField(fields[c]);
    row.step = TrimField(fields[header.Find("Step")]);
    for (const auto& [name, member] : durations) {
      const size_t c = header.Find(name);
      if (c == SIZE_MAX) continue;
      const std::string_view text = TrimField(fields[c]);
      if (text.empty() || text == "N/A") continue;
      int64_t ns = 0;
      // Overlapped is a difference of two sums and may print as -1e-11.
      if (!MicrosToNs(text, ns) || ns < -1000) {
        throw bad(line, std::string("'") + name + "' is not a duration in microseconds: '" +
                            std::string(text) + "'");
      }
      row.*member = ns < 0 ? 0 : ns;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Importer StepTraceTimeImporter() {
  return Importer{
      "ascend-step-trace",
      "torch_npu's step_trace_time.csv alone: a rank's step breakdown without a timeline",
      {"step_trace_time.csv"},
      [](Source& source) {
        std::string_view head = source.Peek(4096);
        head = head.substr(0, head.find('\n'));
        return head.find("Step") != std::string_view::npos &&
               head.find("Computing") != std::string_view::npos &&
               head.find("Communication(Not Overlapped)") != std::string_view::npos;
      },
      [](Source& source, TraceModel& model) {
        // Read here so that a broken file is refused as a timeline would be;
        // the rows reach the tables through the side-file reader of the same
        // file (the tree finder and Beside give it that role).
        ReadStepTraceTime(source);
        model.format = "ascend-step-trace";
      },
      // A rank's own: the rows are kept, and the side-file reader of the same
      // file is done (the file read once).
      [](Source& source, RankFiles& files, TraceModel& model) {
        model.reported.steps = ReadStepTraceTime(source);
        model.format = "ascend-step-trace";
        if (files.Path("step_trace_time") == files.timeline()) files.Done("step_trace_time");
      },
  };
}

}  // namespace opscope::analyze
