// Analysis pass "import_notes": what the trace's reader could not use
// (TraceModel::import_notes), said in the report beside what it did read, so
// that an analysis without some data is never read as one that found none;
// and its rule, unread_records, where the records left out are enough to
// change a figure.
#include "analyze/passes/import_notes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/links.h"
#include "analyze/passes/pass.h"

namespace opscope::analyze {

namespace {

// The share of the input's records left out from which unread_records
// speaks, warns and is critical (a third missing: no figure stands).
constexpr double kUnreadInfoPct = 1, kUnreadWarningPct = 10, kUnreadCriticalPct = 30;
// The share of the device records the producer made (those it dropped and
// those in the trace) from which producer_dropped warns and is critical.
constexpr double kDroppedWarningPct = 1, kDroppedCriticalPct = 10;

// The device records the producer made: those it dropped and those in the
// trace, saturating (the dropped count is the file's word).
int64_t DeviceRecordsMade(const ImportNotes& n) {
  return n.producer_dropped > INT64_MAX - n.device_tasks ? INT64_MAX
                                                         : n.producer_dropped + n.device_tasks;
}

// Every check the trace went through, with what it found (0 included: a
// check that found nothing says the trace was checked) and what was done.
void HealthTable(const ImportNotes& n, const TableContext& context,
                 std::vector<core::ResultTable>& tables) {
  core::ResultTable table;
  table.section = "trace_health";
  table.title = "Trace health: what the reader and the analysis could not use as written";
  table.columns = {
      {"trace", "Trace", 0, false},
      {"check", "Check"},
      {"count", "Found"},
      {"of", "Of"},
      {.key = "share_pct", .header = "%", .precision = 2, .unit = core::Unit::kPercent},
      {"treatment", "What was done"}};
  const std::string path(context.path);
  // Where rows are cut (the terminal, analysis.html: context.top > 0), only
  // the checks that found something, events of no duration aside (common,
  // and harmless as read); the table is hidden there when none did. The
  // files hold every check.
  const bool every = context.top == 0;
  table.hidden_when_empty = true;
  const auto row = [&](std::string check, int64_t count, int64_t of, std::string treatment,
                       bool worth_showing = true) {
    if (!every && (count == 0 || !worth_showing)) return;
    table.AddRow({path, std::move(check), count, of > 0 ? core::Value{of} : core::Value{},
                  of > 0 ? core::Value{Pct(count, of)} : core::Value{}, std::move(treatment)});
  };
  const auto all = static_cast<int64_t>(n.left_out + n.read);
  row("records not usable as events (malformed, rows without a valid span)",
      static_cast<int64_t>(n.left_out), all,
      n.left_out > 0 ? "left out and counted, the rest analysed (the import notes give each "
                       "reason with its first byte); --strict refuses the trace"
                     : "none");
  row("events of no duration", n.zero_length, static_cast<int64_t>(n.read),
      "kept as instants on their track (a producer's clock resolution, or a marker)", false);
  row("host events that start inside another and end after it", n.uneven,
      static_cast<int64_t>(n.read), "each read as beside the event it overlaps, not inside it");
  row("host-to-device flows that end before they start", n.backward_flows, n.flows,
      "kept as links; left out of the launch delays (the host's and the device's clocks "
      "disagree)");
  row("texts longer than the kept limit", n.long_texts, static_cast<int64_t>(n.read),
      "kept by their ends around a marker of the bytes left out");
  row("events of no known class", n.unclassified, static_cast<int64_t>(n.read),
      "counted in no figure that needs a class (the unclassified_events finding names their "
      "categories)");
  row("device records the producer said it dropped while recording", n.producer_dropped,
      DeviceRecordsMade(n),
      n.producer_dropped > 0 ? "not in the trace: every device figure is short by what they held "
                               "(producer_dropped weighs them)"
                             : "none said");
  row("device recording the producer said it stopped before the end", n.producer_stopped ? 1 : 0, 0,
      n.producer_stopped ? "device work after that point is missing (producer_dropped)"
                         : "none said");
  row("events that end after the producer stopped recording (Kineto's Record Window End)",
      std::max<int64_t>(n.past_recording, 0), static_cast<int64_t>(n.read),
      n.past_recording < 0    ? std::string("the trace says no end of its recording")
      : n.past_recording == 0 ? std::string("none")
      : n.past_recording_spans == 0
          ? std::string("read as recorded (work the producer flushed after its window)")
          : fmt::format("the {} annotation{} or step{} among them set{} no span and {} no step "
                        "(overrun); the rest read as recorded",
                        n.past_recording_spans, n.past_recording_spans == 1 ? "" : "s",
                        n.past_recording_spans == 1 ? "" : "s",
                        n.past_recording_spans == 1 ? "s" : "",
                        n.past_recording_spans == 1 ? "is" : "are"));
  row("a last step the trace ended inside", n.cut_step.empty() ? 0 : 1, 0,
      n.cut_step.empty() ? std::string("none")
                         : "'" + n.cut_step + "' left out of the step means (steps table)");
  table.notes.push_back(
      every ? "Each check the trace went through; a count of 0 says it was checked and found "
              "nothing. Malformed records are counted by the reader (unread_records weighs "
              "them); the other rows are read as the treatment says, and the figures stand on "
              "that reading."
            : "The checks that found something; analysis.json and tables/trace_health.csv "
              "list every check the trace went through, those that found nothing included.");
  tables.push_back(std::move(table));
}

void Tables(const Analysis& a, const TableContext& context,
            std::vector<core::ResultTable>& tables) {
  const auto* found = a.results.Get<ImportNotes>(kImportNotesPass);
  if (found == nullptr) return;
  HealthTable(*found, context, tables);
  if (found->notes.empty()) return;
  const std::vector<std::string>* notes = &found->notes;
  core::ResultTable table;
  table.section = std::string(kImportNotesPass);
  table.title = "What the reader left out";
  table.columns = {{"trace", "Trace", 0, false}, {"note", "Note"}};
  for (const std::string& note : *notes) table.AddRow({std::string(context.path), note});
  tables.push_back(std::move(table));
}

void UnreadRecordsRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* n = c.analysis.results.Get<ImportNotes>(kImportNotesPass);
  if (n == nullptr || n->left_out == 0) return;
  const uint64_t all = n->left_out + n->read;
  const double pct = 100.0 * static_cast<double>(n->left_out) / static_cast<double>(all);
  if (pct < kUnreadInfoPct) return;
  const std::string evidence = n->Joined();
  out.push_back(
      {"unread_records",
       pct >= kUnreadCriticalPct  ? Severity::kCritical
       : pct >= kUnreadWarningPct ? Severity::kWarning
                                  : Severity::kInfo,
       fmt::format("{} of the input's {} records ({:.1f}%) could not be read: every figure "
                   "and finding stands on the rest, and may be short by what they held",
                   n->left_out, all, pct),
       evidence,
       "Find why they cannot be read (the import notes say what each lacks): a file cut short "
       "or damaged in transfer, a profiler stopped before it finished writing, an exporter of "
       "another version; record or export the trace again. Until then, read the figures as "
       "lower bounds where the records left out could hold the same work."});
}

// Device records the producer said it lost while recording: the device
// figures are short by them, however the trace reads.
void ProducerDroppedRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* n = c.analysis.results.Get<ImportNotes>(kImportNotesPass);
  if (n == nullptr || (n->producer_dropped == 0 && !n->producer_stopped)) return;
  const int64_t made = DeviceRecordsMade(*n);
  const double pct =
      made > 0 ? 100.0 * static_cast<double>(n->producer_dropped) / static_cast<double>(made) : 0.0;
  const Severity severity = pct >= kDroppedCriticalPct                         ? Severity::kCritical
                            : pct >= kDroppedWarningPct || n->producer_stopped ? Severity::kWarning
                                                                               : Severity::kInfo;
  std::string title;
  if (n->producer_dropped > 0) {
    title = fmt::format(
        "The profiler dropped {} device record{} while recording ({:.1f}% of the {} it made){}: "
        "every device figure is short by what they held",
        n->producer_dropped, n->producer_dropped == 1 ? "" : "s", pct, made,
        n->producer_stopped ? ", and stopped recording device activity before the end" : "");
  } else {
    title =
        "The profiler stopped recording device activity before the end of the trace: device "
        "work after that point is missing from every device figure";
  }
  out.push_back(
      {"producer_dropped", severity, std::move(title), n->Joined(),
       "Record again so that nothing is dropped: fewer steps in one trace (torch.profiler's "
       "schedule with active=1 or 2), or larger buffers for the device records (Kineto: "
       "ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB in the file KINETO_CONFIG names, 128 MB by "
       "default; XLA: fewer steps between start_trace and stop_trace). Until then, read the "
       "device figures as lower bounds, and a device that looks idle as possibly busy with "
       "the work that was dropped."});
}

// A trace that holds no event the analysis can use: said, with what its
// reader found (the tables it lacks, the producer's own warnings), not left
// as an empty report.
void NoEventsRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* n = c.analysis.results.Get<ImportNotes>(kImportNotesPass);
  if (n == nullptr || n->read > 0 || n->left_out > 0) return;
  const std::string evidence = n->Joined();
  out.push_back(
      {"no_events", Severity::kWarning,
       "The trace holds no event to analyse: no device task, runtime call, operator or range "
       "was recorded",
       evidence.empty() ? std::string("its reader found none") : evidence,
       "Record the program's activity: the device and the host calls that drive it (nsys -t "
       "cuda,nvtx; torch.profiler activities CPU and CUDA/NPU; rocprofv3 --hip-trace "
       "--kernel-trace), with the program running on the device while the profiler records."});
}

}  // namespace

Pass ImportNotesPass() {
  return {
      kImportNotesPass,
      "What in the trace could its reader not use?",
      {"links", "steps", "device_busy"},
      [](const TraceModel& model, Analysis& a) {
        ImportNotes found{model.import_notes, model.records_left_out, model.size()};
        // A reader's saturated sum fits: at most INT64_MAX.
        found.producer_dropped =
            static_cast<int64_t>(std::min<uint64_t>(model.producer_dropped, INT64_MAX));
        found.producer_stopped = model.producer_stopped;
        // One walk over the events: device tasks, events of no duration, and
        // those that end after the recording did (where the trace says when).
        if (model.recording_end_ns != INT64_MAX) found.past_recording = 0;
        for (size_t e = 0; e < model.size(); ++e) {
          found.device_tasks += IsDevice(model.cls[e]);
          found.zero_length += model.duration_ns[e] == 0;
          if (EndsPastRecording(model.recording_end_ns, model.start_ns[e] + model.duration_ns[e])) {
            ++found.past_recording;
            found.past_recording_spans +=
                model.cls[e] == EventClass::kStep || model.cls[e] == EventClass::kAnnotation;
          }
        }
        std::vector<std::string>& notes = found.notes;
        found.long_texts = static_cast<int64_t>(model.long_texts);
        found.uneven = a.links.uneven;
        // The events the unclassified_events finding counts (device_busy's
        // count, by category), so that the two never disagree.
        for (const auto& [category, n] : a.busy.unclassified) found.unclassified += n;
        for (const auto& f : model.launch_flows) {
          ++found.flows;
          found.backward_flows += f.device_ns < f.host_ns;
        }
        if (!a.steps.empty() && a.steps.back().status == "partial") {
          found.cut_step = a.steps.back().name;
        }
        if (model.long_texts > 0) {
          notes.push_back(fmt::format(
              "{} text{} longer than {} KiB (names, shapes or fields; the longest {} bytes) "
              "{} kept by {} ends: the first {} KiB and the last {} KiB around a marker "
              "saying how many bytes were left out. The trace holds {} whole.",
              model.long_texts, model.long_texts == 1 ? "" : "s", TraceModel::kMaxTextBytes >> 10,
              model.longest_text, model.long_texts == 1 ? "is" : "are",
              model.long_texts == 1 ? "its" : "their", TraceModel::kKeptHead >> 10,
              TraceModel::kKeptTail >> 10, model.long_texts == 1 ? "it" : "them"));
        }
        const EventLinks& l = a.links;
        if (l.uneven > 0 && l.uneven_example >= 0) {
          const auto e = static_cast<size_t>(l.uneven_example);
          notes.push_back(fmt::format(
              "{} host event{} start inside another on their thread and end after it (by up "
              "to {:.3f} ms; the first: '{}'): the trace format wants them nested (the "
              "producer's clocks, or an end it lost). Each is read as beside the event it "
              "overlaps, not inside it.",
              l.uneven, l.uneven == 1 ? "" : "s", l.uneven_max_ns / 1e6,
              std::string(model.String(model.name[e]).substr(0, 120))));
        }
        a.results.Set(kImportNotesPass, std::move(found));
      },
      Tables,
      {{"unread_records",
        {kImportNotesPass},
        [](const Thresholds&) {
          return fmt::format(
              "the input's reader left records out (malformed events, rows without a valid "
              "start and end) and they are {:g}% or more of its records (a warning from {:g}%, "
              "critical from {:g}%)",
              kUnreadInfoPct, kUnreadWarningPct, kUnreadCriticalPct);
        },
        UnreadRecordsRule},
       {"producer_dropped",
        {kImportNotesPass},
        [](const Thresholds&) {
          return fmt::format(
              "the profiler said it dropped device records while recording (CUPTI's count in "
              "Kineto's log, XLA's GPU tracer's dropped events in the XSpace's warnings) or "
              "that it stopped recording device activity before the end; a warning from {:g}% "
              "of the device records it made, or where it stopped; critical from {:g}%",
              kDroppedWarningPct, kDroppedCriticalPct);
        },
        ProducerDroppedRule},
       {"no_events",
        {kImportNotesPass},
        [](const Thresholds&) {
          return std::string(
              "the trace's reader read no event and left none out (a profiler that recorded "
              "nothing the analysis uses: only scheduling or OS data, or no activity at all)");
        },
        NoEventsRule}}};
}

}  // namespace opscope::analyze
