#include "report/analysis_tables.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyze/passes/pass.h"

namespace opscope::report {

size_t Shown(size_t rows, const AnalysisTableOptions& options, ResultTable& table) {
  return analyze::TableContext{.top = options.top}.Shown(rows, table);  // the passes' rule
}

namespace {

// A trace's graph replays charged to the operators that captured them
// (analyze/graph_capture.h).
void AddGraphKernels(const analyze::AnalyzedTrace& t, std::vector<ResultTable>& tables) {
  if (!t.graph) return;
  const analyze::GraphKernels& g = *t.graph;
  ResultTable table;
  table.section = "graph_kernels";
  table.title = fmt::format(
      "Graph replays: {} of {} launch{} charged to the operators that captured them ({} "
      "kernels, {:.3f} ms of device time)",
      g.matched, g.launches, g.launches == 1 ? "" : "es", g.kernels, g.kernel_ns / 1e6);
  table.columns = {
      {"trace", "Trace", 0, false},
      {"operator", "Operator (at capture)"},
      {.key = "kernels", .header = "Kernels", .unit = Unit::kCount},
      {.key = "device_ns", .header = "Device time", .precision = 3, .unit = Unit::kTime},
      {.key = "share_pct", .header = "% of replayed", .precision = 1, .unit = Unit::kPercent}};
  for (const auto& o : g.operators) {
    table.AddRow({t.path, o.name, o.kernels, o.ns,
                  g.kernel_ns > 0 ? Value{100.0 * o.ns / g.kernel_ns} : Value{}});
  }
  table.notes.push_back(fmt::format(
      "Capture trace {}: {} capture window{}. A replay whose kernels are as many as the launches "
      "of a capture window takes them in order (the i-th kernel it ran, on one stream, is the "
      "i-th launch captured), each charged to the innermost framework operator around its "
      "launch.",
      g.capture, g.captures, g.captures == 1 ? "" : "s"));
  for (size_t i = 0; i < g.unmatched.size() && i < 3; ++i) {
    table.notes.push_back("Not charged: " + g.unmatched[i]);
  }
  if (g.unmatched.size() > 3) {
    table.notes.push_back(fmt::format("{} more launches not charged", g.unmatched.size() - 3));
  }
  tables.push_back(std::move(table));
}

// Several ranks of one job: step time per rank, the slow one, overlap.
void AddRanks(const analyze::RankComparison& c, std::vector<ResultTable>& tables) {
  ResultTable table;
  table.section = "ranks";
  table.title =
      c.slow_rank < 0 ? std::string("Ranks")
      : c.slow_pct < 1
          ? std::string("Ranks: mean step times agree within 1%")
          : fmt::format("Ranks: rank {} is the slowest, {:.1f}% above the median rank's step time",
                        c.slow_rank, c.slow_pct);
  table.columns = {
      {"rank", "Rank"},
      {"trace", "Trace"},
      {"steps", "Complete steps"},
      {.key = "mean_step_ns", .header = "Mean complete step", .precision = 3, .unit = Unit::kTime},
      {.key = "compute_ns", .header = "Compute", .precision = 3, .unit = Unit::kTime},
      {.key = "communication_ns", .header = "Comm", .precision = 3, .unit = Unit::kTime},
      {.key = "overlap_pct",
       .header = "Comm overlapped %",
       .precision = 1,
       .unit = Unit::kPercent}};
  bool summaries_only = false;
  for (const auto& r : c.ranks) {
    if (!r.timeline) {  // its figures are in the tables of the producer's summaries
      summaries_only = true;
      table.AddRow({int64_t{r.rank}, r.path, Value{}, Value{}, Value{}, Value{}, Value{}});
      continue;
    }
    table.AddRow(
        {int64_t{r.rank}, r.path, r.steps, r.mean_step_ns, r.compute_ns, r.communication_ns,
         r.communication_ns > 0 ? Value{100.0 * r.overlap_ns / r.communication_ns} : Value{}});
  }
  table.notes.push_back(
      "Comm overlapped %: communication kernel time during which compute kernels also ran.");
  if (summaries_only) {
    table.notes.push_back(
        "n/a: a rank that left no timeline, only its producer's summaries (step breakdown, "
        "communication records): its steps and communication are in the tables of those.");
  }
  if (c.slow_pct >= 10) {
    table.notes.push_back(
        fmt::format("warning: rank {} is {:.1f}% slower than the median: compare its data loading, "
                    "host load and "
                    "inputs; the others wait for it at every collective.",
                    c.slow_rank, c.slow_pct));
  }
  tables.push_back(std::move(table));
}

// The ranks whose late arrival at collectives kept the others waiting, and
// what made each late (analyze/late_arrivals.h).
void AddLateArrivals(const analyze::LateArrivals& late, std::vector<ResultTable>& tables) {
  const analyze::LateRank& top = late.ranks.front();
  ResultTable table;
  table.section = "late_ranks";
  const int64_t extra = top.lead_ns - top.others_lead_ns;
  table.title = fmt::format(
      "Collectives: rank {} arrives last at {} of {} calls (late by a median {:.3f} ms), making "
      "the others wait {:.3f} ms ({:.1f}% of all their waiting){}",
      top.rank, top.late_calls, top.calls, top.median_gap_ns / 1e6, top.caused_wait_ns / 1e6,
      top.share_pct,
      top.measured == 0 || extra <= 0
          ? std::string()
          : fmt::format(
                "; before those calls it takes {:.3f} ms more than the others since the previous "
                "call, {}",
                extra / 1e6,
                top.compute_made_late
                    ? fmt::format("{:.3f} ms more of it computing: its own kernels make it late",
                                  (top.compute_ns - top.others_compute_ns) / 1e6)
                    : "mostly with its device idle: its host (data loading, launches, a pause) "
                      "makes it late"));
  table.columns = {
      {"rank", "Rank"},
      {.key = "late_calls", .header = "Late calls", .unit = Unit::kCount},
      {.key = "calls", .header = "Calls", .unit = Unit::kCount},
      {.key = "median_gap_ns", .header = "Median lateness", .precision = 3, .unit = Unit::kTime},
      {.key = "caused_wait_ns", .header = "Others' wait", .precision = 3, .unit = Unit::kTime},
      {.key = "share_pct", .header = "% of wait", .precision = 1, .unit = Unit::kPercent},
      {.key = "lead_ns", .header = "Lead-in", .precision = 3, .unit = Unit::kTime},
      {.key = "others_lead_ns", .header = "Others' lead-in", .precision = 3, .unit = Unit::kTime},
      {.key = "compute_ns", .header = "Compute in it", .precision = 3, .unit = Unit::kTime},
      {.key = "others_compute_ns",
       .header = "Others' compute",
       .precision = 3,
       .unit = Unit::kTime},
      {"made_late_by", "Made late by"}};
  for (const analyze::LateRank& r : late.ranks) {
    const bool measured = r.measured > 0;
    table.AddRow(
        {int64_t{r.rank}, r.late_calls, r.calls, r.median_gap_ns, r.caused_wait_ns, r.share_pct,
         measured ? Value{r.lead_ns} : Value{}, measured ? Value{r.others_lead_ns} : Value{},
         measured ? Value{r.compute_ns} : Value{}, measured ? Value{r.others_compute_ns} : Value{},
         !measured             ? std::string()
         : r.compute_made_late ? std::string("its compute")
                               : std::string("its idle device (host)")});
  }
  table.notes.push_back(fmt::format(
      "Calls are matched across ranks by process group and sequence number; a call ends on "
      "every rank at once, so the rank that arrived last has the shortest one (clocks are never "
      "compared across ranks). A call is late from {:.3f} ms after the rank before it. Lead-in: "
      "from the end of the group's previous call to this one's start, on each rank's own clock, "
      "averaged over the late calls; compute: its compute kernels' time in it.",
      late.threshold_ns / 1e6));
  tables.push_back(std::move(table));
}

// The advisor's findings of one trace.
void AddFindings(const analyze::AnalyzedTrace& t, std::vector<ResultTable>& tables) {
  const std::string& path = t.path;
  const auto& findings = t.findings;
  ResultTable advice;
  advice.section = "findings";
  advice.title = fmt::format("{} ({}): {} complete events on {} tracks; {} findings", path,
                             t.format, t.events, t.tracks, findings.size());
  advice.columns = {{"trace", "Trace", 0, false},
                    {"number", "#"},
                    {"severity", "Severity"},
                    {"id", "Finding", 0, false},
                    {"title", "What"},
                    {.key = "saving_ns", .header = "Saves", .unit = core::Unit::kTime},
                    {"evidence", "Evidence", 0, false},
                    {"action", "Recommended action", 0, false}};
  for (size_t i = 0; i < findings.size(); ++i) {
    const auto& f = findings[i];
    advice.AddRow({path, static_cast<int64_t>(i + 1), std::string(analyze::Name(f.severity)), f.id,
                   f.title, f.saving_ns >= 0 ? core::Value{f.saving_ns} : core::Value{}, f.evidence,
                   f.action});
    // On a terminal the long columns read better as lines under the table.
    advice.notes.push_back(fmt::format("{}. evidence: {}", i + 1, f.evidence));
    advice.notes.push_back(fmt::format("   action:   {}", f.action));
  }
  tables.push_back(std::move(advice));
}

}  // namespace

std::vector<ResultTable> AnalysisTables(const analyze::AnalyzedSet& set,
                                        const AnalysisTableOptions& options) {
  std::vector<ResultTable> tables;
  for (const analyze::AnalyzedTrace& t : set.traces) {
    AddFindings(t, tables);
    // The tables each pass that ran brings with it (passes/pass.h).
    const analyze::TableContext context{t.path, options.top, t.format,
                                        static_cast<int64_t>(t.events), t.rank};
    for (const analyze::Pass& pass : analyze::Passes()) {
      if (pass.tables != nullptr && t.analysis.Ran(pass.name)) {
        pass.tables(t.analysis, context, tables);
      }
    }
    AddReportedTables(t, options, tables);
    AddGraphKernels(t, tables);
  }
  if (set.ranks) AddRanks(*set.ranks, tables);
  if (set.late && !set.late->ranks.empty()) AddLateArrivals(*set.late, tables);
  AddReportedRankTables(set, options, tables);
  if (!set.unused.empty()) {
    ResultTable table;
    table.section = "unused_files";
    table.title = fmt::format("Files found and not read ({})", set.unused.size());
    table.columns = {{"file", "File"}, {"reason", "Why"}};
    for (const auto& u : set.unused) table.AddRow({u.path, u.reason});
    tables.push_back(std::move(table));
  }
  return tables;
}

}  // namespace opscope::report
