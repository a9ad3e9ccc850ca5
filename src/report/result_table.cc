#include "report/result_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

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

void AppendJsonValue(std::string& out, const Value& value) {
  if (std::holds_alternative<std::monostate>(value)) {
    out += "null";
  } else if (const auto* i = std::get_if<int64_t>(&value)) {
    core::AppendInt(out, *i);
  } else if (const auto* d = std::get_if<double>(&value)) {
    core::AppendJsonNumber(out, *d);
  } else {
    core::AppendJsonString(out, std::get<std::string>(value));
  }
}

}  // namespace

Format ParseFormat(std::string_view text) {
  if (text == "table") return Format::kTable;
  if (text == "json") return Format::kJson;
  if (text == "csv") return Format::kCsv;
  throw Error(ErrorCode::kInvalidArgument,
              "unknown format '" + core::EscapeForTerminal(text) + "': use table, json or csv");
}

void ResultTable::AddRow(std::vector<Value> row) {
  if (row.size() != columns.size()) {
    throw Error(ErrorCode::kInternal, "table '" + section + "': row has " +
                                          std::to_string(row.size()) + " values for " +
                                          std::to_string(columns.size()) + " columns");
  }
  rows.push_back(std::move(row));
}

void WriteTable(std::ostream& out, const std::vector<ResultTable>& tables) {
  bool first_table = true;
  for (const ResultTable& table : tables) {
    if (!first_table) out << '\n';
    first_table = false;
    if (!table.title.empty()) out << core::EscapeForTerminal(table.title) << '\n';
    std::vector<size_t> shown;
    for (size_t i = 0; i < table.columns.size(); ++i) {
      if (table.columns[i].terminal) shown.push_back(i);
    }
    std::vector<std::vector<std::string>> cells;
    std::vector<size_t> widths;
    for (const size_t i : shown) widths.push_back(Width(table.columns[i].header));
    for (const auto& row : table.rows) {
      std::vector<std::string> rendered;
      for (size_t c = 0; c < shown.size(); ++c) {
        const size_t i = shown[c];
        rendered.push_back(core::EscapeForTerminal(Render(row[i], table.columns[i].precision)));
        widths[c] = std::max(widths[c], Width(rendered.back()));
      }
      cells.push_back(std::move(rendered));
    }
    const auto pad = [&](const std::string& text, size_t width, bool right, bool last) {
      const std::string fill(width - Width(text), ' ');
      out << (right ? fill + text : (last ? text : text + fill));
    };
    const auto numeric_column = [&](size_t i) {
      for (const auto& row : table.rows) {
        if (!std::holds_alternative<std::monostate>(row[i])) return IsNumeric(row[i]);
      }
      return false;
    };
    for (size_t c = 0; c < shown.size(); ++c) {
      if (c > 0) out << "  ";
      pad(core::EscapeForTerminal(table.columns[shown[c]].header), widths[c],
          numeric_column(shown[c]), c + 1 == shown.size());
    }
    out << '\n';
    for (size_t c = 0; c < shown.size(); ++c) {
      if (c > 0) out << "  ";
      out << std::string(widths[c], '-');
    }
    out << '\n';
    for (size_t r = 0; r < cells.size(); ++r) {
      for (size_t c = 0; c < shown.size(); ++c) {
        if (c > 0) out << "  ";
        pad(cells[r][c], widths[c], numeric_column(shown[c]), c + 1 == shown.size());
      }
      out << '\n';
    }
    for (const std::string& note : table.notes) out << core::EscapeForTerminal(note) << '\n';
  }
}

void WriteCsv(std::ostream& out, const std::vector<ResultTable>& tables) {
  const bool several = tables.size() > 1;
  bool first_table = true;
  for (const ResultTable& table : tables) {
    if (!first_table) out << '\n';
    first_table = false;
    if (several) out << "section,";
    for (size_t i = 0; i < table.columns.size(); ++i) {
      out << (i > 0 ? "," : "") << core::EscapeCsvField(table.columns[i].header);
    }
    out << '\n';
    for (const auto& row : table.rows) {
      if (several) out << core::EscapeCsvField(table.section) << ',';
      for (size_t i = 0; i < row.size(); ++i) {
        out << (i > 0 ? "," : "");
        out << (std::holds_alternative<std::monostate>(row[i])
                    ? std::string()
                    : core::EscapeCsvField(Render(row[i], table.columns[i].precision)));
      }
      out << '\n';
    }
  }
}

std::string TablesCsv(const std::vector<const ResultTable*>& tables) {
  std::string out;
  if (tables.empty()) return out;
  const std::vector<Column>& columns = tables.front()->columns;
  for (size_t i = 0; i < columns.size(); ++i) {
    out += (i > 0 ? "," : "") + core::EscapeCsvField(columns[i].key);
  }
  out += '\n';
  for (const ResultTable* table : tables) {
    for (const auto& row : table->rows) {
      for (size_t i = 0; i < row.size(); ++i) {
        if (i > 0) out += ',';
        if (const auto* d = std::get_if<double>(&row[i])) {
          out += fmt::format("{}", *d);  // every digit the JSON has, not the display's
        } else if (!std::holds_alternative<std::monostate>(row[i])) {
          out += core::EscapeCsvField(Render(row[i], table->columns[i].precision));
        }
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
        if (!first_key) s += ',';
        first_key = false;
        core::AppendJsonString(s, table.columns[i].key);
        s += ':';
        AppendJsonValue(s, row[i]);
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

void WriteJson(std::ostream& out, std::string_view command,
               const std::vector<ResultTable>& tables) {
  std::string s = JsonHead(command) + ",\"results\":[";
  AppendRowsJson(s, tables, tables.size() > 1);
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
