#include "report/html_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text.h"
#include "report/timeline_html.h"

namespace opscope::report {
namespace {

using core::EscapeHtml;

constexpr const char* kStyle =
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1280px}"
    "h1{font-size:1.5em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ddd}"
    "h3{font-size:1.05em;margin-top:1.4em}"
    "table{border-collapse:collapse;font-size:.85em}td,th{padding:3px 8px;border-bottom:1px "
    "solid #eee;text-align:left;vertical-align:top}"
    "th{background:#f4f6fa;cursor:pointer;white-space:nowrap}th[aria-sort=ascending]::after{"
    "content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    // Off-screen tables are not laid out until scrolled to: a page with many
    // long tables paints its top (the timeline) first.
    ".scroll{overflow-x:auto;max-height:36em;overflow-y:auto;content-visibility:auto;"
    "contain-intrinsic-size:auto 20em}"
    ".note{color:#555;font-size:.9em}"
    ".critical{color:#b00020;font-weight:bold}.warning{color:#a15c00;font-weight:bold}.info{"
    "color:#2a5db0}"
    ".chart text{font-size:11px;fill:#333}.bar{fill:#4a7bd0}.axis{stroke:#999}"
    ".chart .grid{stroke:#e6e6e6}.chart .frame{fill:none;stroke:#999}.chart .tick{fill:#555}"
    ".chart .title{font-size:12px;fill:#222}.chart .ref{stroke:#b00020;stroke-dasharray:4 3}"
    ".chart .reflabel{fill:#b00020}.chart .point{fill:#222;fill-opacity:.75}"
    ".chart .plabel{font-size:10px;fill:#222}"
    "rect.compute{fill:#4a7bd0}rect.communication{fill:#d08a4a}rect.memory{fill:#6ab06a}rect."
    "idle{fill:#cccccc}"
    ".finding{margin:.6em 0;padding:.5em .8em;border-left:4px solid #ccc;background:#fafafa}"
    ".timeline{position:relative;border:1px solid #ddd;padding:4px}"
    ".timeline canvas{display:block;outline:none}.tl-bar{margin-bottom:4px;font-size:.85em}"
    ".tl-bar button{min-width:2em;margin-right:4px}"
    ".tl-tip{position:absolute;z-index:2;max-width:480px;background:#fffff4;border:1px solid "
    "#aaa;padding:4px 6px;font-size:12px;pointer-events:none;word-break:break-all}"
    ".tl-list{margin-top:6px;max-height:28em;overflow:auto}"
    "nav ul{columns:2;font-size:.9em}nav a{margin-right:1em}"
    ".ok{color:#1b7f3b;font-weight:bold}.failed{color:#b00020;font-weight:bold}";

}  // namespace

std::string PageHead(std::string_view title) {
  return std::string(
             "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
             "style-src 'unsafe-inline'; script-src 'unsafe-inline'\"><title>") +
         EscapeHtml(title) + "</title><style>" + kStyle + "</style></head><body>\n";
}

std::string ScopedStyle(std::string_view scope) {
  // Every rule's selectors, each prefixed with the scope ("body" becomes it).
  std::string out;
  const std::string_view style = kStyle;
  size_t at = 0;
  while (at < style.size()) {
    const size_t open = style.find('{', at), close = style.find('}', open);
    if (open == std::string_view::npos || close == std::string_view::npos) break;
    const std::string_view selectors = style.substr(at, open - at);
    size_t from = 0;
    while (from <= selectors.size()) {
      size_t comma = selectors.find(',', from);
      if (comma == std::string_view::npos) comma = selectors.size();
      const std::string_view one = selectors.substr(from, comma - from);
      if (from > 0) out += ',';
      out += scope;
      if (one != "body") (out += ' ') += one;
      from = comma + 1;
    }
    out += style.substr(open, close - open + 1);
    at = close + 1;
  }
  return out;
}

std::string PageEnd() {
  std::string h = "<script>";
  h += ReportScript();
  h += "</script>\n</body></html>\n";
  return h;
}

std::string BreakAtSeparators(const std::string& escaped) {
  if (escaped.find('/') == std::string::npos && escaped.find('\\') == std::string::npos) {
    return escaped;
  }
  std::string out;
  out.reserve(escaped.size() + escaped.size() / 8);
  for (const char ch : escaped) {
    out += ch;
    if (ch == '/' || ch == '\\') out += "<wbr>";
  }
  return out;
}

std::string TableHtml(const ResultTable& t, const TableHtmlOptions& options) {
  std::string h =
      options.anchor.empty() ? "<h3>" : "<h3 id=\"" + EscapeHtml(options.anchor) + "\">";
  h += EscapeHtml(t.title);
  if (!options.csv_link.empty()) {
    h += " <small><a href=\"" + EscapeHtml(options.csv_link) + "\">CSV</a></small>";
  }
  h += "</h3>\n";
  const TableView view = ViewOf(t, !options.all_columns);
  // What every row shares (the trace, its format, its event count) is said
  // once above the table, not in a column that pushes the figures off-screen.
  std::vector<size_t> shown;
  std::string shared;
  for (size_t c = 0; c < view.columns.size(); ++c) {
    const std::string& key = t.columns[view.columns[c]].key;
    const bool per_trace = key == "trace" || key == "format" || key == "events";
    const bool same = !t.rows.empty() && std::all_of(view.cells.begin(), view.cells.end(),
                                                     [&](const std::vector<std::string>& row) {
                                                       return row[c] == view.cells[0][c];
                                                     });
    if (per_trace && same) {
      shared += (shared.empty() ? "" : " · ") + EscapeHtml(view.headers[c]) + ": " +
                BreakAtSeparators(EscapeHtml(view.cells[0][c]));
    } else {
      shown.push_back(c);
    }
  }
  if (!shared.empty()) h += "<p class=\"note\">" + shared + "</p>\n";
  h += "<div class=\"scroll\"><table class=\"sortable\"><thead><tr>";
  for (const size_t c : shown) h += "<th>" + EscapeHtml(view.headers[c]) + "</th>";
  h += "</tr></thead><tbody>\n";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    h += "<tr>";
    for (const size_t c : shown) {
      const Value& v = t.rows[r][view.columns[c]];
      const std::string text = BreakAtSeparators(EscapeHtml(view.cells[r][c]));
      // Numbers sort by their full value (data-v), whatever unit they show in.
      if (const auto* n = std::get_if<int64_t>(&v)) {
        h += fmt::format("<td class=\"n\" data-v=\"{}\">{}</td>", *n, text);
      } else if (const auto* d = std::get_if<double>(&v)) {
        h += std::isfinite(*d) ? fmt::format("<td class=\"n\" data-v=\"{}\">{}</td>", *d, text)
                               : "<td class=\"n\" data-v=\"\">" + text + "</td>";
      } else if (std::holds_alternative<std::monostate>(v)) {
        h += "<td class=\"n\" data-v=\"\">" + text + "</td>";
      } else {
        h += "<td>" + text + "</td>";
      }
    }
    h += "</tr>\n";
  }
  h += "</tbody></table></div>\n";
  for (const std::string& note : t.notes) h += "<p class=\"note\">" + EscapeHtml(note) + "</p>\n";
  return h;
}

}  // namespace opscope::report
