#include "report/analysis_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

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

// A job of more traces than this is shown as a cluster where rows are cut
// (the terminal, analysis.html): the job's tables, the findings counted
// across its ranks, and the tables of a few ranks (kRanksShown: the first,
// and the ranks the job's tables name slow or late).
constexpr size_t kClusterTraces = 16, kRanksShown = 3;

// The traces whose own tables a cluster view shows, by index.
std::vector<size_t> RanksShown(const analyze::AnalyzedSet& set) {
  std::vector<int> named;
  if (set.step_ranks && set.step_ranks->slow_rank >= 0) named.push_back(set.step_ranks->slow_rank);
  if (set.ranks && set.ranks->slow_rank >= 0) named.push_back(set.ranks->slow_rank);
  if (set.late && !set.late->ranks.empty()) named.push_back(set.late->ranks.front().rank);
  std::vector<size_t> shown = {0};
  for (const int rank : named) {
    for (size_t i = 0; i < set.traces.size() && shown.size() < kRanksShown; ++i) {
      if (set.traces[i].rank == rank && std::find(shown.begin(), shown.end(), i) == shown.end()) {
        shown.push_back(i);
      }
    }
  }
  for (size_t i = 1; i < set.traces.size() && shown.size() < kRanksShown; ++i) {
    if (std::find(shown.begin(), shown.end(), i) == shown.end()) shown.push_back(i);
  }
  std::sort(shown.begin(), shown.end());
  return shown;
}

// Each finding (by id and severity) with the number of ranks it holds on,
// the largest saving and the rank it is on.
void AddFindingsAcrossRanks(const analyze::AnalyzedSet& set, const std::vector<size_t>& shown,
                            std::vector<ResultTable>& tables) {
  struct Across {
    std::string severity, id, title;
    int64_t ranks = 0, saving_ns = -1;
    int rank = -1;
    int order = 0;  // the severity's rank: critical first
  };
  std::map<std::pair<std::string, std::string>, Across> by;
  for (const analyze::AnalyzedTrace& t : set.traces) {
    std::set<std::pair<std::string, std::string>> seen;
    for (const analyze::Finding& f : t.findings) {
      const std::string severity(analyze::Name(f.severity));
      Across& a = by[{severity, f.id}];
      if (a.ranks == 0 || f.saving_ns > a.saving_ns) {
        a.severity = severity, a.id = f.id, a.title = f.title, a.rank = t.rank;
        a.saving_ns = std::max(a.saving_ns, f.saving_ns);
        a.order = static_cast<int>(f.severity);
      }
      if (seen.insert({severity, f.id}).second) ++a.ranks;
    }
  }
  std::vector<Across> rows;
  for (auto& [key, a] : by) rows.push_back(std::move(a));
  std::stable_sort(rows.begin(), rows.end(), [](const Across& x, const Across& y) {
    if (x.order != y.order) return x.order > y.order;
    if (x.ranks != y.ranks) return x.ranks > y.ranks;
    return x.saving_ns > y.saving_ns;
  });
  ResultTable table;
  table.section = "findings_across_ranks";
  table.title = fmt::format("Findings across the job's {} traces", set.traces.size());
  table.columns = {{"severity", "Severity"},
                   {"id", "Finding"},
                   {"ranks", "Traces"},
                   {"rank", "Largest on rank"},
                   {.key = "saving_ns", .header = "Saves there", .unit = core::Unit::kTime},
                   {"title", "What (there)"}};
  for (const Across& a : rows) {
    table.AddRow({a.severity, a.id, a.ranks, static_cast<int64_t>(a.rank),
                  a.saving_ns >= 0 ? core::Value{a.saving_ns} : core::Value{}, a.title});
  }
  std::string ranks;
  for (const size_t i : shown) {
    ranks += fmt::format("{}{}", ranks.empty() ? "" : ", ", set.traces[i].rank);
  }
  table.notes.push_back(fmt::format(
      "Each finding by severity, with how many of the traces hold it and the one where it "
      "saves most. Below are the tables of ranks {} (the first, and those the job's tables "
      "name slow or late) of {}: analysis.json and tables/*.csv hold every rank's, and --top 0 "
      "prints them all.",
      ranks, set.traces.size()));
  tables.push_back(std::move(table));
}

// "0, 1, 2, 3, 5" as "0-3, 5".
std::string RankRanges(const std::string& list) {
  std::vector<int64_t> ranks;
  for (size_t at = 0; at < list.size();) {
    const size_t comma = list.find(',', at);
    const std::string item = list.substr(at, comma == std::string::npos ? comma : comma - at);
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (end == item.c_str()) return list;  // not a list of ranks: as it is
    ranks.push_back(v);
    at = comma == std::string::npos ? list.size() : comma + 1;
  }
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += fmt::format("{}{}", out.empty() ? "" : ", ", ranks[i]);
    if (j >= i + 2) {
      out += fmt::format("-{}", ranks[j]);
    } else if (j == i + 1) {
      out += fmt::format(", {}", ranks[j]);
    }
    i = j + 1;
  }
  return out;
}

// The cluster view of the tables built for a job's traces (see
// kClusterTraces): each trace's own tables only for the traces shown; the
// tables of one row per rank cut to the `top` ranks that matter most (the
// slowest, the one the others wait for), the others counted in a note; the
// stages' rank lists as ranges.
void ShowAsCluster(const analyze::AnalyzedSet& set, const std::vector<size_t>& shown,
                   const AnalysisTableOptions& options, std::vector<ResultTable>& tables) {
  std::set<std::string> paths;
  std::set<int64_t> ranks;
  for (const size_t i : shown) paths.insert(set.traces[i].path), ranks.insert(set.traces[i].rank);
  // One row per rank, and the column that orders them (most first).
  const std::map<std::string, std::string> per_rank = {
      {"ranks", "mean_step_ns"},
      {"reported_step_ranks", "step_ns"},
      {"reported_communication", "others_waited_ns"}};
  const auto column = [](const ResultTable& t, std::string_view key) {
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (t.columns[c].key == key) return c;
    }
    return SIZE_MAX;
  };
  const auto number = [](const core::Value& v) {
    if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&v)) return *d;
    return -std::numeric_limits<double>::infinity();
  };
  std::vector<ResultTable> kept;
  for (ResultTable& t : tables) {
    if (const auto it = per_rank.find(t.section); it != per_rank.end()) {
      const size_t by = column(t, it->second);
      const size_t n = t.rows.size();
      if (by != SIZE_MAX && n > static_cast<size_t>(options.top)) {
        std::stable_sort(t.rows.begin(), t.rows.end(), [&](const auto& a, const auto& b) {
          return number(a[by]) > number(b[by]);
        });
        t.rows.resize(static_cast<size_t>(options.top));
        t.notes.push_back(fmt::format(
            "The {} of {} ranks with the most {}; analysis.json and tables/{}.csv list every "
            "rank.",
            options.top, n, t.columns[by].header, t.section));
      }
      kept.push_back(std::move(t));
      continue;
    }
    if (t.section == "reported_stages") {
      if (const size_t c = column(t, "ranks"); c != SIZE_MAX) {
        for (auto& row : t.rows) {
          if (const auto* list = std::get_if<std::string>(&row[c])) row[c] = RankRanges(*list);
        }
      }
      kept.push_back(std::move(t));
      continue;
    }
    // A trace's own table: its rows of the traces shown.
    const size_t trace = column(t, "trace"), rank = column(t, "rank");
    // (The job's own tables, whose rows are already its slowest links or
    // latest ranks, stay as they are.)
    static const std::set<std::string_view> job = {"findings_across_ranks", "late_ranks",
                                                   "unused_files", "reported_links"};
    if (job.count(t.section) == 0 && (trace != SIZE_MAX || rank != SIZE_MAX)) {
      std::erase_if(t.rows, [&](const auto& row) {
        if (trace != SIZE_MAX) {
          const auto* p = std::get_if<std::string>(&row[trace]);
          return p == nullptr || paths.count(*p) == 0;
        }
        const auto* r = std::get_if<int64_t>(&row[rank]);
        return r == nullptr || ranks.count(*r) == 0;
      });
      if (t.rows.empty()) continue;
    }
    kept.push_back(std::move(t));
  }
  tables = std::move(kept);
}

}  // namespace

std::vector<ResultTable> AnalysisTables(const analyze::AnalyzedSet& set,
                                        const AnalysisTableOptions& options) {
  std::vector<ResultTable> tables;
  const bool cluster = options.top > 0 && set.traces.size() > kClusterTraces;
  const std::vector<size_t> shown = cluster ? RanksShown(set) : std::vector<size_t>{};
  if (cluster) AddFindingsAcrossRanks(set, shown, tables);
  for (size_t i = 0; i < set.traces.size(); ++i) {
    if (cluster && std::find(shown.begin(), shown.end(), i) == shown.end()) continue;
    const analyze::AnalyzedTrace& t = set.traces[i];
    const size_t first = tables.size();
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
    // A file of an unpacked archive: its tables name the archive's paths,
    // never the scratch folder's.
    if (!t.read_from.empty()) {
      const auto reword = [&](std::string& text) {
        text = analyze::TraceInput::Reworded(std::move(text), t.read_from, t.path);
      };
      for (size_t k = first; k < tables.size(); ++k) {
        reword(tables[k].title);
        for (std::string& note : tables[k].notes) reword(note);
        for (auto& row : tables[k].rows) {
          for (core::Value& v : row) {
            if (auto* text = std::get_if<std::string>(&v)) reword(*text);
          }
        }
      }
    }
  }
  if (set.ranks) AddRanks(*set.ranks, tables);
  if (set.late && !set.late->ranks.empty()) AddLateArrivals(*set.late, tables);
  AddReportedRankTables(set, options, tables);
  if (!set.unused.empty()) {
    ResultTable table;
    table.section = "unused_files";
    table.title = fmt::format("Files found and not read ({})", set.unused.size());
    table.columns = {{"file", "File"}, {"reason", "Why"}};
    if (cluster) {
      // One row per reason, with the first file and how many more share it.
      std::map<std::string, std::pair<std::string, int64_t>> by_reason;
      std::vector<std::string> order;
      for (const auto& u : set.unused) {
        auto [it, fresh] = by_reason.try_emplace(u.reason, u.path, 0);
        if (fresh) order.push_back(u.reason);
        ++it->second.second;
      }
      for (const std::string& reason : order) {
        const auto& [path, n] = by_reason[reason];
        table.AddRow({n == 1 ? path : fmt::format("{} and {} more", path, n - 1), reason});
      }
      table.notes.push_back(
          "Files that share a reason are one row; analysis.json and "
          "tables/unused_files.csv list each.");
    } else {
      for (const auto& u : set.unused) table.AddRow({u.path, u.reason});
    }
    tables.push_back(std::move(table));
  }
  if (cluster) ShowAsCluster(set, shown, options, tables);
  return tables;
}

}  // namespace opscope::report
