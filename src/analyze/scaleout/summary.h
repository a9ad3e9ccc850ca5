// Stage 1 of scale-out analysis: one rank's trace reduced to a summary whose
// size does not grow with the trace's length (only with its distinct
// operators, steps and collective calls): the rank's totals, its per-step
// breakdown, per-operator statistics with mergeable quantile sketches
// (sketch.h: p50/p99 within 1% + 0.5 ns) and one record per collective call.
// Stage 2 (merge.h) reduces many ranks' summaries. A summary is a versioned
// JSON document, gzip-compressed on disk ("*.summary"), so any scheduler can
// run stage 1 where the traces are and move only summaries.
#ifndef OPSCOPE_ANALYZE_SCALEOUT_SUMMARY_H_
#define OPSCOPE_ANALYZE_SCALEOUT_SUMMARY_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/multirank.h"
#include "analyze/scaleout/sketch.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

inline constexpr int kSummaryVersion = 1;
inline constexpr std::string_view kSummaryKind = "opscope-rank-summary";
// Operators kept by name per summary, the most time first; the rest are
// folded into one "(N other operators)" row per class, so a trace with
// millions of distinct names still gives a bounded summary.
inline constexpr size_t kSummaryMaxOperators = 2000;
// The largest summary file read (uncompressed).
inline constexpr size_t kSummaryMaxBytes = size_t{256} << 20;

struct SummaryOperator {
  std::string name;
  EventClass cls = EventClass::kOther;
  int64_t count = 0, total_ns = 0, self_ns = 0;
  int64_t folded = 0;        // > 0: the row stands for this many operators
  QuantileSketch durations;  // every call's duration; exact min and max
};

struct SummaryStep {
  int64_t number = -1;  // N of ProfilerStep#N; -1 when the name carries none
  std::string name;
  int64_t begin_ns = 0, duration_ns = 0;
  int64_t compute_ns = 0, communication_ns = 0, memory_ns = 0, idle_ns = 0;
  std::string status;  // passes/steps.h: complete, warm-up, partial, empty
};

// One collective call on the device. Calls are matched across ranks by
// (group, seq): seq is the trace's own sequence number where it records one
// (Kineto's "Seq"), else the call's position among the group's calls in the
// rank's trace (ranks that traced the same iterations line up).
struct SummaryCollective {
  uint32_t group = 0;  // index into RankTraceSummary::groups
  uint32_t op = 0;     // index into RankTraceSummary::ops ("allreduce", ...)
  int64_t seq = 0;
  int64_t bytes = -1;  // message size where the trace records it
  int64_t start_ns = 0, duration_ns = 0;
};

struct RankTraceSummary {
  int version = kSummaryVersion;
  int rank = -1;
  std::string path, format, device;
  int64_t events = 0, begin_ns = 0, end_ns = 0;
  // Device kernel time (union) that computes, that communicates, and the
  // communication time during which compute ran too.
  int64_t compute_ns = 0, communication_ns = 0, overlap_ns = 0;
  int64_t steps_complete = 0, mean_step_ns = 0;
  std::vector<SummaryStep> steps;
  std::vector<SummaryOperator> operators;
  std::vector<std::string> groups, ops;  // strings of the collective records
  bool seq_from_trace = false;           // every record's seq is the trace's
  std::vector<SummaryCollective> collectives;
};

// The collective a device task's name says it runs ("allreduce",
// "allgather", "reducescatter", "alltoall", "broadcast", "reduce",
// "sendrecv", "send", "recv", "barrier"), or "" for none (HCCL's notify
// tasks inside a collective are not calls).
std::string_view CollectiveOp(std::string_view name);

// The summary of an analysed trace (its model and analysis).
RankTraceSummary SummarizeTrace(const TraceModel& model, const Analysis& analysis, int rank,
                                const std::string& path);
// The same from the rank's SummarizeRank, where the caller has it already.
RankTraceSummary SummarizeTrace(const TraceModel& model, const Analysis& analysis,
                                const RankSummary& rank, const std::string& path);

// The summary as its JSON document, and back. ParseSummary throws
// Error(kInvalidInput) naming `where` and the field that is wrong.
std::string SerializeSummary(const RankTraceSummary& summary);
RankTraceSummary ParseSummary(std::string_view json, const std::string& where);

// A summary's document gzip-compressed, as files hold it (and as summaries
// travel between threads and MPI processes: a sixth of the size), and back:
// ParseSummaryBytes takes gzip or plain JSON.
std::string CompressSummary(std::string_view json);
RankTraceSummary ParseSummaryBytes(std::string_view bytes, const std::string& where);

// A summary file: gzip-compressed JSON, written atomically. ReadSummaryFile
// takes gzip or plain JSON and throws Error(kIo) or Error(kInvalidInput)
// naming the file.
void WriteSummaryFile(const std::filesystem::path& path, const RankTraceSummary& summary);
std::string ReadSummaryBytes(const std::filesystem::path& path);
RankTraceSummary ReadSummaryFile(const std::filesystem::path& path);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_SCALEOUT_SUMMARY_H_
