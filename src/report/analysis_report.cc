#include "report/analysis_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "core/output.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::report {
namespace {

using core::EscapeCsvField;
using core::EscapeHtml;

std::string Num(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

// A horizontal bar chart: one bar per (label, value), labels escaped.
std::string BarChart(const std::vector<std::pair<std::string, double>>& bars,
                     const std::string& unit) {
  if (bars.empty()) return "<p>No data.</p>";
  double max = 0;
  for (const auto& [label, value] : bars) max = std::max(max, value);
  const int row = 22, label_width = 360, bar_width = 440;
  std::string svg =
      fmt::format("<svg class=\"chart\" width=\"{}\" height=\"{}\" role=\"img\">",
                  label_width + bar_width + 110, row * static_cast<int>(bars.size()) + 6);
  for (size_t i = 0; i < bars.size(); ++i) {
    const auto& [label, value] = bars[i];
    const double w = max > 0 ? bar_width * value / max : 0;
    std::string shown = label.size() > 52 ? label.substr(0, 50) + "…" : label;
    const int y = static_cast<int>(i) * row + 4;
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", label_width - 6,
                       y + 14, EscapeHtml(shown));
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"16\" class=\"bar\"><title>{}: {} "
        "{}</title></rect>",
        label_width, y, w, EscapeHtml(label), Num(value, 3), unit);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{} {}</text>", label_width + w + 4, y + 14,
                       Num(value, 3), unit);
  }
  return svg + "</svg>";
}

// Log-log roofline: FLOP/s against FLOP/byte, the ceilings as lines, a dot per operator.
std::string RooflinePlot(const analyze::Analysis& a) {
  if (a.roofline.empty()) return "<p>No operator with known FLOPs.</p>";
  const int width = 720, height = 360, left = 70, bottom = 40;
  double x_min = 1e9, x_max = 1e-9, y_min = 1e30, y_max = 1;
  for (const auto& r : a.roofline) {
    if (r.intensity <= 0 || r.achieved <= 0) continue;
    x_min = std::min(x_min, r.intensity), x_max = std::max(x_max, r.intensity);
    y_min = std::min(y_min, r.achieved), y_max = std::max(y_max, r.achieved);
  }
  double peak = 0;
  if (a.ceilings) {
    for (const auto& [dtype, f] : a.ceilings->flops_per_second) peak = std::max(peak, f);
    y_max = std::max(y_max, peak);
  }
  if (x_min > x_max) return "<p>No operator with known bytes.</p>";
  x_min = std::pow(10, std::floor(std::log10(x_min)) - 1),
  x_max = std::pow(10, std::ceil(std::log10(x_max)) + 1);
  y_min = std::pow(10, std::floor(std::log10(y_min)) - 1),
  y_max = std::pow(10, std::ceil(std::log10(y_max)));
  const auto px = [&](double x) {
    return left + (width - left) * std::log10(x / x_min) / std::log10(x_max / x_min);
  };
  const auto py = [&](double y) {
    return (height - bottom) * (1 - std::log10(y / y_min) / std::log10(y_max / y_min));
  };
  std::string svg = fmt::format("<svg class=\"chart\" width=\"{}\" height=\"{}\" role=\"img\">",
                                width + 10, height);
  svg += fmt::format("<line x1=\"{0}\" y1=\"0\" x2=\"{0}\" y2=\"{1}\" class=\"axis\"/>", left,
                     height - bottom);
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" class=\"axis\"/>", left,
                     height - bottom, width);
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte, log)</text>",
      (left + width) / 2, height - 8);
  svg += fmt::format("<text x=\"4\" y=\"12\">FLOP/s (log)</text>");
  if (a.ceilings && a.ceilings->bytes_per_second > 0) {
    for (const auto& [dtype, f] : a.ceilings->flops_per_second) {
      const double ridge = f / a.ceilings->bytes_per_second;
      svg += fmt::format(
          "<polyline fill=\"none\" stroke=\"#b00020\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} "
          "{:.1f},{:.1f}\">"
          "<title>{} ceiling</title></polyline>",
          px(x_min), py(std::max(y_min, x_min * a.ceilings->bytes_per_second)),
          px(std::min(ridge, x_max)),
          py(std::min(f, std::min(ridge, x_max) * a.ceilings->bytes_per_second)), px(x_max), py(f),
          EscapeHtml(dtype));
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{} {:.1f} TFLOP/s</text>",
                         px(x_max) - 150, py(f) - 4, EscapeHtml(dtype), f / 1e12);
    }
  }
  for (const auto& r : a.roofline) {
    if (r.intensity <= 0 || r.achieved <= 0) continue;
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" class=\"bar\"><title>{}: {:.1f} FLOP/B, "
        "{:.3f} TFLOP/s</title></circle>",
        px(r.intensity), py(r.achieved), EscapeHtml(r.name), r.intensity, r.achieved / 1e12);
  }
  return svg + "</svg>";
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

std::string StepChart(const std::vector<analyze::StepBreakdown>& steps) {
  if (steps.empty()) return "<p>No ProfilerStep spans in this trace.</p>";
  int64_t longest = 1;
  for (const auto& s : steps) longest = std::max(longest, s.duration_ns);
  const int row = 24, label_width = 160, width = 640;
  std::string svg =
      fmt::format("<svg class=\"chart\" width=\"{}\" height=\"{}\" role=\"img\">",
                  label_width + width + 20, row * static_cast<int>(steps.size()) + 30);
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    const int y = static_cast<int>(i) * row + 4;
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", label_width - 6,
                       y + 14, EscapeHtml(s.name));
    double x = label_width;
    const std::pair<const char*, int64_t> parts[] = {{"compute", s.compute_ns},
                                                     {"communication", s.communication_ns},
                                                     {"memory", s.memory_ns},
                                                     {"idle", s.idle_ns}};
    for (const auto& [kind, ns] : parts) {
      const double w = width * static_cast<double>(ns) / static_cast<double>(longest);
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"16\" class=\"{}\"><title>{}: "
          "{:.3f} ms</title></rect>",
          x, y, w, kind, kind, ns / 1e6);
      x += w;
    }
  }
  const int legend_y = row * static_cast<int>(steps.size()) + 20;
  int lx = label_width;
  for (const char* kind : {"compute", "communication", "memory", "idle"}) {
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" class=\"{}\"/><text x=\"{}\" "
        "y=\"{}\">{}</text>",
        lx, legend_y - 10, kind, lx + 16, legend_y, kind);
    lx += 130;
  }
  return svg + "</svg>";
}

}  // namespace

std::string SummaryCsv(const std::vector<AnalyzedTrace>& traces) {
  std::string out =
      "Trace,Operator,Category,Count,Self_us,Total_us,Avg_us,P50_us,P99_us,Max_us,Share_pct,FLOPs,"
      "Bytes,"
      "Arithmetic_Intensity,Achieved_TFLOPS,Utilization_pct,Bound\n";
  for (const auto& t : traces) {
    std::map<std::string, const analyze::OpRoofline*> roofline;
    for (const auto& r : t.analysis.roofline) roofline[r.name] = &r;
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

std::string AnalysisHtml(const std::vector<AnalyzedTrace>& traces) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'\">"
      "<title>opscope analysis</title><style>"
      "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}"
      "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}"
      "table{border-collapse:collapse;font-size:.9em}td,th{padding:3px 8px;border-bottom:1px solid "
      "#eee;text-align:left}"
      "td.n{text-align:right;font-variant-numeric:tabular-nums}"
      ".critical{color:#b00020;font-weight:bold}.warning{color:#a15c00;font-weight:bold}.info{"
      "color:#2a5db0}"
      ".chart text{font-size:11px;fill:#333}.bar{fill:#4a7bd0}.axis{stroke:#999}"
      "rect.compute{fill:#4a7bd0}rect.communication{fill:#d08a4a}rect.memory{fill:#6ab06a}rect."
      "idle{fill:#cccccc}"
      ".finding{margin:.6em 0;padding:.5em .8em;border-left:4px solid #ccc;background:#fafafa}"
      "</style></head><body>\n<h1>opscope analysis</h1>\n<p>opscope " OPSCOPE_VERSION_STRING
      "</p>\n";
  for (const auto& t : traces) {
    const auto& a = t.analysis;
    h += fmt::format("<h2>{} <small>({}, {} events)</small></h2>\n", EscapeHtml(t.path),
                     EscapeHtml(t.format), t.events);
    h += "<h3>Findings</h3>\n";
    if (t.findings.empty()) h += "<p>No findings: nothing crossed the advisor's thresholds.</p>\n";
    for (const auto& f : t.findings) {
      h += fmt::format(
          "<div class=\"finding\"><span class=\"{0}\">{0}</span> {1}<br><b>Evidence:</b> {2}<br>"
          "<b>Action:</b> {3}</div>\n",
          analyze::Name(f.severity), EscapeHtml(f.title), EscapeHtml(f.evidence),
          EscapeHtml(f.action));
    }
    const bool cpu = a.compute_on == analyze::ComputeOn::kCpu;
    h += cpu ? "<h3>CPU operators over time (no device work in this trace)</h3>\n"
             : "<h3>Device busy over time</h3>\n";
    if (a.busy.has_device)
      h += fmt::format("<p>Busy {:.1f}% of the {} window.</p>\n", a.busy.busy_pct,
                       cpu ? "CPU operator" : "device");
    h += Timeline(a.busy) + "\n";
    if (!a.busy.gaps.empty()) {
      h += "<table><tr><th>Start (ms)</th><th>Idle (ms)</th><th>Likely "
           "cause</th><th>Evidence</th></tr>\n";
      for (const auto& g : a.busy.gaps) {
        h += fmt::format(
            "<tr><td class=\"n\">{:.3f}</td><td "
            "class=\"n\">{:.3f}</td><td>{}</td><td>{}</td></tr>\n",
            (g.begin_ns - a.busy.window_begin_ns) / 1e6, g.duration_ns / 1e6, EscapeHtml(g.cause),
            EscapeHtml(g.evidence));
      }
      h += "</table>\n";
    }
    h += cpu ? "<h3>Top operators by self time</h3>\n"
             : "<h3>Top device kernels, copies and sets by time</h3>\n";
    std::vector<std::pair<std::string, double>> bars;
    std::vector<const analyze::OpStats*> ranked;
    for (const auto& s : a.operators) {
      if (cpu ? s.cls == analyze::EventClass::kHostOp : analyze::IsDevice(s.cls))
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
    h += BarChart(bars, "ms") + "\n";
    h += "<h3>Step breakdown</h3>\n" + StepChart(a.steps) + "\n";
    h += "<h3>Roofline</h3>\n<p>" + EscapeHtml(a.ceilings ? a.ceilings->source : a.ceilings_note) +
         "</p>\n" + RooflinePlot(a) + "\n";
    if (!a.transfers.empty()) {
      h +=
          "<h3>Memory "
          "copies</h3>\n<table><tr><th>Direction</th><th>Count</th><th>Bytes</th><th>Time (ms)</th>"
          "<th>% of device time</th><th>GB/s</th></tr>\n";
      for (const auto& tr : a.transfers) {
        h += fmt::format(
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td "
            "class=\"n\">{:.3f}</td>"
            "<td class=\"n\">{:.1f}</td><td class=\"n\">{}</td></tr>\n",
            EscapeHtml(tr.direction), tr.count, tr.bytes >= 0 ? std::to_string(tr.bytes) : "n/a",
            tr.total_ns / 1e6, tr.share_of_device_pct, tr.bytes > 0 ? Num(tr.gbps, 2) : "n/a");
      }
      h += "</table>\n";
    }
  }
  h += "</body></html>\n";
  return h;
}

namespace {

// A result table as HTML: its title, every column (those kept off the
// terminal too), its notes; every string escaped.
std::string TableHtml(const ResultTable& t) {
  std::string h = "<h3>" + EscapeHtml(t.title) + "</h3>\n<table><tr>";
  for (const Column& c : t.columns) h += "<th>" + EscapeHtml(c.header) + "</th>";
  h += "</tr>\n";
  for (const auto& row : t.rows) {
    h += "<tr>";
    for (size_t i = 0; i < row.size() && i < t.columns.size(); ++i) {
      const bool number =
          std::holds_alternative<int64_t>(row[i]) || std::holds_alternative<double>(row[i]);
      h += (number ? "<td class=\"n\">" : "<td>") +
           EscapeHtml(RenderValue(row[i], t.columns[i].precision)) + "</td>";
    }
    h += "</tr>\n";
  }
  h += "</table>\n";
  for (const std::string& note : t.notes) h += "<p>" + EscapeHtml(note) + "</p>\n";
  return h;
}

// The tables analysis.html has no section of its own for: Ascend's (AI Core
// pipeline, memory, communication, steps, summaries) under one heading, then
// the files found in the inputs' folders and not read, with why.
std::string MoreTablesHtml(const std::vector<ResultTable>& tables) {
  std::string ascend, unused;
  for (const auto& t : tables) {
    if (t.section.starts_with("ascend_")) ascend += TableHtml(t);
    if (t.section == "unused_files") unused += TableHtml(t);
  }
  std::string h;
  if (!ascend.empty()) h += "<h2>Ascend</h2>\n" + ascend;
  if (!unused.empty()) h += "<h2>Files not read</h2>\n" + unused;
  return h;
}

}  // namespace

std::filesystem::path DefaultAnalysisDir(const std::filesystem::path& first) {
  if (first == "-") return "stdin.opscope-analysis";
  std::string stem = first.filename().string();
  for (const std::string_view suffix : {".gz", ".zip", ".json", ".csv"}) {
    if (stem.size() > suffix.size() && stem.ends_with(suffix))
      stem.resize(stem.size() - suffix.size());
  }
  std::error_code ec;
  const bool regular = std::filesystem::is_regular_file(first, ec);
  return (regular ? first.parent_path() : std::filesystem::path()) / (stem + ".opscope-analysis");
}

void WriteAnalysisReport(const std::filesystem::path& dir, const std::vector<AnalyzedTrace>& traces,
                         const std::vector<ResultTable>& tables) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorCode::kIo, "cannot create '" + dir.string() + "': " + ec.message());
  const auto write = [&](const char* name, std::string text) {
    core::AtomicFileOutput file(dir / name, false);
    file.buffer() = std::move(text);
    file.Commit();
  };
  write("summary.csv", SummaryCsv(traces));
  // One CSV per table, tables/<section>.csv: the tables of a section (one per
  // trace or rank) share their columns and go in one file; a section whose
  // tables differ in shape gets one file per shape (<section>_2.csv, ...).
  {
    std::filesystem::create_directories(dir / "tables", ec);
    if (ec) {
      throw Error(ErrorCode::kIo,
                  "cannot create '" + (dir / "tables").string() + "': " + ec.message());
    }
    std::vector<std::pair<std::string, std::vector<const ResultTable*>>> files;
    std::map<std::string, int> shapes;  // section -> files so far
    for (const ResultTable& table : tables) {
      const auto same_shape = [&](const std::vector<const ResultTable*>& group) {
        const auto& a = group.front()->columns;
        return group.front()->section == table.section && a.size() == table.columns.size() &&
               std::equal(a.begin(), a.end(), table.columns.begin(),
                          [](const Column& x, const Column& y) { return x.key == y.key; });
      };
      const auto it = std::find_if(files.begin(), files.end(),
                                   [&](const auto& f) { return same_shape(f.second); });
      if (it != files.end()) {
        it->second.push_back(&table);
        continue;
      }
      const int n = ++shapes[table.section];
      files.push_back({table.section + (n > 1 ? "_" + std::to_string(n) : "") + ".csv", {&table}});
    }
    for (const auto& [name, group] : files) {
      write(("tables/" + name).c_str(), TablesCsv(group));
    }
  }
  std::ostringstream json;
  WriteJson(json, "analyze", tables);
  write("analysis.json", json.str());
  std::string html = AnalysisHtml(traces);
  constexpr std::string_view kEnd = "</body></html>\n";
  html.insert(html.size() - kEnd.size(), MoreTablesHtml(tables));
  write("analysis.html", std::move(html));
}

}  // namespace opscope::report
