// What opscope's HTML pages share: the head (one inline style, a content
// security policy that allows only the page's own inline style and script),
// result tables as sortable HTML tables, and the end (the report script,
// src/report/report_script.js). Every string is escaped.
#ifndef OPSCOPE_REPORT_HTML_PAGE_H_
#define OPSCOPE_REPORT_HTML_PAGE_H_

#include <string>
#include <string_view>

#include "report/result_table.h"

namespace opscope::report {

// From <!DOCTYPE html> to the opening <body>.
std::string PageHead(std::string_view title);
// The report script and the closing tags.
std::string PageEnd();
// The pages' style with every rule limited to elements under `scope` (a CSS
// selector, ".opscope-report"): for a fragment inside another page (Jupyter).
std::string ScopedStyle(std::string_view scope);

struct TableHtmlOptions {
  std::string anchor;       // the heading's id ("" none)
  bool all_columns = true;  // false: the terminal's columns only
  std::string csv_link;     // a relative link to the table's CSV ("" none)
};

// The table's title as a heading, the table (sortable: numbers carry their
// full value in data-v), its notes.
// Escaped text with a line-break opportunity (<wbr>) after each path
// separator: a long path wraps between its folders, never inside a name.
std::string BreakAtSeparators(const std::string& escaped);

std::string TableHtml(const ResultTable& t, const TableHtmlOptions& options);

}  // namespace opscope::report

#endif  // OPSCOPE_REPORT_HTML_PAGE_H_
