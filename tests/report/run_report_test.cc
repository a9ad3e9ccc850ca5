// index.html of `opscope run`: the bandwidth sweep and the operator charts
// drawn from the tables, each table linked to its CSV, summary.csv long.
#include "report/run_report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace opscope::report {
namespace {

RunStep Step(ResultTable t) {
  RunStep s;
  s.title = "t";
  s.command = "bw";
  s.status = "ok";
  s.tables.push_back(std::move(t));
  return s;
}

TEST(RunIndexHtml, BandwidthSweepMarksWhereTheArraysLeaveACache) {
  ResultTable t;
  t.section = "bandwidth";
  t.columns = {
      {"type", "Type"},
      {"kernel", "Kernel"},
      {.key = "size_bytes", .header = "Bytes", .unit = Unit::kBytes},
      {"level", "Fits in"},
      {.key = "bytes_per_s", .header = "GB/s", .unit = Unit::kBytesPerSecond, .scale = 1e9}};
  t.AddRow({std::string("d2d"), std::string("copy"), int64_t{4096}, std::string("L1d"), 500.0});
  t.AddRow({std::string("d2d"), std::string("copy"), int64_t{1 << 20}, std::string("L2"), 200.0});
  t.AddRow({std::string("d2d"), std::string("copy"), int64_t{1 << 28}, std::string("DRAM"), 20.0});
  const std::string h = RunIndexHtml({Step(t)}, "cpu", {});
  EXPECT_NE(h.find(">L1d | L2<"), std::string::npos);
  EXPECT_NE(h.find(">L2 | DRAM<"), std::string::npos);
  EXPECT_NE(h.find(">4 KiB<"), std::string::npos);
  EXPECT_NE(h.find(">256 MiB<"), std::string::npos);
  EXPECT_NE(h.find("href=\"tables/bandwidth.csv\""), std::string::npos);
  EXPECT_EQ(h.find("No cache boundary marked"), std::string::npos);
}

TEST(RunIndexHtml, OperatorChartDrawsThePeakAndCeilingTheTableRates) {
  ResultTable t;
  t.section = "matmul";
  t.columns = {
      {"dtype", "Dtype"},
      {"impl", "Impl"},
      {.key = "flops", .header = "FLOPs", .unit = Unit::kFlop},
      {.key = "flop_per_s", .header = "GFLOP/s", .unit = Unit::kFlopPerSecond, .scale = 1e9},
      {.key = "pct_peak", .header = "% peak", .unit = Unit::kPercent},
      {.key = "pct_ceiling", .header = "% ceiling", .unit = Unit::kPercent}};
  // 100 GFLOP/s at 50% of the peak and 80% of the ceiling: 200 G and 125 G.
  t.AddRow({std::string("fp32"), std::string("onednn"), int64_t{2000000}, 100.0, 50.0, 80.0});
  t.AddRow({std::string("fp32"), std::string("onednn"), int64_t{2000000000}, 150.0, 75.0, 120.0});
  const std::string h = RunIndexHtml({Step(t)}, "cpu", {});
  EXPECT_NE(h.find(">fp32 peak 200 G FLOP/s<"), std::string::npos);
  EXPECT_NE(h.find(">fp32 measured ceiling 125 G FLOP/s<"), std::string::npos);
  EXPECT_NE(h.find("problem size (FLOP per call) (log)"), std::string::npos);
}

TEST(RunSummaryCsv, OneValuePerRow) {
  ResultTable t;
  t.section = "s";
  t.columns = {{"a", "A"}, {"b", "B"}};
  t.AddRow({std::string("x,y"), 1.5});
  t.AddRow({Value{}, int64_t{2}});
  EXPECT_EQ(RunSummaryCsv({Step(t)}),
            "step,section,row,column,value\nt,s,0,a,\"x,y\"\nt,s,0,b,1.5\nt,s,1,b,2\n");
}

}  // namespace
}  // namespace opscope::report
