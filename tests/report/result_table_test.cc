#include "report/result_table.h"

#include <gtest/gtest.h>

#include <sstream>

#include "opscope/opscope.h"

namespace opscope::report {
namespace {

ResultTable Sample() {
  ResultTable t;
  t.section = "ops";
  t.title = "Operators";
  t.columns = {{"operator", "Operator"}, {"count", "Count"}, {"total_ms", "Total ms", 3}};
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
  EXPECT_EQ(out.str(),
            "Operator,Count,Total ms\n"
            "matmul,3,1.500\n"
            "\"<img src=x onerror=alert(1)>,\"\"\n\\x1b[2J\",1,\n");
}

TEST(ResultTable, JsonHasTheSharedShape) {
  std::ostringstream out;
  WriteJson(out, "bench", {Sample()});
  const std::string s = out.str();
  EXPECT_EQ(s.rfind("{\"schema_version\":1,\"opscope_version\":\"", 0), 0u);
  EXPECT_NE(s.find("\"command\":\"bench\""), std::string::npos);
  EXPECT_NE(s.find("\"machine\":{\"host\":"), std::string::npos);
  EXPECT_NE(s.find("{\"operator\":\"matmul\",\"count\":3,\"total_ms\":1.5}"), std::string::npos);
  EXPECT_NE(s.find("\"total_ms\":null"), std::string::npos);
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

}  // namespace
}  // namespace opscope::report
