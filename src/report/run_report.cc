#include "report/run_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/output.h"
#include "core/text.h"
#include "opscope/opscope.h"
#include "report/charts.h"
#include "report/html_page.h"

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

// The column a chart of this table plots: the first rate it has (bytes/s,
// FLOP/s, images/s), else its iteration or median time, else a size.
int ChartColumn(const ResultTable& t) {
  const auto first = [&](auto&& wanted) {
    for (size_t i = 0; i < t.columns.size(); ++i) {
      if (wanted(t.columns[i])) return static_cast<int>(i);
    }
    return -1;
  };
  for (const auto& wanted : std::initializer_list<std::function<bool(const Column&)>>{
           [](const Column& c) { return c.unit == Unit::kBytesPerSecond; },
           [](const Column& c) { return c.unit == Unit::kFlopPerSecond; },
           [](const Column& c) { return c.key == "images_per_s"; },
           [](const Column& c) { return c.key == "iteration_ns" || c.key == "median_ns"; },
           [](const Column& c) { return c.unit == Unit::kBytes && c.terminal; }}) {
    if (const int i = first(wanted); i >= 0) return i;
  }
  return -1;
}

int ColumnOf(const ResultTable& t, std::string_view key) {
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (t.columns[i].key == key) return static_cast<int>(i);
  }
  return -1;
}

std::string TextAt(const std::vector<Value>& row, int column) {
  if (column < 0 || static_cast<size_t>(column) >= row.size()) return {};
  const auto* s = std::get_if<std::string>(&row[static_cast<size_t>(column)]);
  return s != nullptr ? *s : std::string();
}

std::optional<double> NumberAt(const std::vector<Value>& row, int column) {
  if (column < 0 || static_cast<size_t>(column) >= row.size()) return std::nullopt;
  double scratch = 0;
  const double* v = Number(row[static_cast<size_t>(column)], scratch);
  return v != nullptr && std::isfinite(*v) ? std::optional<double>(*v) : std::nullopt;
}

// The series of a chart: rows grouped by the text of `name_columns`, in order.
Series& SeriesFor(std::vector<Series>& series, const std::string& name) {
  for (Series& s : series) {
    if (s.name == name) return s;
  }
  series.push_back({name, {}});
  return series.back();
}

// The bandwidth sweep: GB/s against the size on a log axis, one line per
// transfer type and kernel, and where the arrays stop fitting a cache level
// (the table's "Fits in" column) a marked boundary.
std::string BandwidthChart(const ResultTable& t) {
  const int size = ColumnOf(t, "size_bytes"), gbps = ColumnOf(t, "bytes_per_s"),
            level = ColumnOf(t, "level"), type = ColumnOf(t, "type"),
            kernel = ColumnOf(t, "kernel");
  if (size < 0 || gbps < 0) return {};
  XyChart c;
  c.x = {"size (bytes)", true, TickStyle::kBytes};
  c.y = {"bandwidth (GB/s)", false, TickStyle::kPlain};
  std::map<std::string, std::vector<std::pair<double, std::string>>> levels;  // series -> sizes
  for (const auto& row : t.rows) {
    const auto x = NumberAt(row, size), y = NumberAt(row, gbps);
    if (!x || !y || *x <= 0) continue;
    const double y_gbps = *y * t.columns[static_cast<size_t>(gbps)].scale / 1e9;
    const std::string name = TextAt(row, type) + " " + TextAt(row, kernel);
    SeriesFor(c.series, name).points.emplace_back(*x, y_gbps);
    levels[name].emplace_back(*x, TextAt(row, level));
  }
  if (c.series.empty()) return {};
  std::set<std::string> marked;
  for (auto& [name, sizes] : levels) {
    std::sort(sizes.begin(), sizes.end());
    for (size_t i = 1; i < sizes.size(); ++i) {
      const std::string& to = sizes[i].second;
      if (to.empty() || sizes[i - 1].second.empty() || to == sizes[i - 1].second) continue;
      if (!marked.insert(sizes[i - 1].second + ">" + to).second) continue;
      c.lines.push_back(
          {std::sqrt(sizes[i - 1].first * sizes[i].first), sizes[i - 1].second + " | " + to, true});
    }
  }
  std::string h = XySvg(c);
  if (c.lines.empty()) {
    h += "<p class=\"note\">No cache boundary marked: the table's \"Fits in\" column does not "
         "change level across the sizes measured (n/a: the device reports no cache sizes).</p>\n";
  }
  return h;
}

// matmul and conv2d: achieved FLOP/s against the problem size (FLOPs per
// call), one line per dtype and implementation, with each dtype's theoretical
// peak and measured ceiling as the table rates them (GFLOP/s / % of each).
std::string OperatorChart(const ResultTable& t) {
  const int flops = ColumnOf(t, "flops"), rate = ColumnOf(t, "flop_per_s"),
            dtype = ColumnOf(t, "dtype"), impl = ColumnOf(t, "impl"),
            peak = ColumnOf(t, "pct_peak"), ceiling = ColumnOf(t, "pct_ceiling");
  if (flops < 0 || rate < 0) return {};
  const double scale = t.columns[static_cast<size_t>(rate)].scale;
  XyChart c;
  c.x = {"problem size (FLOP per call)", true, TickStyle::kSi};
  c.y = {"achieved (FLOP/s)", true, TickStyle::kSi};
  std::map<std::string, double> peaks, ceilings;  // dtype -> FLOP/s
  for (const auto& row : t.rows) {
    const auto x = NumberAt(row, flops), y = NumberAt(row, rate);
    if (!x || !y || *x <= 0 || *y <= 0) continue;
    const double flop_per_s = *y * scale;
    const std::string dt = TextAt(row, dtype);
    const std::string name = impl >= 0 ? dt + " " + TextAt(row, impl) : dt;
    SeriesFor(c.series, name).points.emplace_back(*x, flop_per_s);
    if (const auto p = NumberAt(row, peak); p && *p > 0) peaks.emplace(dt, flop_per_s * 100 / *p);
    if (const auto m = NumberAt(row, ceiling); m && *m > 0) {
      ceilings.emplace(dt, flop_per_s * 100 / *m);
    }
  }
  if (c.series.empty()) return {};
  for (auto& s : c.series) std::sort(s.points.begin(), s.points.end());
  for (const auto& [dt, f] : peaks) {
    c.lines.push_back({f, fmt::format("{} peak {} FLOP/s", dt, TickLabel(f, TickStyle::kSi))});
  }
  for (const auto& [dt, f] : ceilings) {
    c.lines.push_back(
        {f, fmt::format("{} measured ceiling {} FLOP/s", dt, TickLabel(f, TickStyle::kSi))});
  }
  return XySvg(c);
}

// A horizontal bar per row for the other tables with a rate or size: label
// from the row's first text column.
std::string BarChart(const ResultTable& t) {
  const int column = ChartColumn(t);
  if (column < 0 || t.rows.size() < 2 || t.rows.size() > 60) return {};
  std::vector<std::pair<std::string, double>> bars;
  for (const auto& row : t.rows) {
    const auto v = NumberAt(row, column);
    if (!v) continue;
    std::string label;
    for (size_t i = 0; i < row.size() && label.empty(); ++i) {
      if (const auto* s = std::get_if<std::string>(&row[i]); s != nullptr) label = *s;
    }
    if (label.empty()) label = t.columns[0].header + " " + RenderValue(row[0], 0);
    bars.emplace_back(label, *v);
  }
  if (bars.size() < 2) return {};
  return BarSvg(bars, t.columns[static_cast<size_t>(column)].header) + "\n";
}

std::string Chart(const ResultTable& t) {
  if (t.section == "bandwidth") return BandwidthChart(t);
  if (t.section == "matmul" || t.section == "conv2d") return OperatorChart(t);
  return BarChart(t);
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
  // One row per value (a long table: every table's columns differ, so one
  // header cannot serve them all); tables/<section>.csv has each table as is.
  std::string out = "step,section,row,column,value\n";
  for (const RunStep& step : steps) {
    for (const ResultTable& t : step.tables) {
      for (size_t r = 0; r < t.rows.size(); ++r) {
        const auto& row = t.rows[r];
        for (size_t i = 0; i < row.size() && i < t.columns.size(); ++i) {
          if (std::holds_alternative<std::monostate>(row[i])) continue;
          if (!t.columns[i].json) continue;
          out += core::EscapeCsvField(step.title) + "," + core::EscapeCsvField(t.section) + "," +
                 std::to_string(r) + "," + core::EscapeCsvField(t.columns[i].key) + "," +
                 CsvValue(row[i], t.columns[i]) + '\n';
        }
      }
    }
  }
  return out;
}

std::vector<CsvFile> RunCsvFiles(const std::vector<RunStep>& steps) {
  std::vector<const ResultTable*> all;
  for (const RunStep& step : steps) {
    for (const ResultTable& t : step.tables) all.push_back(&t);
  }
  return SplitCsvFiles(all);
}

std::string RunIndexHtml(const std::vector<RunStep>& steps, const std::string& device,
                         const std::vector<std::pair<std::string, std::string>>& links) {
  std::map<const ResultTable*, std::string> csv;
  for (const CsvFile& file : RunCsvFiles(steps)) {
    for (const ResultTable* t : file.tables) csv[t] = "tables/" + file.name;
  }
  std::string h = PageHead("opscope report");
  h += "<h1>opscope report</h1>\n<p>opscope " OPSCOPE_VERSION_STRING " on " + EscapeHtml(device) +
       "</p>\n";
  h += "<table class=\"sortable\"><thead><tr><th>Step</th><th>Command</th><th>Status</th>"
       "<th>Seconds</th></tr></thead><tbody>\n";
  for (size_t i = 0; i < steps.size(); ++i) {
    const RunStep& s = steps[i];
    h += fmt::format(
        "<tr><td><a href=\"#step{}\">{}</a></td><td><code>opscope {}</code></td><td "
        "class=\"{}\">{}</td><td class=\"n\" data-v=\"{}\">{:.1f}</td></tr>\n",
        i, EscapeHtml(s.title), EscapeHtml(s.command), s.status == "ok" ? "ok" : "failed",
        EscapeHtml(s.status), s.seconds, s.seconds);
  }
  h += "</tbody></table>\n<nav><a href=\"results.json\">results.json</a><a "
       "href=\"summary.csv\">summary.csv</a>";
  for (const auto& [path, label] : links) {
    h += "<a href=\"" + EscapeHtml(path) + "\">" + EscapeHtml(label) + "</a>";
  }
  h += "</nav>\n";
  for (size_t i = 0; i < steps.size(); ++i) {
    const RunStep& s = steps[i];
    h += fmt::format("<h2 id=\"step{}\">{}</h2>\n<p>Reproduce: <code>opscope {}</code></p>\n", i,
                     EscapeHtml(s.title), EscapeHtml(s.command));
    if (s.status != "ok") {
      h += "<p class=\"failed\">" + EscapeHtml(s.status) + ": " + EscapeHtml(s.error) + "</p>\n";
    }
    for (const ResultTable& t : s.tables) {
      if (t.Hidden()) continue;  // in the step's CSV and JSON, not on the page
      h += Chart(t);
      h += TableHtml(t, {.all_columns = false, .csv_link = csv[&t]});
    }
  }
  return h + PageEnd();
}

}  // namespace opscope::report
