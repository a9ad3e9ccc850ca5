#include "report/result_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "opscope/opscope.h"

namespace opscope::report {
namespace {

ResultTable Sample() {
  ResultTable t;
  t.section = "ops";
  t.title = "Operators";
  t.columns = {
      {"operator", "Operator"},
      {.key = "count", .header = "Count", .unit = Unit::kCount},
      {.key = "total_ns", .header = "Total ms", .precision = 3, .unit = Unit::kTime, .scale = 1e6}};
  t.AddRow({std::string("matmul"), int64_t{3}, 1.5});
  t.AddRow({std::string("<img src=x onerror=alert(1)>,\"\n\x1b[2J"), int64_t{1}, Value{}});
  return t;
}

TEST(ResultTable, TableAlignsAndEscapesTerminalControls) {
  std::ostringstream out;
  WriteTable(out, {Sample()});
  const std::string s = out.str();
  EXPECT_NE(s.find("Operators\n"), std::string::npos);
  EXPECT_NE(s.find("1.500"), std::string::npos);
  EXPECT_NE(s.find("n/a"), std::string::npos);
  EXPECT_EQ(s.find('\x1b'), std::string::npos);
  EXPECT_NE(s.find("\\x1b[2J"), std::string::npos);
}

TEST(ResultTable, CsvQuotesUntrustedStrings) {
  std::ostringstream out;
  WriteCsv(out, {Sample()});
  // Machine keys and base units: 1.5 ms is 1500000 ns.
  EXPECT_EQ(out.str(),
            "operator,count,total_ns\n"
            "matmul,3,1500000\n"
            "\"<img src=x onerror=alert(1)>,\"\"\n\\x1b[2J\",1,\n");
}

TEST(ResultTable, JsonHasTheSharedShape) {
  std::ostringstream out;
  WriteJson(out, "bench", {Sample()});
  const std::string s = out.str();
  EXPECT_EQ(s.rfind("{\"schema_version\":4,\"opscope_version\":\"", 0), 0u);
  EXPECT_NE(s.find("\"command\":\"bench\""), std::string::npos);
  EXPECT_NE(s.find("\"machine\":{\"host\":"), std::string::npos);
  // Every row names its table, one table or several (docs/analysis-json.md).
  EXPECT_NE(s.find("\"operator\":\"matmul\",\"count\":3,\"total_ns\":1500000}"), std::string::npos);
  EXPECT_NE(s.find("{\"section\":\"" + Sample().section + "\",\"operator\":\"matmul\""),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("\"total_ns\":null"), std::string::npos);
  EXPECT_NE(s.find("\\u003cimg"), std::string::npos);
}

TEST(ResultTable, SeveralTablesNameTheirSection) {
  ResultTable second = Sample();
  second.section = "more";
  std::ostringstream out;
  WriteJson(out, "x", {Sample(), second});
  EXPECT_NE(out.str().find("{\"section\":\"more\",\"operator\":\"matmul\""), std::string::npos);
}

TEST(ResultTable, RowWidthMustMatchColumns) {
  ResultTable t = Sample();
  EXPECT_THROW(t.AddRow({int64_t{1}}), Error);
  EXPECT_THROW(ParseFormat("xml"), Error);
}

TEST(ColumnUnits, TheDeclaredScaleNotTheKeysSpelling) {
  // JSON writes a column's key as declared and its values times its scale; a
  // key that looks like a unit ("x_us") is only a name.
  ResultTable t;
  t.columns = {
      {.key = "x_ns", .header = "X us", .unit = Unit::kTime, .scale = 1e3},
      {"y_us", "Y"},
      {.key = "bytes_per_s", .header = "GB/s", .unit = Unit::kBytesPerSecond, .scale = 1e9},
      {.key = "flops", .header = "GFLOP", .unit = Unit::kFlop, .scale = 1e9}};
  t.AddRow({1.5, 1.5, 2.0, int64_t{3}});
  std::ostringstream out;
  WriteJson(out, "x", {t});
  EXPECT_NE(out.str().find("\"x_ns\":1500,\"y_us\":1.5,\"bytes_per_s\":2000000000,"
                           "\"flops\":3000000000}"),
            std::string::npos)
      << out.str();
  // People's tables render by the declared unit: a time humanised, a key
  // spelt like a time but declared nothing left as it is.
  const TableView v = ViewOf(t, true);
  EXPECT_EQ(v.headers, (std::vector<std::string>{"X", "Y", "GB/s", "GFLOP"}));
  EXPECT_EQ(v.cells[0][0], "1.500 µs");
  EXPECT_EQ(v.cells[0][1], "1.50");
}

TEST(ColumnUnits, CsvValuesInBaseUnits) {
  EXPECT_EQ(CsvValue(1.234, {.key = "x_ns", .header = "X", .unit = Unit::kTime, .scale = 1e3}),
            "1234");
  EXPECT_EQ(CsvValue(0.0005, {.key = "x_ns", .header = "X", .unit = Unit::kTime, .scale = 1e3}),
            "0.5");
  EXPECT_EQ(
      CsvValue(int64_t{3},
               {.key = "m_bytes", .header = "M", .unit = Unit::kBytes, .scale = 1024.0 * 1024}),
      "3145728");
  EXPECT_EQ(CsvValue(Value{}, {.key = "x_ns", .header = "X", .unit = Unit::kTime, .scale = 1e3}),
            "");
  EXPECT_EQ(CsvValue(std::string("a,b"), {"s", "S"}), "\"a,b\"");
}

TEST(TableView, TimesAndBytesInTheUnitThatSuitsEachValue) {
  ResultTable t;
  t.columns = {
      {.key = "self_ns", .header = "Self us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
      {.key = "wait_ns", .header = "Wait (ms)", .precision = 3, .unit = Unit::kTime, .scale = 1e6},
      {.key = "size_bytes", .header = "Bytes", .unit = Unit::kBytes},
      {.key = "peak_bytes", .header = "Peak MiB", .unit = Unit::kBytes, .scale = 1024.0 * 1024},
      {.key = "count", .header = "Count", .unit = Unit::kCount}};
  t.AddRow({1355.2, 29930.0, int64_t{512}, 1536.0, int64_t{7}});
  t.AddRow({0.5, 0.001, int64_t{3 << 20}, 0.5, int64_t{8}});
  const TableView v = ViewOf(t, true);
  EXPECT_EQ(v.headers, (std::vector<std::string>{"Self", "Wait", "Bytes", "Peak", "Count"}));
  EXPECT_EQ(v.cells[0],
            (std::vector<std::string>{"1.355 ms", "29.93 s", "512 B", "1.50 GiB", "7"}));
  EXPECT_EQ(v.cells[1], (std::vector<std::string>{"500 ns", "1 µs", "3.00 MiB", "512.0 KiB", "8"}));
}

// A column with no value in any row (the device columns of a CPU trace) is
// left out of the tables for people, kept in the files; one value keeps it.
TEST(TableView, AColumnWithNoValueIsLeftOutForPeople) {
  ResultTable t;
  t.columns = {{"operator", "Operator"},
               {.key = "device_ns", .header = "Device", .unit = Unit::kTime},
               {.key = "self_ns", .header = "Self", .unit = Unit::kTime}};
  t.AddRow({std::string("aten::mm"), Value{}, int64_t{2000}});
  t.AddRow({std::string("aten::add"), Value{}, int64_t{1000}});
  EXPECT_EQ(ViewOf(t, true).headers, (std::vector<std::string>{"Operator", "Self"}));
  EXPECT_EQ(ViewOf(t, false).headers, (std::vector<std::string>{"Operator", "Device", "Self"}));
  std::ostringstream csv;
  WriteCsv(csv, {t});
  EXPECT_NE(csv.str().find("device_ns"), std::string::npos) << csv.str();
  t.rows[1][1] = int64_t{500};
  EXPECT_EQ(ViewOf(t, true).headers.size(), 3u);
}

TEST(TableView, WholeMicrosecondsGetNoDecimals) {
  // Kineto's integer-microsecond timestamps: 9 us is "9 µs", not "9.000 µs".
  ResultTable t;
  t.columns = {
      {.key = "p50_ns", .header = "p50 us", .precision = 3, .unit = Unit::kTime, .scale = 1e3}};
  t.AddRow({9.0});
  t.AddRow({1234.0});
  const TableView v = ViewOf(t, true);
  EXPECT_EQ(v.cells[0][0], "9 µs");
  EXPECT_EQ(v.cells[1][0], "1.234 ms");
  t.AddRow({9.5});  // a half microsecond: the data resolve nanoseconds
  EXPECT_EQ(ViewOf(t, true).cells[0][0], "9.000 µs");
}

TEST(TableView, NamesAreShortenedTemplatesFirst) {
  const std::string kernel =
      "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, "
      "float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2> "
      ">(int, at::native::AUnaryFunctor<float, float, float, "
      "at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2>)";
  EXPECT_EQ(ShortenName(kernel, 70), "void at::native::vectorized_elementwise_kernel<…>(…)");
  EXPECT_EQ(ShortenName("aten::convolution_backward", 30), "aten::convolution_backward");
  // A little too long: the beginning is kept.
  EXPECT_EQ(ShortenName("aten::convolution_backward_x", 20), "aten::convolution_b…");
  // Still too long once collapsed: the middle goes, the ends stay.
  // 24 points: the first 15, "…", the last 8.
  EXPECT_EQ(ShortenName(kernel, 24), "void at::native…el<…>(…)");
}

TEST(TableView, TheTerminalTableFitsItsWidth) {
  ResultTable t;
  t.title = "wide";
  t.columns = {{"name", "Name"}, {"why", "Why"}};
  for (int i = 0; i < 3; ++i) {
    t.AddRow({"void very::long::kernel<" + std::string(150, 'x') + ">(int)",
              std::string("a reason that goes on ") + std::string(20, 'y') +
                  " and on and on and on "
                  "and on, long after any table column could hold it in one line"});
  }
  std::ostringstream out;
  WriteTable(out, {t});
  std::istringstream lines(out.str());
  size_t widest = 0, rows = 0;
  for (std::string line; std::getline(lines, line); ++rows) {
    widest =
        std::max(widest, static_cast<size_t>(std::count_if(line.begin(), line.end(), [](char c) {
                   return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
                 })));
  }
  EXPECT_LE(widest, 120u) << out.str();
  EXPECT_GT(rows, 3u + 3u);  // the reasons were wrapped onto more lines
  EXPECT_NE(out.str().find("void very::long::kernel<…>(int)"), std::string::npos) << out.str();
}

// A word of megabytes (an operator name a trace claims) in prose is wrapped
// in time linear in its length and shown by its beginning and end: a few
// lines, not thousands (issue 39: a 4 MiB name took minutes on a terminal).
TEST(TableView, AHugeWordIsShownByItsEnds) {
  ResultTable t;
  t.title = "huge";
  t.columns = {{"why", "Why"}};
  t.AddRow({"because " + std::string(4 << 20, 'x') + "y it was"});
  t.notes.push_back("note: " + std::string(1 << 20, 'z') + " end");
  std::ostringstream out;
  WriteTable(out, {t});
  const std::string text = out.str();
  EXPECT_LT(text.size(), 20000u);
  EXPECT_NE(text.find("because"), std::string::npos);
  EXPECT_NE(text.find("…"), std::string::npos);
  EXPECT_NE(text.find("xy"), std::string::npos) << "the word's end is kept";
  EXPECT_NE(text.find("it was"), std::string::npos);
  EXPECT_NE(text.find("end"), std::string::npos) << "a note's words after it too";
}

TEST(TableView, DifferentNamesStayDistinctWhenShortened) {
  // Three kernels that differ only inside their template arguments, and one of
  // them twice: collapsed alike ("kernel<…>(int)"), told apart again; the
  // same name stays the same.
  ResultTable t;
  t.columns = {{"name", "Name"}, {"why", "Why"}};
  const std::string why(90, 'w');
  const std::vector<std::string> names = {
      "void very::long::kernel<" + std::string(150, 'a') + ", float>(int)",
      "void very::long::kernel<" + std::string(150, 'a') + ", half>(int)",
      "void very::long::kernel<" + std::string(150, 'b') + ", float>(int)",
      "void very::long::kernel<" + std::string(150, 'a') + ", float>(int)"};
  for (const std::string& n : names) t.AddRow({n, why});
  const TableView v = ViewOf(t, true, 120);
  std::set<std::string> shown;
  for (size_t r = 0; r < 3; ++r) {
    EXPECT_LE(v.cells[r][0].size(), names[r].size());
    shown.insert(v.cells[r][0]);
  }
  EXPECT_EQ(shown.size(), 3u) << v.cells[0][0] << " | " << v.cells[1][0] << " | " << v.cells[2][0];
  EXPECT_EQ(v.cells[3][0], v.cells[0][0]);
  std::ostringstream out;
  WriteTable(out, {t});
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(std::count_if(line.begin(), line.end(),
                            [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }),
              120)
        << line;
  }
}

// Twelve columns whose headers alone are wider than a terminal; row r holds
// 100 r + column.
ResultTable WideTable(int rows) {
  ResultTable t;
  for (int i = 0; i < 12; ++i) {
    t.columns.push_back(
        {"column_" + std::to_string(i), "A long column header " + std::to_string(i)});
  }
  for (int r = 0; r < rows; ++r) {
    std::vector<Value> row;
    for (int i = 0; i < 12; ++i) row.push_back(int64_t{100 * r + i});
    t.AddRow(row);
  }
  return t;
}

TEST(TableView, AWideTableOfOneRowIsShownAsPairs) {
  const ResultTable t = WideTable(1);
  std::ostringstream out;
  WriteTable(out, {t});
  EXPECT_NE(out.str().find("Field"), std::string::npos);
  EXPECT_NE(out.str().find("A long column header 11  11"), std::string::npos) << out.str();
}

TEST(TableView, AWideTableOfManyRowsIsShownInBlocksOfColumns) {
  const ResultTable t = WideTable(2);
  std::ostringstream out;
  WriteTable(out, {t});
  const std::string s = out.str();
  // Every column is shown once, the first in every block.
  for (int i = 1; i < 12; ++i) {
    const std::string header = "A long column header " + std::to_string(i);
    EXPECT_TRUE(s.find(header + " ") != std::string::npos ||
                s.find(header + "\n") != std::string::npos)
        << header;
  }
  size_t blocks = 0;
  for (size_t at = s.find("A long column header 0"); at != std::string::npos;
       at = s.find("A long column header 0", at + 1)) {
    ++blocks;
  }
  EXPECT_GE(blocks, 3u) << s;
}

}  // namespace
}  // namespace opscope::report
