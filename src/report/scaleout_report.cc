#include "report/scaleout_report.h"

#include <fmt/format.h>

#include <sstream>

#include "analyze/median.h"
#include "core/output.h"
#include "core/text.h"
#include "opscope/opscope.h"
#include "report/charts.h"
#include "report/html_page.h"

namespace opscope::report {
namespace {

using analyze::ScaleOutResult;
using core::EscapeHtml;

Value Ns(int64_t v) { return v < 0 ? Value{} : Value{v}; }
Value Pct(int64_t part, int64_t whole) {
  return whole > 0 ? Value{100.0 * static_cast<double>(part) / static_cast<double>(whole)}
                   : Value{};
}

std::string FormatNs(int64_t ns) { return HumanDuration(static_cast<double>(ns)); }

ResultTable Findings(const ScaleOutResult& r) {
  ResultTable t;
  t.section = "scaleout_findings";
  t.title = "Findings";
  t.columns = {{"severity", "Severity"},
               {"rule", "Rule"},
               {"title", "Finding"},
               {"evidence", "Evidence"},
               {"action", "What to do"}};
  for (const analyze::Straggler& s : r.stragglers) {
    std::string calls;
    for (const auto& [group, seq] : s.calls) {
      calls += (calls.empty() ? "" : ", ") + ("#" + std::to_string(seq)) +
               (group.empty() ? std::string() : " in group " + group);
    }
    if (s.late_calls > static_cast<int64_t>(s.calls.size())) calls += ", …";
    t.AddRow({std::string("warning"), std::string("straggler"),
              fmt::format("Rank {} arrives last at {} of {} collective calls and the other ranks "
                          "wait for it",
                          s.rank, s.late_calls, s.calls_total),
              fmt::format("At those calls ({}) rank {}'s call was the shortest, by a median of "
                          "{} below the next: it arrived last, that much after the rank "
                          "before it. The other ranks waited {} in all for it, {:.1f}% of all "
                          "waiting in collectives across the job.",
                          calls, s.rank, FormatNs(s.median_delay_ns), FormatNs(s.caused_wait_ns),
                          s.share_pct),
              fmt::format("Look at what rank {} runs before those calls (its row in the ranks "
                          "table: compute, idle and memory time per step; its data loading and "
                          "host threads), and compare its trace with a fast rank's over the same "
                          "steps.",
                          s.rank)});
  }
  if (r.slow_rank >= 0 && r.slow_pct >= 5) {
    t.AddRow({std::string(r.slow_pct >= 10 ? "warning" : "info"), std::string("slow_rank"),
              fmt::format("Rank {}'s complete steps are {:.1f}% longer than the median rank's",
                          r.slow_rank, r.slow_pct),
              r.slow_component.empty()
                  ? std::string("No step component of it exceeds the median rank's.")
                  : fmt::format("Its mean {} time per step exceeds the median rank's by {}, the "
                                "most of the step's components (compute, communication, memory, "
                                "idle).",
                                r.slow_component, FormatNs(r.slow_component_excess_ns)),
              r.slow_component == "communication"
                  ? std::string("Communication time on a slow rank is often waiting for another "
                                "rank: see the collectives table for who arrives last.")
              : r.slow_component == "idle"
                  ? std::string("Idle device time points at the host: data loading, launch "
                                "overhead or synchronisation on that rank.")
                  : std::string("Compare the rank's operators with another rank's (opscope "
                                "diff on the two traces).")});
  }
  if (t.rows.empty()) {
    t.notes.push_back("No rank keeps the others waiting and no rank's steps stand out.");
  }
  return t;
}

ResultTable Ranks(const ScaleOutResult& r) {
  ResultTable t;
  t.section = "scaleout_ranks";
  t.title = "Ranks";
  t.columns = {
      {"rank", "Rank"},
      {"trace", "Trace", 2, false},
      {"steps", "Complete steps"},
      {.key = "mean_step_ns", .header = "Mean step", .unit = Unit::kTime},
      {.key = "step_compute_ns", .header = "Compute/step", .unit = Unit::kTime},
      {.key = "step_communication_ns", .header = "Comm/step", .unit = Unit::kTime},
      {.key = "step_memory_ns",
       .header = "Memory/step",
       .precision = 2,
       .terminal = false,
       .unit = Unit::kTime},
      {.key = "step_idle_ns", .header = "Idle/step", .unit = Unit::kTime},
      {.key = "compute_ns",
       .header = "Compute",
       .precision = 2,
       .terminal = false,
       .unit = Unit::kTime},
      {.key = "communication_ns",
       .header = "Comm",
       .precision = 2,
       .terminal = false,
       .unit = Unit::kTime},
      {.key = "overlap_pct", .header = "Comm overlapped %", .precision = 1, .unit = Unit::kPercent},
      {"collectives", "Collective calls", 2, false},
      {.key = "wait_ns", .header = "Waiting in collectives", .unit = Unit::kTime},
      {"last_arrivals", "Arrived last"},
      {.key = "caused_wait_ns", .header = "Others' wait caused", .unit = Unit::kTime}};
  for (const analyze::MergedRank& m : r.ranks) {
    t.AddRow({int64_t{m.rank}, m.path, m.steps_complete, Ns(m.mean_step_ns), Ns(m.step_compute_ns),
              Ns(m.step_communication_ns), Ns(m.step_memory_ns), Ns(m.step_idle_ns), m.compute_ns,
              m.communication_ns, Pct(m.overlap_ns, m.communication_ns), m.collectives, m.wait_ns,
              m.last_arrivals, m.caused_wait_ns});
  }
  t.notes.push_back(fmt::format(
      "Per step: means over the rank's complete steps. Waiting: at each collective call, the "
      "rank's time beyond the call's fastest rank (that rank arrived last). Arrived last: calls at "
      "which it arrived at least {} after the rank before it (20 µs, and three times the median "
      "spread of the other ranks' arrivals); others' wait caused: that lateness times the "
      "other ranks.",
      FormatNs(r.late_threshold_ns)));
  return t;
}

ResultTable Steps(const ScaleOutResult& r) {
  ResultTable t;
  t.section = "scaleout_steps";
  t.title = "Steps across ranks";
  t.columns = {{"step", "Step"},
               {"ranks", "Ranks"},
               {.key = "median_ns", .header = "Median", .unit = Unit::kTime},
               {.key = "max_ns", .header = "Longest", .unit = Unit::kTime},
               {"slowest_rank", "Slowest rank"},
               {.key = "spread_pct",
                .header = "Longest over median %",
                .precision = 1,
                .unit = Unit::kPercent}};
  for (size_t s = 0; s < r.step_numbers.size(); ++s) {
    std::vector<int64_t> values;
    int slowest = -1;
    int64_t longest = -1;
    for (size_t k = 0; k < r.ranks.size(); ++k) {
      const int64_t v = r.step_ns[k][s];
      if (v < 0) continue;
      values.push_back(v);
      if (v > longest) longest = v, slowest = r.ranks[k].rank;
    }
    const auto n = static_cast<int64_t>(values.size());
    const int64_t median = analyze::IntegerMedian(std::move(values));
    t.AddRow(
        {r.step_numbers[s], n, median, longest, int64_t{slowest}, Pct(longest - median, median)});
  }
  return t;
}

ResultTable StepGrid(const ScaleOutResult& r) {
  ResultTable t;
  t.section = "scaleout_step_grid";
  t.title = "Step time per rank and step";
  t.columns = {{"rank", "Rank"},
               {"step", "Step"},
               {.key = "duration_ns", .header = "Duration", .unit = Unit::kTime},
               {"status", "Status"}};
  for (size_t k = 0; k < r.ranks.size(); ++k) {
    for (size_t s = 0; s < r.step_numbers.size(); ++s) {
      if (r.step_ns[k][s] < 0) continue;
      t.AddRow({int64_t{r.ranks[k].rank}, r.step_numbers[s], r.step_ns[k][s], r.step_status[k][s]});
    }
  }
  return t;
}

ResultTable Collectives(const ScaleOutResult& r, int top) {
  ResultTable t;
  t.section = "scaleout_collectives";
  t.title = "Collective calls, the most waiting first";
  t.columns = {{"group", "Group"},
               {"seq", "Seq"},
               {"op", "Op"},
               {.key = "bytes", .header = "Bytes", .unit = Unit::kBytes},
               {"ranks", "Ranks"},
               {.key = "fastest_ns", .header = "Fastest (transfer)", .unit = Unit::kTime},
               {.key = "slowest_ns", .header = "Slowest", .unit = Unit::kTime},
               {.key = "skew_ns", .header = "Arrival skew", .unit = Unit::kTime},
               {.key = "gap_ns", .header = "Last's lateness", .unit = Unit::kTime},
               {.key = "wait_ns", .header = "Others' wait", .unit = Unit::kTime},
               {"last_rank", "Last to arrive"}};
  std::vector<const analyze::MergedCollective*> order;
  for (const auto& c : r.collectives) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->wait_ns > b->wait_ns; });
  if (top > 0 && order.size() > static_cast<size_t>(top)) {
    t.notes.push_back(
        fmt::format("{} of {} calls shown; every call is in merge.json and "
                    "tables/scaleout_collectives.csv.",
                    top, order.size()));
    order.resize(static_cast<size_t>(top));
  }
  for (const auto* c : order) {
    t.AddRow({c->group.empty() ? std::string("(default)") : c->group, c->seq,
              c->op + (c->op_differs ? " (differs)" : ""), c->bytes < 0 ? Value{} : Value{c->bytes},
              int64_t{c->ranks}, c->min_ns, c->max_ns, c->skew_ns, c->gap_ns, c->wait_ns,
              int64_t{c->last_rank}});
  }
  t.notes.push_back(
      "A call ends on every rank at about the same time, so the rank that arrived last has the "
      "shortest call; the others' extra time is waiting. Clocks are not compared across ranks.");
  for (const std::string& n : r.notes) t.notes.push_back(n);
  return t;
}

ResultTable Operators(const ScaleOutResult& r, int top) {
  ResultTable t;
  t.section = "scaleout_operators";
  t.title = "Operators over all ranks, the most time first";
  t.columns = {{"name", "Operator"},
               {"class", "Class"},
               {"ranks", "Ranks"},
               {.key = "count", .header = "Calls", .unit = Unit::kCount},
               {.key = "total_ns", .header = "Total", .unit = Unit::kTime},
               {.key = "self_ns", .header = "Self", .unit = Unit::kTime},
               {.key = "mean_ns", .header = "Mean", .unit = Unit::kTime},
               {.key = "p50_ns", .header = "p50", .unit = Unit::kTime},
               {.key = "p99_ns", .header = "p99", .unit = Unit::kTime},
               {.key = "max_ns", .header = "Max", .unit = Unit::kTime},
               {"folded", "Folded names", 2, false}};
  size_t n = r.operators.size();
  if (top > 0 && n > static_cast<size_t>(top)) {
    t.notes.push_back(fmt::format("{} of {} operators shown.", top, n));
    n = static_cast<size_t>(top);
  }
  for (size_t i = 0; i < n; ++i) {
    const analyze::MergedOperator& o = r.operators[i];
    t.AddRow({o.name, std::string(analyze::Name(o.cls)), int64_t{o.ranks}, o.count, o.total_ns,
              o.self_ns, o.count > 0 ? Value{o.total_ns / o.count} : Value{},
              o.durations.Quantile(0.5), o.durations.Quantile(0.99), o.durations.max(), o.folded});
  }
  t.notes.push_back(
      "p50 and p99 come from mergeable sketches: within 1% (and half a nanosecond) of the exact "
      "nearest-rank value over all ranks' calls; count, total, self and max are exact.");
  return t;
}

}  // namespace

ScaleOutTables MakeScaleOutTables(const ScaleOutResult& r, int top) {
  ScaleOutTables out;
  out.terminal = {Findings(r), Ranks(r), Steps(r), Collectives(r, top), Operators(r, top)};
  out.all = {Findings(r), Ranks(r), Steps(r), StepGrid(r), Collectives(r, 0), Operators(r, 0)};
  return out;
}

std::string ScaleOutHtml(const ScaleOutResult& r, const ScaleOutTables& tables) {
  std::string h = PageHead("opscope scale-out analysis") +
                  "<h1>opscope scale-out analysis</h1>\n<p>opscope " + OPSCOPE_VERSION_STRING +
                  fmt::format(", {} ranks</p>\n", r.ranks.size());
  const ResultTable& findings = tables.all.front();
  h += TableHtml(findings, {.anchor = "findings"});
  Heatmap map;
  map.unit = "ms";
  for (const int64_t s : r.step_numbers) map.columns.push_back("step " + std::to_string(s));
  for (size_t k = 0; k < r.ranks.size(); ++k) {
    map.rows.push_back("rank " + std::to_string(r.ranks[k].rank));
    std::vector<double> row;
    for (const int64_t v : r.step_ns[k]) row.push_back(v < 0 ? -1.0 : static_cast<double>(v) / 1e6);
    map.values.push_back(std::move(row));
  }
  h += "<h2 id=\"heatmap\">Step time per rank and step</h2>\n" + HeatmapSvg(map) + "\n";
  for (size_t i = 1; i < tables.terminal.size(); ++i) {
    h += TableHtml(tables.terminal[i], {.anchor = tables.terminal[i].section});
  }
  return h + PageEnd();
}

void WriteScaleOutReport(const std::filesystem::path& dir, const ScaleOutResult& result,
                         const ScaleOutTables& tables) {
  core::RefuseInputAsOutput(dir);  // a folder of the summaries it merges
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorCode::kIo, "cannot create '" + dir.string() + "': " + ec.message());
  const auto write = [&](const std::string& name, std::string text) {
    core::AtomicFileOutput file(dir / name, false);
    file.buffer() = std::move(text);
    file.Commit();
  };
  std::vector<const ResultTable*> all;
  for (const ResultTable& table : tables.all) all.push_back(&table);
  std::vector<std::pair<std::string, std::string>> csv;
  for (const CsvFile& file : SplitCsvFiles(all))
    csv.emplace_back(file.name, TablesCsv(file.tables));
  core::WriteFolderWhole(dir / "tables", csv);
  std::ostringstream json;
  WriteJson(json, "merge", tables.all);
  write("merge.json", json.str());
  write("merge.html", ScaleOutHtml(result, tables));
}

}  // namespace opscope::report
