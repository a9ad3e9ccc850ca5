// Analysis pass "import_notes": what the trace's reader could not use, and how
// much of the input that is (import_notes.cc).
#ifndef OPSCOPE_ANALYZE_PASSES_IMPORT_NOTES_H_
#define OPSCOPE_ANALYZE_PASSES_IMPORT_NOTES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::analyze {

inline constexpr std::string_view kImportNotesPass = "import_notes";

struct ImportNotes {
  // The reader's notes (TraceModel::import_notes), then what the analysis
  // found it could not read as written (texts kept by their ends, host events
  // that overlap unevenly).
  std::vector<std::string> notes;
  uint64_t left_out = 0, read = 0;  // records the reader left out; events it read
  // The notes one after another, a space between, as findings quote them.
  std::string Joined() const {
    std::string all;
    for (const std::string& note : notes) all += (all.empty() ? "" : " ") + note;
    return all;
  }
  // The trace's health, one count per check (the trace_health table): events
  // of no duration; host events that overlap unevenly (read as beside);
  // host-to-device flows that end before they start, of all with both ends;
  // texts kept by their ends; events of no known class; and the last step,
  // where the trace ended inside it ("" none).
  int64_t zero_length = 0, uneven = 0, backward_flows = 0, flows = 0, long_texts = 0;
  int64_t unclassified = 0;
  std::string cut_step;
  // Events that end more than kOverrunSlackNs after the producer stopped
  // recording (TraceModel::recording_end_ns), and the annotations and steps
  // among them (which set no span and are no step); -1 where the trace says
  // no end.
  int64_t past_recording = -1, past_recording_spans = 0;
  // What the producer said it lost while recording (TraceModel), beside the
  // device tasks the trace holds.
  int64_t producer_dropped = 0, device_tasks = 0;
  bool producer_stopped = false;
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_IMPORT_NOTES_H_
