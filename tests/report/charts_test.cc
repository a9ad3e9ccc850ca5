// Chart axes and their tick labels, and the escaping of what charts show.
#include "report/charts.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace opscope::report {
namespace {

std::vector<std::string> Labels(double lo, double hi, bool log, TickStyle style) {
  std::vector<std::string> out;
  for (const auto& [value, label] : Ticks(lo, hi, log, style)) out.push_back(label);
  return out;
}

TEST(Charts, TickLabels) {
  EXPECT_EQ(TickLabel(2.5e12, TickStyle::kSi), "2.5 T");
  EXPECT_EQ(TickLabel(1e9, TickStyle::kSi), "1 G");
  EXPECT_EQ(TickLabel(0.01, TickStyle::kSi), "0.01");
  EXPECT_EQ(TickLabel(4096, TickStyle::kBytes), "4 KiB");
  EXPECT_EQ(TickLabel(1536.0 * 1024 * 1024, TickStyle::kBytes), "1.5 GiB");
  EXPECT_EQ(TickLabel(512, TickStyle::kBytes), "512 B");
  EXPECT_EQ(TickLabel(1e6, TickStyle::kPlain), "1e+06");
}

TEST(Charts, LogTicksAreDecadesOrPowersOfTwo) {
  EXPECT_EQ(Labels(1e9, 1e13, true, TickStyle::kSi),
            (std::vector<std::string>{"1 G", "10 G", "100 G", "1 T", "10 T"}));
  // Two decades or fewer: 2x and 5x between them.
  EXPECT_EQ(Labels(0.1, 10, true, TickStyle::kPlain),
            (std::vector<std::string>{"0.1", "0.2", "0.5", "1", "2", "5", "10"}));
  EXPECT_EQ(Labels(1024, 16384, true, TickStyle::kBytes),
            (std::vector<std::string>{"1 KiB", "2 KiB", "4 KiB", "8 KiB", "16 KiB"}));
  // A wide byte range: at most about ten ticks.
  EXPECT_LE(Ticks(1, 1ull << 40, true, TickStyle::kBytes).size(), 11u);
}

TEST(Charts, LinearTicksAreRoundSteps) {
  EXPECT_EQ(Labels(0, 100, false, TickStyle::kPlain),
            (std::vector<std::string>{"0", "20", "40", "60", "80", "100"}));
  EXPECT_TRUE(Ticks(5, 5, false, TickStyle::kPlain).empty());
}

TEST(Charts, XyChartHasTicksTitlesAndEscapedNames) {
  XyChart c;
  c.x = {"size (bytes)", true, TickStyle::kBytes};
  c.y = {"bandwidth (B/s)", true, TickStyle::kSi};
  c.series.push_back({"<copy>", {{4096, 1e10}, {1 << 20, 2e10}, {1 << 26, 1.5e10}}});
  c.lines.push_back({1 << 20, "L2 & more", true});
  c.points.push_back({1 << 20, 2e10, "</script>", ""});
  const std::string svg = XySvg(c);
  EXPECT_NE(svg.find(">4 KiB<"), std::string::npos);
  EXPECT_NE(svg.find(">10 G<"), std::string::npos);
  EXPECT_NE(svg.find("size (bytes) (log)"), std::string::npos);
  EXPECT_NE(svg.find("&lt;copy&gt;"), std::string::npos);
  EXPECT_NE(svg.find("L2 &amp; more"), std::string::npos);
  EXPECT_EQ(svg.find("<copy>"), std::string::npos);
  EXPECT_EQ(svg.find("</script>"), std::string::npos);
}

TEST(Charts, NothingPositiveToDrawIsSaid) {
  XyChart c;
  c.x.log = true;
  c.series.push_back({"s", {{0, 1}, {-1, 2}}});
  EXPECT_EQ(XySvg(c).rfind("<p>", 0), 0u);
}

}  // namespace
}  // namespace opscope::report
