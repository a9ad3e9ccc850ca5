#include "report/analysis_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "analyze/passes/roofline.h"
#include "core/output.h"
#include "core/text.h"
#include "opscope/opscope.h"
#include "report/charts.h"
#include "report/html_page.h"
#include "report/timeline_html.h"

namespace opscope::report {
namespace {

using core::EscapeCsvField;
using core::EscapeHtml;

// Log-log roofline: FLOP/s against FLOP/byte, a labelled ceiling per dtype and
// the memory slope, a dot per operator, the ones with the most time labelled.
std::string RooflinePlot(const analyze::Analysis& a) {
  static const std::vector<analyze::OpRoofline> kNone;
  const auto* found = a.results.Get<std::vector<analyze::OpRoofline>>(analyze::kRooflinePass);
  const std::vector<analyze::OpRoofline>& roofline = found ? *found : kNone;
  if (roofline.empty()) return "<p>No operator with known FLOPs.</p>";
  XyChart c;
  c.x = {"arithmetic intensity (FLOP/byte)", true, TickStyle::kPlain};
  c.y = {"achieved (FLOP/s)", true, TickStyle::kSi};
  Series ops{"operators", {}, false};
  double x_lo = 1e300, x_hi = 0;
  std::vector<const analyze::OpRoofline*> rated;
  for (const auto& r : roofline) {
    if (r.intensity <= 0 || r.achieved <= 0) continue;
    ops.points.emplace_back(r.intensity, r.achieved);
    x_lo = std::min(x_lo, r.intensity), x_hi = std::max(x_hi, r.intensity);
    rated.push_back(&r);
  }
  if (rated.empty()) return "<p>No operator with both FLOPs and bytes known.</p>";
  if (a.ceilings && a.ceilings->bytes_per_second > 0) {
    const double bw = a.ceilings->bytes_per_second;
    double ridge_max = 0;
    for (const auto& [dtype, f] : a.ceilings->flops_per_second) {
      ridge_max = std::max(ridge_max, f / bw);
    }
    x_lo = std::min(x_lo, ridge_max / 1e3) / 10, x_hi = std::max(x_hi, ridge_max) * 10;
    for (const auto& [dtype, f] : a.ceilings->flops_per_second) {
      c.series.push_back({fmt::format("{} peak {} FLOP/s", dtype, TickLabel(f, TickStyle::kSi)),
                          {{f / bw, f}, {x_hi, f}}});
    }
    c.series.push_back({fmt::format("memory {}B/s", TickLabel(bw, TickStyle::kSi)),
                        {{x_lo, x_lo * bw}, {ridge_max, ridge_max * bw}}});
  }
  c.series.push_back(std::move(ops));
  std::stable_sort(rated.begin(), rated.end(),
                   [](const auto* x, const auto* y) { return x->time_ns > y->time_ns; });
  for (size_t i = 0; i < rated.size(); ++i) {
    const auto& r = *rated[i];
    c.points.push_back({r.intensity, r.achieved, i < 8 ? r.name : "",
                        fmt::format("{}: {:.2f} FLOP/byte, {} FLOP/s, {:.3f} ms, {}", r.name,
                                    r.intensity, TickLabel(r.achieved, TickStyle::kSi),
                                    r.time_ns / 1e6, r.bound.empty() ? "no bound" : r.bound)});
  }
  return XySvg(c);
}

std::string Timeline(const analyze::DeviceBusy& busy) {
  if (!busy.has_device) return "<p>No device events: nothing to draw.</p>";
  const int width = 900, height = 120;
  const double slice = static_cast<double>(width) / static_cast<double>(busy.timeline_pct.size());
  std::string svg = fmt::format("<svg class=\"chart\" width=\"{}\" height=\"{}\" role=\"img\">",
                                width, height + 20);
  for (size_t i = 0; i < busy.timeline_pct.size(); ++i) {
    const double h = height * busy.timeline_pct[i] / 100.0;
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" class=\"bar\">"
        "<title>{:.1f}% busy</title></rect>",
        i * slice, height - h, std::max(slice - 1, 1.0), h, busy.timeline_pct[i]);
  }
  svg += fmt::format("<line x1=\"0\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" class=\"axis\"/>", height,
                     width);
  svg += fmt::format(
      "<text x=\"0\" y=\"{}\">0 ms</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.3f} "
      "ms</text>",
      height + 16, width, height + 16, (busy.window_end_ns - busy.window_begin_ns) / 1e6);
  return svg + "</svg>";
}

const std::vector<std::string> kStepKinds = {"compute", "communication", "memory", "idle"};

// A step's time in parts that do not overlap (steps.h), so the bar is as
// long as the step: compute, communication not overlapped by it, copies and
// sets overlapped by neither, idle. `steps` > 1: the mean of that many steps.
StackedRow StepRow(std::string label, const analyze::StepBreakdown& s, int64_t steps = 1) {
  const double per = 1e6 * static_cast<double>(std::max<int64_t>(steps, 1));
  return {std::move(label),
          {s.compute_ns / per, s.communication_exposed_ns / per, s.memory_exposed_ns / per,
           s.idle_ns / per}};
}

const char* kStepChartNote =
    "<p class=\"note\">Each bar is its step: compute, then communication that compute does "
    "not overlap, copies and sets that neither overlaps, then idle (the steps table's "
    "compute_ns, communication_exposed_ns, memory_exposed_ns and idle_ns).</p>";

std::string StepChart(const std::vector<analyze::StepBreakdown>& steps) {
  if (steps.empty()) return "<p>No ProfilerStep spans in this trace.</p>";
  std::vector<StackedRow> rows;
  for (const auto& s : steps) rows.push_back(StepRow(s.name + " (" + s.status + ")", s));
  return StackedSvg(rows, kStepKinds, "ms") + kStepChartNote;
}

// Each rank's mean complete step: where its step time goes (the ranks
// table's figures are per step too).
std::string RankStepChart(const std::vector<AnalyzedTrace>& traces) {
  std::vector<StackedRow> rows;
  for (const auto& t : traces) {
    analyze::StepBreakdown sum;
    int64_t complete = 0;
    for (const auto& s : t.analysis.steps) {
      if (s.status != "complete") continue;
      sum.compute_ns += s.compute_ns, sum.communication_exposed_ns += s.communication_exposed_ns;
      sum.memory_exposed_ns += s.memory_exposed_ns, sum.idle_ns += s.idle_ns, ++complete;
    }
    if (complete == 0) continue;
    rows.push_back(
        StepRow(fmt::format("rank {} (mean of {} steps)", t.rank, complete), sum, complete));
  }
  if (rows.empty()) return "<p>No rank has complete ProfilerStep spans.</p>";
  return StackedSvg(rows, kStepKinds, "ms") + kStepChartNote;
}

// The trace's mix: device time by class (kernels, copies, sets), each a share
// of device time, and host self time by class, each a share of host time.
std::string ClassShareChart(const analyze::Analysis& a) {
  std::map<std::string, double> device, host;
  double device_all = 0, host_all = 0;
  for (const auto& s : a.operators) {
    // Spans over work counted already: steps, derived lanes, and device-side
    // annotations (a range over kernels; it is no host time either).
    if (s.cls == analyze::EventClass::kStep || s.cls == analyze::EventClass::kDerived ||
        s.cls == analyze::EventClass::kDeviceAnnotation) {
      continue;
    }
    const bool on_device = analyze::IsDevice(s.cls);
    (on_device ? device : host)[analyze::Name(s.cls)] += static_cast<double>(s.self_ns);
    (on_device ? device_all : host_all) += static_cast<double>(s.self_ns);
  }
  std::vector<std::pair<std::string, double>> bars;
  for (const auto& [name, ns] : device) bars.emplace_back("device: " + name, 100 * ns / device_all);
  for (const auto& [name, ns] : host) bars.emplace_back("host: " + name, 100 * ns / host_all);
  if (bars.empty()) return "<p>No timed events.</p>";
  return BarSvg(bars, "%");
}

}  // namespace

std::string SummaryCsv(const std::vector<AnalyzedTrace>& traces) {
  std::string out =
      "Trace,Operator,Category,Count,Self_us,Total_us,Avg_us,P50_us,P99_us,Max_us,Share_pct,FLOPs,"
      "Bytes,"
      "Arithmetic_Intensity,Achieved_TFLOPS,Utilization_pct,Bound\n";
  for (const auto& t : traces) {
    std::map<std::string, const analyze::OpRoofline*> roofline;
    if (const auto* rated =
            t.analysis.results.Get<std::vector<analyze::OpRoofline>>(analyze::kRooflinePass)) {
      for (const auto& r : *rated) roofline[r.name] = &r;
    }
    for (const auto& s : t.analysis.operators) {
      const auto rl = roofline.find(s.name);
      const analyze::OpRoofline* r =
          rl != roofline.end() && s.cls != analyze::EventClass::kStep ? rl->second : nullptr;
      out +=
          EscapeCsvField(t.path) + "," + EscapeCsvField(s.name) + "," + analyze::Name(s.cls) + ",";
      out += fmt::format("{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},", s.count, s.self_ns / 1e3,
                         s.total_ns / 1e3, s.mean_ns / 1e3, s.p50_ns / 1e3, s.p99_ns / 1e3,
                         s.max_ns / 1e3);
      // Share_pct: of all operators' self time for framework operators, of
      // device time for device work; empty for spans and calls.
      out += s.share_pct >= 0 ? fmt::format("{:.2f},", s.share_pct) : std::string(",");
      if (r != nullptr) {
        out += fmt::format("{:.0f},{:.0f},", r->flops, r->bytes);
        out += r->bytes > 0 ? fmt::format("{:.3f}", r->intensity) : "";
        out += fmt::format(",{:.6f},", r->achieved / 1e12);
        out += r->pct_of_attainable >= 0 ? fmt::format("{:.1f}", r->pct_of_attainable) : "";
        out += "," + r->bound;
      } else {
        out += s.flops >= 0 ? std::to_string(s.flops) : "";
        out += ",";
        out += s.bytes >= 0 ? std::to_string(s.bytes) : "";
        out += ",,,,";
      }
      out += "\n";
    }
  }
  return out;
}

namespace {

// An id for an HTML anchor from a table's section and position.
std::string Anchor(const ResultTable& t, size_t index) {
  return fmt::format("t{}-{}", index, t.section);
}

// A trace's heading, findings and charts; its canvas timeline when
// `timeline` (the page's script draws it; a notebook fragment has none).
std::string TraceSectionHtml(const AnalyzedTrace& t, size_t i, bool timeline, size_t event_budget,
                             int bins) {
  std::string h;
  const auto& a = t.analysis;
  h += fmt::format("<h2 id=\"trace{}\">{} <small>(rank {}, {}, {} events)</small></h2>\n", i,
                   EscapeHtml(t.path), t.rank, EscapeHtml(t.format), t.events);
  h += "<h3>Findings</h3>\n";
  if (t.findings.empty()) h += "<p>No findings: nothing crossed the advisor's thresholds.</p>\n";
  for (const auto& f : t.findings) {
    h += fmt::format(
        "<div class=\"finding\"><span class=\"{0}\">{0}</span> {1}<br><b>Evidence:</b> {2}<br>"
        "<b>Action:</b> {3}{4}</div>\n",
        analyze::Name(f.severity), EscapeHtml(f.title), EscapeHtml(f.evidence),
        EscapeHtml(f.action),
        f.saving_ns >= 0 ? fmt::format("<br><b>Projected saving:</b> {:.3f} ms", f.saving_ns / 1e6)
                         : std::string());
  }
  if (timeline) {
    h += "<h3>Timeline</h3>\n" +
         TimelineHtml(a, fmt::format("timeline-data-{}", i), event_budget, bins);
  }
  const bool cpu = a.compute_on == analyze::ComputeOn::kCpu;
  const bool scopes = a.busy.scopes_are_work;
  h += scopes ? "<h3>CPU scopes over time (no operators or device work in this trace: its "
                "annotation scopes are the work)</h3>\n"
       : cpu  ? "<h3>CPU operators over time (no device work in this trace)</h3>\n"
              : "<h3>Device busy over time</h3>\n";
  if (a.busy.has_device)
    h += fmt::format("<p>Busy {:.1f}% of the {} window.</p>\n", a.busy.busy_pct,
                     scopes ? "CPU scope"
                     : cpu  ? "CPU operator"
                            : "device");
  h += Timeline(a.busy) + "\n";
  h += "<h3>Time by event class</h3>\n" + ClassShareChart(a) + "\n";
  h += scopes ? "<h3>Top scopes by self time</h3>\n"
       : cpu  ? "<h3>Top operators by self time</h3>\n"
              : "<h3>Top device kernels, copies and sets by time</h3>\n";
  std::vector<std::pair<std::string, double>> bars;
  std::vector<const analyze::OpStats*> ranked;
  for (const auto& s : a.operators) {
    if (cpu ? s.cls == (scopes ? analyze::EventClass::kAnnotation : analyze::EventClass::kHostOp)
            : analyze::IsDevice(s.cls))
      ranked.push_back(&s);
  }
  if (!cpu) {
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto* x, const auto* y) { return x->total_ns > y->total_ns; });
  }
  for (const auto* s : ranked) {
    bars.emplace_back(s->name, (cpu ? s->self_ns : s->total_ns) / 1e6);
    if (bars.size() == 15) break;
  }
  h += BarSvg(bars, "ms") + "\n";
  h += "<h3>Step breakdown</h3>\n" + StepChart(a.steps) + "\n";
  h += "<h3>Roofline</h3>\n<p>" + EscapeHtml(a.ceilings ? a.ceilings->source : a.ceilings_note) +
       "</p>\n" + RooflinePlot(a) + "\n";
  return h;
}

}  // namespace

std::string AnalysisHtml(const std::vector<AnalyzedTrace>& traces,
                         const std::vector<ResultTable>& tables) {
  std::string h = PageHead("opscope analysis") + "<h1>opscope analysis</h1>\n<p>opscope " +
                  OPSCOPE_VERSION_STRING + "</p>\n";
  // A job shown as a cluster (analysis_tables.h) has the sections of the
  // traces whose tables it shows: those with their findings table.
  const bool cluster = std::any_of(tables.begin(), tables.end(), [](const ResultTable& t) {
    return t.section == "findings_across_ranks";
  });
  std::vector<bool> section(traces.size(), true);
  if (cluster) {
    for (size_t i = 0; i < traces.size(); ++i) {
      const std::string head = traces[i].path + " (";
      section[i] = std::any_of(tables.begin(), tables.end(), [&](const ResultTable& t) {
        return t.section == "findings" && t.title.starts_with(head);
      });
    }
  }
  // Contents: each trace's sections, then every table.
  h += "<nav><ul>";
  for (size_t i = 0; i < traces.size(); ++i) {
    if (!section[i]) continue;
    h += fmt::format("<li><a href=\"#trace{}\">{}</a></li>", i, EscapeHtml(traces[i].path));
  }
  if (traces.size() > 1) h += "<li><a href=\"#ranks\">Ranks compared</a></li>";
  h += "<li><a href=\"#tables\">Every table</a></li></ul></nav>\n";
  // A page holds a bounded summary of every trace: the budget is shared.
  const size_t event_budget = std::max<size_t>(2000, 40000 / std::max<size_t>(traces.size(), 1));
  const int bins = traces.size() > 8 ? 512 : 2048;
  if (traces.size() > 1) {
    std::vector<RankTimeline> ranks;
    for (const auto& t : traces) ranks.push_back({t.rank, &t.analysis.timeline});
    h += "<h2 id=\"ranks\">Ranks compared</h2>\n<h3>Where each rank's complete steps go</h3>\n" +
         RankStepChart(traces) + "\n<h3>Ranks on one timeline</h3>\n" +
         RanksTimelineHtml(ranks, "timeline-data-ranks", event_budget, bins) + "\n";
  }
  for (size_t i = 0; i < traces.size(); ++i) {
    if (section[i]) h += TraceSectionHtml(traces[i], i, true, event_budget, bins);
  }
  h += "<h2 id=\"tables\">Every table</h2>\n<p>Click a column's header to sort by it. A long "
       "table shows its top rows here and says how many more it has; analysis.json and "
       "tables/*.csv hold every row of every table.</p>\n<nav><ul>";
  for (size_t i = 0; i < tables.size(); ++i) {
    if (tables[i].Hidden()) continue;
    h += fmt::format("<li><a href=\"#{}\">{}</a></li>", EscapeHtml(Anchor(tables[i], i)),
                     EscapeHtml(tables[i].title));
  }
  h += "</ul></nav>\n";
  for (size_t i = 0; i < tables.size(); ++i) {
    if (!tables[i].Hidden()) h += TableHtml(tables[i], {.anchor = Anchor(tables[i], i)});
  }
  return h + PageEnd();
}

std::string AnalysisFragmentHtml(const std::vector<AnalyzedTrace>& traces) {
  std::string h =
      "<div class=\"opscope-report\"><style>" + ScopedStyle(".opscope-report") + "</style>\n";
  if (traces.size() > 1) {
    h += "<h3>Where each rank's complete steps go</h3>\n" + RankStepChart(traces) + "\n";
  }
  for (size_t i = 0; i < traces.size(); ++i) h += TraceSectionHtml(traces[i], i, false, 0, 0);
  return h +
         "<p class=\"note\">The timeline and every table: Analysis.to_html() or "
         "Analysis.save(dir).</p></div>\n";
}

std::filesystem::path DefaultAnalysisDir(const std::filesystem::path& first_input) {
  if (first_input == "-") return "stdin.opscope-analysis";
  // The input's own name, whatever its spelling: "run/", "." and "../x" name
  // their folder. The report goes into the current folder: the data's folder
  // may be read-only or shared.
  std::error_code ec;
  std::filesystem::path named = std::filesystem::absolute(first_input, ec).lexically_normal();
  if (ec) named = first_input.lexically_normal();
  if (named.filename().empty()) named = named.parent_path();
  std::string stem = named.filename().string();
  for (const std::string_view suffix : {".gz", ".tgz", ".tar", ".zip", ".json", ".csv", ".db"}) {
    if (stem.size() > suffix.size() && stem.ends_with(suffix))
      stem.resize(stem.size() - suffix.size());
  }
  if (stem.empty() || stem == "/" || stem == "." || stem == "..") stem = "analysis";
  return stem + ".opscope-analysis";
}

void WriteAnalysisReport(const std::filesystem::path& dir, const std::vector<AnalyzedTrace>& traces,
                         const std::vector<ResultTable>& shown,
                         const std::vector<ResultTable>& every_row) {
  core::RefuseInputAsOutput(dir);  // a folder of the traces it reports on
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorCode::kIo, "cannot create '" + dir.string() + "': " + ec.message());
  const auto write = [&](const char* name, std::string text) {
    core::AtomicFileOutput file(dir / name, false);
    file.buffer() = std::move(text);
    file.Commit();
  };
  write("summary.csv", SummaryCsv(traces));
  // One CSV per table (SplitCsvFiles): tables/<section>.csv, the folder
  // replaced whole (an earlier report's tables never stay beside these).
  std::vector<const ResultTable*> all;
  for (const ResultTable& table : every_row) all.push_back(&table);
  std::vector<std::pair<std::string, std::string>> csv;
  for (const CsvFile& file : SplitCsvFiles(all))
    csv.emplace_back(file.name, TablesCsv(file.tables));
  core::WriteFolderWhole(dir / "tables", csv);
  std::ostringstream json;
  WriteJson(json, "analyze", every_row);
  write("analysis.json", json.str());
  write("analysis.html", AnalysisHtml(traces, shown));
}

}  // namespace opscope::report
