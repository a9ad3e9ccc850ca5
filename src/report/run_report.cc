#include "report/run_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "core/output.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::report {
namespace {

using core::EscapeHtml;

const double* Number(const Value& v, double& scratch) {
  if (const auto* d = std::get_if<double>(&v)) return d;
  if (const auto* i = std::get_if<int64_t>(&v)) {
    scratch = static_cast<double>(*i);
    return &scratch;
  }
  return nullptr;
}

// The column a chart of this table plots: the first rate or size it has.
int ChartColumn(const ResultTable& t) {
  static const char* kPreferred[] = {"gbps",         "tflops",    "gflops", "images_per_s",
                                     "iteration_ms", "median_ms", "mib"};
  for (const char* key : kPreferred) {
    for (size_t i = 0; i < t.columns.size(); ++i) {
      if (t.columns[i].key == key) return static_cast<int>(i);
    }
  }
  return -1;
}

// A horizontal bar per row: label from the row's first text columns.
std::string Chart(const ResultTable& t) {
  const int column = ChartColumn(t);
  if (column < 0 || t.rows.size() < 2 || t.rows.size() > 60) return {};
  std::vector<std::pair<std::string, double>> bars;
  for (const auto& row : t.rows) {
    double scratch = 0;
    const double* v = Number(row[column], scratch);
    if (v == nullptr) continue;
    // The row's name: its first text column, or its first column with its header.
    std::string label;
    for (size_t i = 0; i < row.size() && label.empty(); ++i) {
      if (const auto* s = std::get_if<std::string>(&row[i]); s != nullptr) label = *s;
    }
    if (label.empty()) label = t.columns[0].header + " " + RenderValue(row[0], 0);
    bars.emplace_back(label.substr(0, 60), *v);
  }
  if (bars.size() < 2) return {};
  double max = 0;
  for (const auto& b : bars) max = std::max(max, b.second);
  const int row_h = 20, label_w = 380, bar_w = 420;
  std::string svg =
      fmt::format("<svg class=\"chart\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\">",
                  label_w + bar_w + 120, row_h * static_cast<int>(bars.size()) + 6,
                  EscapeHtml(t.columns[column].header));
  for (size_t i = 0; i < bars.size(); ++i) {
    const int y = static_cast<int>(i) * row_h + 3;
    const double w = max > 0 ? bar_w * bars[i].second / max : 0;
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", label_w - 6, y + 13,
                       EscapeHtml(bars[i].first));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"14\" class=\"bar\"/>",
                       label_w, y, w);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{:.4g} {}</text>", label_w + w + 4, y + 13,
                       bars[i].second, EscapeHtml(t.columns[column].header));
  }
  return svg + "</svg>\n";
}

std::string HtmlTable(const ResultTable& t) {
  std::string h = "<table><tr>";
  std::vector<size_t> shown;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (!t.columns[i].terminal) continue;
    shown.push_back(i);
    h += "<th>" + EscapeHtml(t.columns[i].header) + "</th>";
  }
  h += "</tr>\n";
  for (const auto& row : t.rows) {
    h += "<tr>";
    for (const size_t i : shown) {
      const bool number = !std::holds_alternative<std::string>(row[i]);
      h += number ? "<td class=\"n\">" : "<td>";
      h += EscapeHtml(RenderValue(row[i], t.columns[i].precision)) + "</td>";
    }
    h += "</tr>\n";
  }
  return h + "</table>\n";
}

}  // namespace

std::string RunResultsJson(const std::vector<RunStep>& steps) {
  std::string s = JsonHead("run") + ",\"steps\":[";
  for (size_t i = 0; i < steps.size(); ++i) {
    const RunStep& step = steps[i];
    s += i ? ",\n{" : "\n{";
    s += "\"command\":";
    core::AppendJsonString(s, step.command);
    s += ",\"title\":";
    core::AppendJsonString(s, step.title);
    s += ",\"status\":";
    core::AppendJsonString(s, step.status);
    s += ",\"error\":";
    if (step.error.empty()) {
      s += "null";
    } else {
      core::AppendJsonString(s, step.error);
    }
    s += fmt::format(",\"seconds\":{:.3f},\"results\":[", step.seconds);
    AppendRowsJson(s, step.tables, /*name_sections=*/true);
    s += "]}";
  }
  s += "\n]}\n";
  return s;
}

std::string RunSummaryCsv(const std::vector<RunStep>& steps) {
  std::string out;
  for (const RunStep& step : steps) {
    for (const ResultTable& t : step.tables) {
      if (!out.empty()) out += '\n';
      out += "step,section";
      for (const auto& c : t.columns) out += "," + core::EscapeCsvField(c.header);
      out += '\n';
      for (const auto& row : t.rows) {
        out += core::EscapeCsvField(step.title) + "," + core::EscapeCsvField(t.section);
        for (size_t i = 0; i < row.size(); ++i) {
          out += ',';
          if (!std::holds_alternative<std::monostate>(row[i])) {
            out += core::EscapeCsvField(RenderValue(row[i], t.columns[i].precision));
          }
        }
        out += '\n';
      }
    }
  }
  return out;
}

std::string RunIndexHtml(const std::vector<RunStep>& steps, const std::string& device,
                         const std::vector<std::pair<std::string, std::string>>& links) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'\">"
      "<title>opscope report</title><style>"
      "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}"
      "h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ddd}"
      "h3{font-size:1em}table{border-collapse:collapse;font-size:.85em;margin:.4em 0}"
      "td,th{padding:2px 7px;border-bottom:1px solid #eee;text-align:left}"
      "td.n{text-align:right;font-variant-numeric:tabular-nums}"
      ".ok{color:#1b7f3b;font-weight:bold}.failed{color:#b00020;font-weight:bold}"
      ".note{color:#555;font-size:.85em;margin:.2em 0}"
      ".chart text{font-size:11px;fill:#333}.bar{fill:#4a7bd0}"
      "nav a{margin-right:1em}</style></head><body>\n";
  h += "<h1>opscope report</h1>\n<p>opscope " OPSCOPE_VERSION_STRING " on " + EscapeHtml(device) +
       "</p>\n";
  h += "<table><tr><th>Step</th><th>Command</th><th>Status</th><th>Seconds</th></tr>\n";
  for (size_t i = 0; i < steps.size(); ++i) {
    const RunStep& s = steps[i];
    h += fmt::format(
        "<tr><td><a href=\"#step{}\">{}</a></td><td><code>opscope {}</code></td><td "
        "class=\"{}\">{}</td><td class=\"n\">{:.1f}</td></tr>\n",
        i, EscapeHtml(s.title), EscapeHtml(s.command), s.status == "ok" ? "ok" : "failed",
        EscapeHtml(s.status), s.seconds);
  }
  h += "</table>\n";
  if (!links.empty()) {
    h += "<nav>";
    for (const auto& [path, label] : links) {
      h += "<a href=\"" + EscapeHtml(path) + "\">" + EscapeHtml(label) + "</a>";
    }
    h += "</nav>\n";
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const RunStep& s = steps[i];
    h += fmt::format("<h2 id=\"step{}\">{}</h2>\n<p>Reproduce: <code>opscope {}</code></p>\n", i,
                     EscapeHtml(s.title), EscapeHtml(s.command));
    if (s.status != "ok") {
      h += "<p class=\"failed\">" + EscapeHtml(s.status) + ": " + EscapeHtml(s.error) + "</p>\n";
    }
    for (const ResultTable& t : s.tables) {
      if (!t.title.empty()) h += "<h3>" + EscapeHtml(t.title) + "</h3>\n";
      h += Chart(t);
      h += HtmlTable(t);
      for (const auto& note : t.notes) h += "<p class=\"note\">" + EscapeHtml(note) + "</p>\n";
    }
  }
  h += "</body></html>\n";
  return h;
}

}  // namespace opscope::report
