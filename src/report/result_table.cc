#include "report/result_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <map>
#include <optional>
#include <tuple>

#include "core/machine.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::report {
namespace {

std::string Render(const Value& value, int precision) {
  if (std::holds_alternative<std::monostate>(value)) return "n/a";
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) return fmt::format("{:.{}f}", *d, precision);
  return std::get<std::string>(value);
}

bool IsNumeric(const Value& value) {
  return std::holds_alternative<int64_t>(value) || std::holds_alternative<double>(value);
}

// Display width of UTF-8 text, counting code points (good enough for alignment).
size_t Width(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// A number times `factor` (its column's scale), in JSON's and CSV's form: an integer
// when it is one, else rounded to a thousandth of the base unit (a picosecond,
// a thousandth of a byte), the noise of the unit change left out.
std::string Scaled(double v, double factor) {
  if (factor == 1) return fmt::format("{}", v);
  const double x = MachineNumber(v, factor);
  if (std::fabs(x) < 9e15 && x == std::floor(x)) return std::to_string(static_cast<int64_t>(x));
  return fmt::format("{}", x);
}

void AppendJsonValue(std::string& out, const Value& value, double factor = 1) {
  if (std::holds_alternative<std::monostate>(value)) {
    out += "null";
  } else if (const auto* i = std::get_if<int64_t>(&value)) {
    if (factor == 1) {
      core::AppendInt(out, *i);
    } else {
      out += Scaled(static_cast<double>(*i), factor);
    }
  } else if (const auto* d = std::get_if<double>(&value)) {
    if (factor == 1 || !std::isfinite(*d)) {
      core::AppendJsonNumber(out, *d);
    } else {
      out += Scaled(*d, factor);
    }
  } else {
    core::AppendJsonString(out, std::get<std::string>(value));
  }
}

std::optional<double> AsDouble(const Value& v) {
  if (const auto* d = std::get_if<double>(&v))
    return std::isfinite(*d) ? std::optional(*d) : std::nullopt;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::nullopt;
}

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// `header` without the unit it ends with ("Self us" -> "Self", "Start (ms)"
// -> "Start"): each cell names its own unit. A header that is only a unit
// ("MiB") becomes what the column measures ("Size").
std::string WithoutUnit(std::string header, Unit unit) {
  for (const std::string_view name : {"(ns)", "(us)", "(µs)", "(ms)", "(s)", "ns", "us", "µs", "ms",
                                      "MiB", "KiB", "GiB", "MB", "KB", "GB", "bytes", "Bytes"}) {
    if (!header.ends_with(name)) continue;
    const size_t at = header.size() - name.size();
    if (at == 0) return name.ends_with("ytes") ? header : unit == Unit::kTime ? "Time" : "Size";
    if (IsWordChar(header[at - 1])) continue;
    std::string rest = header.substr(0, at);
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == ',')) rest.pop_back();
    return rest.empty() ? header : rest;
  }
  return header;
}

// Four significant digits at most ("1.355", "12.34", "123.4"), fewer when the
// value has no more ("9").
std::string FourDigits(double v, int max_decimals) {
  const double a = std::fabs(v);
  int decimals = a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : 3;
  decimals = std::min(decimals, max_decimals);
  std::string text = fmt::format("{:.{}f}", v, decimals);
  if (text.front() == '-' && std::stod(text) == 0) text.erase(0, 1);  // no "-0"
  return text;
}

}  // namespace

std::string HumanDuration(double ns, bool whole_us) {
  const double a = std::fabs(ns);
  if (a >= 1e9) return FourDigits(ns / 1e9, 3) + " s";
  if (a >= 1e6) return FourDigits(ns / 1e6, 3) + " ms";
  if (a >= 1e3 || whole_us) return FourDigits(ns / 1e3, whole_us ? 0 : 3) + " µs";
  return FourDigits(ns, 0) + " ns";
}

namespace {

std::string HumanBytes(double bytes) {
  const double a = std::fabs(bytes);
  if (a >= 1024.0 * 1024 * 1024) return FourDigits(bytes / (1024.0 * 1024 * 1024), 2) + " GiB";
  if (a >= 1024.0 * 1024) return FourDigits(bytes / (1024.0 * 1024), 2) + " MiB";
  if (a >= 1024) return FourDigits(bytes / 1024, 2) + " KiB";
  return FourDigits(bytes, 0) + " B";
}

// `text` with its first `keep_head` and last `keep_tail` code points and "…"
// between them.
std::string CutTo(std::string_view text, size_t keep_head, size_t keep_tail) {
  const auto byte_of = [&](size_t points) {  // byte offset of the code point
    size_t seen = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
        if (seen == points) return i;
        ++seen;
      }
    }
    return text.size();
  };
  const size_t total = Width(text);
  const size_t head_end = byte_of(keep_head);
  const size_t tail_begin = byte_of(total - std::min(total, keep_tail));
  return std::string(text.substr(0, head_end)) + "…" + std::string(text.substr(tail_begin));
}

// Collapses what is inside `open`...`close` at depth 1 to "…".
std::string Collapse(std::string_view text, char open, char close) {
  std::string out;
  int depth = 0;
  for (const char c : text) {
    if (c == open) {
      if (depth++ == 0) out += c, out += "…";
      continue;
    }
    if (c == close && depth > 0) {
      if (--depth == 0) out += c;
      continue;
    }
    if (depth == 0) out += c;
  }
  return out;
}

// Columns of names (operators, kernels, APIs): shortened on a terminal;
// other text (notes, reasons, evidence) is wrapped instead.
bool IsNameKey(std::string_view key) {
  return key == "name" || key == "operator" || key == "kernel" || key == "producer" ||
         key == "consumer" || key == "api" || key.ends_with("_name") || key.ends_with("_op");
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t begin = 0;
  for (size_t end = text.find('\n'); end != std::string_view::npos; end = text.find('\n', begin)) {
    out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  out.push_back(text.substr(begin));
  return out;
}

// `text` wrapped at spaces into lines of at most `width` code points (a word
// longer than that is cut; one longer than kMaxWordLines lines is shown by
// its beginning and end: a terminal shows it, the CSV and JSON hold it
// whole), joined with '\n'. Linear in the text.
constexpr size_t kMaxWordLines = 8;

std::string Wrap(std::string_view text, size_t width) {
  std::string out, line;
  size_t line_width = 0;
  const auto flush = [&] {
    if (!out.empty()) out += '\n';
    out += line;
    line.clear();
    line_width = 0;
  };
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(at, end - at);
    size_t points = Width(word);
    std::string shortened;
    if (points > kMaxWordLines * width) {
      const size_t keep = kMaxWordLines * width / 2;
      shortened = CutTo(word, keep, keep - 1);
      word = shortened, points = 2 * keep;
    }
    while (points > width) {  // a word longer than a line: cut it
      if (!line.empty()) flush();
      size_t cut = 0, taken = 0;
      while (cut < word.size() && taken < width) {
        ++cut;
        while (cut < word.size() && (static_cast<unsigned char>(word[cut]) & 0xC0) == 0x80) ++cut;
        ++taken;
      }
      line = std::string(word.substr(0, cut));
      flush();
      word = word.substr(cut), points -= taken;
    }
    if (!line.empty() && line_width + 1 + points > width) flush();
    if (!line.empty()) line += ' ', ++line_width;
    line += word, line_width += points;
    at = end + 1;
  }
  if (!line.empty()) flush();
  return out;
}

// A shown column's width: its header's and its cells' widest line.
size_t ColumnWidth(const TableView& view, size_t c) {
  size_t width = Width(view.headers[c]);
  for (const auto& row : view.cells) {
    for (const std::string_view line : Lines(row[c])) width = std::max(width, Width(line));
  }
  return width;
}

std::vector<size_t> ColumnWidths(const TableView& view) {
  std::vector<size_t> widths;
  for (size_t c = 0; c < view.headers.size(); ++c) widths.push_back(ColumnWidth(view, c));
  return widths;
}

// A table's width: its columns and the two spaces between each.
size_t TotalWidth(const std::vector<size_t>& widths) {
  size_t sum = widths.empty() ? 0 : 2 * (widths.size() - 1);
  for (const size_t w : widths) sum += w;
  return sum;
}

}  // namespace

std::string CsvValue(const Value& value, const Column& column) {
  if (std::holds_alternative<std::monostate>(value)) return {};
  const double factor = column.scale;
  if (const auto* d = std::get_if<double>(&value)) return Scaled(*d, factor);
  if (const auto* i = std::get_if<int64_t>(&value)) {
    return factor == 1 ? std::to_string(*i) : Scaled(static_cast<double>(*i), factor);
  }
  return core::EscapeCsvField(std::get<std::string>(value));
}

double MachineNumber(double v, double factor) {
  if (factor == 1 || !std::isfinite(v)) return v;
  return std::round(v * factor * 1000) / 1000;
}

std::string ShortenName(std::string_view text, size_t width) {
  if (Width(text) <= width) return std::string(text);
  // Prose (a note, a path) keeps its beginning; code names (C++ kernels,
  // templates) lose their template arguments and parameters first.
  const bool code =
      text.find("::") != std::string_view::npos || text.find('<') != std::string_view::npos;
  // A little too long, or not code: keep the beginning.
  if (!code || Width(text) <= width * 3 / 2) {
    return width < 2 ? CutTo(text, 0, 0) : CutTo(text, width - 1, 0);
  }
  std::string shorter = Collapse(text, '<', '>');
  if (Width(shorter) > width) shorter = Collapse(shorter, '(', ')');
  if (Width(shorter) <= width) return shorter;
  if (width < 2) return CutTo(shorter, 0, 0);
  const size_t head = (width - 1) * 2 / 3;
  return CutTo(shorter, head, width - 1 - head);
}

// Different names that shortened alike (two kernels that differ only in
// their template arguments) are told apart again: cut keeping more of their
// ends, else numbered in row order ("…~2"). Equal names stay equal.
void KeepDistinct(const std::vector<std::string>& whole, size_t width,
                  std::vector<std::vector<std::string>>& cells, size_t c) {
  // The rows whose short form is shared with a different name.
  const auto clashing = [&](const std::vector<size_t>& rows) {
    std::map<std::string, std::vector<size_t>> by_short;
    for (const size_t r : rows) by_short[cells[r][c]].push_back(r);
    std::vector<size_t> out;
    for (const auto& entry : by_short) {
      const std::vector<size_t>& group = entry.second;  // (a lambda may not capture a binding)
      const size_t first = group[0];
      const bool mixed = std::any_of(group.begin(), group.end(),
                                     [&](size_t r) { return whole[r] != whole[first]; });
      if (mixed) out.insert(out.end(), group.begin(), group.end());
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  std::vector<size_t> all(cells.size());
  for (size_t r = 0; r < all.size(); ++r) all[r] = r;
  std::vector<size_t> rows = clashing(all);
  if (rows.empty() || width < 6) return;
  for (const size_t r : rows) {
    const size_t head = (width - 1) / 3;
    cells[r][c] = CutTo(whole[r], head, width - 1 - head);
  }
  rows = clashing(all);
  std::map<std::string, std::vector<std::string>> numbered;  // short form -> names, in row order
  std::vector<std::string> key(cells.size());
  for (const size_t r : rows) key[r] = cells[r][c];
  for (const size_t r : rows) {
    std::vector<std::string>& names = numbered[key[r]];
    auto it = std::find(names.begin(), names.end(), whole[r]);
    if (it == names.end()) it = names.insert(names.end(), whole[r]);
    const std::string mark = "~" + std::to_string(it - names.begin() + 1);
    const size_t room = width - 1 - mark.size(), head = room / 3;
    cells[r][c] = CutTo(whole[r], head, room - head) + mark;
  }
}

TableView ViewOf(const ResultTable& table, bool terminal_columns_only, size_t max_width) {
  TableView view;
  // A table for people leaves out a column with no value in any row (the
  // device columns of a trace without device work): n/a down a whole column
  // says nothing. The files (CSV, JSON) keep every column.
  const auto empty = [&](size_t i) {
    return !table.rows.empty() &&
           std::all_of(table.rows.begin(), table.rows.end(), [&](const std::vector<Value>& row) {
             return std::holds_alternative<std::monostate>(row[i]);
           });
  };
  for (size_t i = 0; i < table.columns.size(); ++i) {
    if (!terminal_columns_only || (table.columns[i].terminal && !empty(i))) {
      view.columns.push_back(i);
    }
  }
  view.cells.assign(table.rows.size(), {});
  for (const size_t i : view.columns) {
    const Column& column = table.columns[i];
    bool numeric = false, any = false;
    for (const auto& row : table.rows) {
      if (std::holds_alternative<std::monostate>(row[i])) continue;
      if (!any) numeric = IsNumeric(row[i]);
      any = true;
    }
    view.numeric.push_back(numeric);
    const bool humanise = numeric && (column.unit == Unit::kTime || column.unit == Unit::kBytes);
    // Whole microseconds (integer-µs timestamps) keep no decimals they lack.
    bool whole_us = column.unit == Unit::kTime;
    for (const auto& row : table.rows) {
      const auto v = AsDouble(row[i]);
      if (!humanise || !whole_us || !v) continue;
      const double us = *v * column.scale / 1e3;
      whole_us = std::fabs(us - std::round(us)) < 1e-6;
    }
    view.headers.push_back(humanise ? WithoutUnit(column.header, column.unit) : column.header);
    for (size_t r = 0; r < table.rows.size(); ++r) {
      const Value& v = table.rows[r][i];
      const auto number = AsDouble(v);
      if (humanise && number) {
        const double base = *number * column.scale;
        view.cells[r].push_back(column.unit == Unit::kTime ? HumanDuration(base, whole_us)
                                                           : HumanBytes(base));
      } else {
        view.cells[r].push_back(Render(v, column.precision));
      }
    }
  }
  if (max_width == 0) return view;
  // The terminal: control characters escaped first (a name's own line breaks
  // show as \n), then shorten names (the widest first) down to kMinName, then
  // wrap prose (notes, reasons, evidence) down to kMinProse, until it fits.
  for (auto& header : view.headers) header = core::EscapeForTerminal(header);
  for (auto& row : view.cells) {
    for (auto& cell : row) cell = core::EscapeForTerminal(cell);
  }
  std::vector<size_t> widths = ColumnWidths(view);
  const auto total = [&] { return TotalWidth(widths); };
  constexpr size_t kMinName = 32, kMinProse = 30;
  for (const bool names : {true, false}) {
    std::vector<size_t> order;
    for (size_t c = 0; c < widths.size(); ++c) {
      if (!view.numeric[c] && IsNameKey(table.columns[view.columns[c]].key) == names) {
        order.push_back(c);
      }
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return widths[a] > widths[b]; });
    for (const size_t c : order) {
      if (total() <= max_width) return view;
      const size_t excess = total() - max_width;
      const size_t target = std::max({names ? kMinName : kMinProse, Width(view.headers[c]),
                                      widths[c] > excess ? widths[c] - excess : 0});
      if (target >= widths[c]) continue;
      std::vector<std::string> whole;
      for (auto& row : view.cells) {
        whole.push_back(row[c]);
        row[c] = names ? ShortenName(row[c], target) : Wrap(row[c], target);
      }
      if (names) KeepDistinct(whole, target, view.cells, c);
      widths[c] = ColumnWidth(view, c);
    }
  }
  return view;
}

Format ParseFormat(std::string_view text) {
  if (text == "table") return Format::kTable;
  if (text == "json") return Format::kJson;
  if (text == "csv") return Format::kCsv;
  throw Error(ErrorCode::kInvalidArgument,
              "unknown format '" + core::EscapeForTerminal(text) + "': use table, json or csv");
}

void WriteTable(std::ostream& out, const std::vector<ResultTable>& tables) {
  constexpr size_t kTerminalWidth = 120;
  const auto prose = [&](const std::string& text) {
    out << Wrap(core::EscapeForTerminal(text), kTerminalWidth) << '\n';
  };
  bool first_table = true;
  for (const ResultTable& table : tables) {
    if (table.Hidden()) continue;
    if (!first_table) out << '\n';
    first_table = false;
    if (!table.title.empty()) prose(table.title);
    TableView view = ViewOf(table, /*terminal_columns_only=*/true, kTerminalWidth);
    std::vector<size_t> widths = ColumnWidths(view);
    // Still too wide: one row is shown as field/value pairs; more rows in
    // blocks of columns, each repeating the first column (as R prints a wide
    // data frame), so every column stays on screen.
    if (TotalWidth(widths) > kTerminalWidth && view.cells.size() == 1) {
      TableView pairs;
      pairs.headers = {"Field", "Value"};
      pairs.numeric = {false, false};
      for (size_t c = 0; c < view.headers.size(); ++c) {
        std::string value = view.cells[0][c];
        std::replace(value.begin(), value.end(), '\n', ' ');  // undo the narrow wrap
        pairs.cells.push_back({view.headers[c], Wrap(value, kTerminalWidth / 2)});
      }
      view = std::move(pairs);
      widths = ColumnWidths(view);
    }
    std::vector<std::vector<size_t>> blocks(1);
    size_t used = 0;
    for (size_t c = 0; c < widths.size(); ++c) {
      const size_t add = (blocks.back().empty() ? 0 : 2) + widths[c];
      if (!blocks.back().empty() && used + add > kTerminalWidth && blocks.back().size() > 1) {
        blocks.push_back({0});
        used = widths[0];
      }
      blocks.back().push_back(c);
      used += blocks.back().size() == 1 ? widths[c] : add;
    }
    // A row whose cells were wrapped takes as many lines as its tallest cell.
    const auto line = [&](const std::vector<std::string>& texts, const std::vector<size_t>& shown) {
      std::vector<std::vector<std::string_view>> lines;
      size_t height = 1;
      for (const size_t c : shown) {
        lines.push_back(Lines(texts[c]));
        height = std::max(height, lines.back().size());
      }
      for (size_t k = 0; k < height; ++k) {
        for (size_t j = 0; j < shown.size(); ++j) {
          const size_t c = shown[j];
          if (j > 0) out << "  ";
          const std::string_view text = k < lines[j].size() ? lines[j][k] : std::string_view();
          const std::string fill(widths[c] - Width(text), ' ');
          if (view.numeric[c]) {
            out << fill << text;
          } else {
            out << text << (j + 1 == shown.size() ? "" : fill);
          }
        }
        out << '\n';
      }
    };
    for (size_t b = 0; b < blocks.size(); ++b) {
      if (b > 0) out << '\n';
      line(view.headers, blocks[b]);
      for (size_t j = 0; j < blocks[b].size(); ++j) {
        if (j > 0) out << "  ";
        out << std::string(widths[blocks[b][j]], '-');
      }
      out << '\n';
      for (const auto& row : view.cells) line(row, blocks[b]);
    }
    for (const std::string& note : table.notes) prose(note);
  }
}

void WriteCsv(std::ostream& out, const std::vector<ResultTable>& tables) {
  const bool several = tables.size() > 1;
  bool first_table = true;
  for (const ResultTable& table : tables) {
    if (!first_table) out << '\n';
    first_table = false;
    if (several) out << "section,";
    bool first_column = true;
    for (const Column& column : table.columns) {
      if (!column.json) continue;
      out << (first_column ? "" : ",") << core::EscapeCsvField(column.key);
      first_column = false;
    }
    out << '\n';
    for (const auto& row : table.rows) {
      if (several) out << core::EscapeCsvField(table.section) << ',';
      first_column = true;
      for (size_t i = 0; i < row.size(); ++i) {
        if (!table.columns[i].json) continue;
        out << (first_column ? "" : ",");
        first_column = false;
        out << CsvValue(row[i], table.columns[i]);
      }
      out << '\n';
    }
  }
}

std::string TablesCsv(const std::vector<const ResultTable*>& tables) {
  std::string out;
  if (tables.empty()) return out;
  const std::vector<Column>& columns = tables.front()->columns;
  bool first_column = true;
  for (const Column& column : columns) {
    if (!column.json) continue;
    out += (first_column ? "" : ",") + core::EscapeCsvField(column.key);
    first_column = false;
  }
  out += '\n';
  for (const ResultTable* table : tables) {
    for (const auto& row : table->rows) {
      first_column = true;
      for (size_t i = 0; i < row.size(); ++i) {
        if (!table->columns[i].json) continue;
        if (!first_column) out += ',';
        first_column = false;
        out += CsvValue(row[i], table->columns[i]);
      }
      out += '\n';
    }
  }
  return out;
}

std::vector<CsvFile> SplitCsvFiles(const std::vector<const ResultTable*>& tables) {
  std::vector<CsvFile> files;
  std::map<std::string, int> shapes;  // section -> files so far
  for (const ResultTable* table : tables) {
    const auto same_shape = [&](const CsvFile& file) {
      const ResultTable& first = *file.tables.front();
      return first.section == table->section && first.columns.size() == table->columns.size() &&
             std::equal(first.columns.begin(), first.columns.end(), table->columns.begin(),
                        [](const Column& x, const Column& y) { return x.key == y.key; });
    };
    const auto it = std::find_if(files.begin(), files.end(), same_shape);
    if (it != files.end()) {
      it->tables.push_back(table);
      continue;
    }
    const int n = ++shapes[table->section];
    files.push_back({table->section + (n > 1 ? "_" + std::to_string(n) : "") + ".csv", {table}});
  }
  return files;
}

std::string RenderValue(const Value& value, int precision) { return Render(value, precision); }

void AppendRowsJson(std::string& s, const std::vector<ResultTable>& tables, bool name_sections) {
  bool first = true;
  for (const ResultTable& table : tables) {
    for (const auto& row : table.rows) {
      s += first ? "\n{" : ",\n{";
      first = false;
      bool first_key = true;
      if (name_sections) {
        s += "\"section\":";
        core::AppendJsonString(s, table.section);
        first_key = false;
      }
      for (size_t i = 0; i < row.size(); ++i) {
        if (!table.columns[i].json) continue;
        if (!first_key) s += ',';
        first_key = false;
        core::AppendJsonString(s, table.columns[i].key);
        s += ':';
        AppendJsonValue(s, row[i], table.columns[i].scale);
      }
      s += '}';
    }
  }
}

std::string JsonHead(std::string_view command) {
  std::string s = "{\"schema_version\":";
  core::AppendInt(s, OPSCOPE_SCHEMA_VERSION);
  s += ",\"opscope_version\":\"" OPSCOPE_VERSION_STRING "\",\"command\":";
  core::AppendJsonString(s, command);
  s += ",\"machine\":" + core::MachineJson();
  return s;
}

namespace {

std::string_view BaseUnit(Unit unit) {
  switch (unit) {
    case Unit::kNone: return "";
    case Unit::kTime: return "ns";
    case Unit::kBytes: return "bytes";
    case Unit::kFlop: return "flop";
    case Unit::kFlopPerSecond: return "flop_per_s";
    case Unit::kBytesPerSecond: return "bytes_per_s";
    case Unit::kPercent: return "percent";
    case Unit::kCount: return "count";
  }
  return "";
}

}  // namespace

void WriteJson(std::ostream& out, std::string_view command,
               const std::vector<ResultTable>& tables) {
  std::string s = JsonHead(command) + ",\"results\":[";
  // Every row names its table, one table or several (docs/analysis-json.md).
  AppendRowsJson(s, tables, /*name_sections=*/true);
  // Every table, empty ones included, with its columns: what `results` holds
  // rows of, and the columns of a table that has none.
  s += "\n],\"tables\":[";
  for (size_t i = 0; i < tables.size(); ++i) {
    const ResultTable& t = tables[i];
    s += i == 0 ? "\n{\"section\":" : ",\n{\"section\":";
    core::AppendJsonString(s, t.section);
    s += ",\"title\":";
    core::AppendJsonString(s, t.title);
    s += ",\"rows\":";
    core::AppendInt(s, static_cast<int64_t>(t.rows.size()));
    s += ",\"columns\":[";
    bool first = true;
    for (const Column& c : t.columns) {
      if (!c.json) continue;
      s += first ? "{\"key\":" : ",{\"key\":";
      first = false;
      core::AppendJsonString(s, c.key);
      s += ",\"unit\":";
      const std::string_view unit = BaseUnit(c.unit);
      if (unit.empty()) {
        s += "null";
      } else {
        core::AppendJsonString(s, unit);
      }
      s += '}';
    }
    s += "]}";
  }
  s += "\n]}\n";
  out << s;
}

void Write(std::ostream& out, Format format, std::string_view command,
           const std::vector<ResultTable>& tables) {
  switch (format) {
    case Format::kTable: WriteTable(out, tables); break;
    case Format::kJson: WriteJson(out, command, tables); break;
    case Format::kCsv: WriteCsv(out, tables); break;
  }
}

}  // namespace opscope::report
