// `opscope convert --to perfetto`: any input opscope reads (a Kineto or
// torch_npu trace, an Nsight Systems or rocpd database, a rocprofv3 JSON, an
// XPlane file, an Ascend folder, several ranks) written as one Chrome trace
// that Perfetto and chrome://tracing open: every event of the model as a
// complete ("X") event, a named process per process of each input (its rank
// first where there are several), a named thread per track, and a flow from
// each launch call to the device work it launched.
//
// The model is written, not the input: what its reader leaves out (instant and
// counter events, a producer's own metadata) is not in the output, and each
// input's import notes say what was left out and why. Time stays in each
// input's own clock, in microseconds with three decimals (the nanosecond
// exactly).
#ifndef OPSCOPE_ANALYZE_CONVERT_CHROME_TRACE_H_
#define OPSCOPE_ANALYZE_CONVERT_CHROME_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/trace_inputs.h"
#include "analyze/trace_model.h"
#include "core/output.h"

namespace opscope::analyze {

// What one input became.
struct ConvertedTrace {
  std::string path;  // as the user knows it (an archive's member by its path inside)
  int rank = -1;     // -1: not known
  std::string format;
  uint64_t events = 0, tracks = 0, flows = 0;
  std::vector<std::string> notes;  // the reader's import notes: what it left out
};

// Writes models as one Chrome trace, one at a time, so that only one input's
// model is held: Begin, Add per model, End.
class ChromeTraceWriter {
 public:
  explicit ChromeTraceWriter(core::OutputStream& out) : out_(out) {}
  void Begin();
  // The model's events, tracks and launch flows; `label` prefixes its process
  // names ("rank 3") where several inputs share the file, "" else.
  ConvertedTrace Add(const TraceModel& model, const std::string& label);
  // Closes the event list; the traces added, for otherData.
  void End(const std::vector<ConvertedTrace>& traces);

 private:
  void Flow(uint32_t from_track, int64_t from_ns, uint32_t to_track, int64_t to_ns,
            const std::vector<uint32_t>& tids, const std::vector<uint32_t>& pids);

  core::OutputStream& out_;
  bool first_ = true;
  uint32_t next_pid_ = 1, next_tid_ = 1;
  uint64_t next_flow_ = 1;
  std::vector<std::string> devices_;  // device names, for deviceProperties
};

struct ConvertOutcome {
  std::vector<ConvertedTrace> traces;
  std::vector<UnusedFile> unused;  // files found and not read, with why
};

// Reads each of the inputs FindTraceInputs found, as analyze reads them, and
// writes them to `out` as one Chrome trace. Of several inputs, one that cannot
// be read is listed in `unused` and the rest are written; where none can be,
// or the only one cannot, its error is thrown (naming the file).
ConvertOutcome WriteChromeTrace(TraceInputs inputs, core::OutputStream& out);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_CONVERT_CHROME_TRACE_H_
