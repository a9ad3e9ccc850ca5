#include "analyze/importers/ascend/step_trace_time.h"

#include <utility>

#include "analyze/importers/csv_reader.h"
#include "analyze/importers/timestamps.h"
#include "opscope/opscope.h"

namespace opscope::analyze {

int64_t AscendStepTime::StepNs() const {
  if (computing_ns < 0 || comm_not_overlapped_ns < 0 || free_ns < 0) return -1;
  return computing_ns + comm_not_overlapped_ns + free_ns;
}

std::vector<AscendStepTime> ReadStepTraceTime(Source& source) {
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
  const std::pair<const char*, int64_t AscendStepTime::*> durations[] = {
      {"Computing", &AscendStepTime::computing_ns},
      {"Communication", &AscendStepTime::communication_ns},
      {"Communication(Not Overlapped)", &AscendStepTime::comm_not_overlapped_ns},
      {"Overlapped", &AscendStepTime::overlapped_ns},
      {"Free", &AscendStepTime::free_ns},
      {"Stage", &AscendStepTime::stage_ns},
      {"Bubble", &AscendStepTime::bubble_ns},
      {"Preparing", &AscendStepTime::preparing_ns},
  };
  std::vector<AscendStepTime> rows;
  while (header.NextRecord(csv, fields, path)) {
    const int line = csv.record_line();
    AscendStepTime row;
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

}  // namespace opscope::analyze
