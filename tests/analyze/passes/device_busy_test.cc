// The device_busy pass on a trace whose gaps and causes are known by construction.
#include "analyze/passes/device_busy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analyze/model_builder.h"
#include "analyze/names.h"
#include "analyze/passes/pass.h"
#include "analyze/pipeline.h"

namespace opscope::analyze {
namespace {

using model_builder::Builder;

TEST(DeviceBusy, GapsAndTheirCauses) {
  Builder b;
  b.Add(EventClass::kKernel, "gemm", 0, 100)
      .Add(EventClass::kKernel, "gemm", 200, 300)  // gap 100..200: host launching
      .Add(EventClass::kRuntime, "cudaLaunchKernel", 110, 190)
      .Add(EventClass::kKernel, "relu", 500, 600)  // gap 300..500: host waits on a sync
      .Add(EventClass::kSync, "cudaStreamSynchronize", 300, 480)
      .Add(EventClass::kKernel, "relu", 1000, 1100)  // gap 600..1000: data loading
      .Add(EventClass::kAnnotation, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
           600, 1000)
      .Add(EventClass::kKernel, "relu", 1150, 1200);  // gap 1100..1150: nothing on the host
  const DeviceBusy busy = ComputeDeviceBusy(b.model, 10000, 10, 12);
  ASSERT_TRUE(busy.has_device);
  EXPECT_EQ(busy.window_end_ns - busy.window_begin_ns, 1200000);
  EXPECT_EQ(busy.busy_ns, 450000);  // 100 + 100 + 100 + 100 + 50 us
  EXPECT_DOUBLE_EQ(busy.busy_pct, 37.5);
  ASSERT_EQ(busy.gaps.size(), 4u);
  EXPECT_EQ(busy.gaps[0].duration_ns, 400000);
  EXPECT_EQ(busy.gaps[0].cause, "data loading");
  EXPECT_EQ(busy.gaps[1].cause, "synchronization wait");
  EXPECT_NE(busy.gaps[1].evidence.find("cudaStreamSynchronize"), std::string::npos);
  EXPECT_EQ(busy.gaps[2].cause, "host-bound");
  EXPECT_NE(busy.gaps[2].evidence.find("cudaLaunchKernel"), std::string::npos);
  EXPECT_EQ(busy.gaps[3].cause, "no host activity");
  ASSERT_EQ(busy.timeline_pct.size(), 12u);
  EXPECT_DOUBLE_EQ(busy.timeline_pct[0], 100.0);  // 0..100 us
  EXPECT_DOUBLE_EQ(busy.timeline_pct[7], 0.0);    // 700..800 us
  // Found by the fuzzer: device events that all last zero time.
  EXPECT_FALSE(ComputeDeviceBusy(Builder().Add(EventClass::kKernel, "k", 5, 5).model).has_device);
}

// The idle-gaps table says how much of the idle time its gaps are (issue 36,
// class 12: a cause judged from a few long gaps can be a small part of it).
TEST(DeviceBusy, TheGapsTableSaysWhatShareOfTheIdleTimeItShows) {
  Builder b;
  int64_t t = 0;
  for (int i = 0; i < 40; ++i, t += 130) b.Add(EventClass::kKernel, "k", t, t + 100);  // 30 us gaps
  b.Add(EventClass::kKernel, "k", t + 200, t + 300);  // one gap of 230 us
  const Analysis a = AnalyzeTrace(b.model);
  const auto& passes = Passes();
  const auto pass = std::find_if(passes.begin(), passes.end(),
                                 [](const Pass& p) { return p.name == "device_busy"; });
  ASSERT_NE(pass, passes.end());
  std::vector<core::ResultTable> tables;
  pass->tables(a, {"t.json", 20}, tables);
  const auto gaps = std::find_if(tables.begin(), tables.end(), [](const core::ResultTable& x) {
    return x.section == "idle_gaps";
  });
  ASSERT_NE(gaps, tables.end());
  // Idle: 39 gaps of 30 us and one of 230 us (1400 us); listed: the one of 230 us.
  const std::string want = "This gap is 0.230 ms, 16.4% of the 1.400 ms in which the device idles";
  EXPECT_TRUE(std::any_of(gaps->notes.begin(), gaps->notes.end(), [&](const std::string& n) {
    return n.find(want) != std::string::npos;
  })) << (gaps->notes.empty() ? std::string() : gaps->notes[0]);
}

TEST(DeviceBusy, CompilationPartlyBusyHostAndUnknownCategories) {
  Builder b;
  b.Add(EventClass::kKernel, "gemm", 0, 100)
      .Add(EventClass::kKernel, "gemm", 1000, 1100)  // gap 100..1000: online op compilation
      .Add(EventClass::kRuntime, "AscendCL@aclopCompileAndExecute", 150, 900)
      .Add(EventClass::kKernel, "gemm", 2000, 2100)  // gap 1100..2000: host busy 30%
      .Add(EventClass::kHostOp, "aten::add", 1200, 1470);
  b.Add(EventClass::kOther, "mystery", 0, 10);
  b.model.category.back() = b.model.Intern("mtia_new_thing");
  const DeviceBusy busy = ComputeDeviceBusy(b.model, 10000, 10, 12);
  ASSERT_EQ(busy.gaps.size(), 2u);
  EXPECT_EQ(busy.gaps[0].cause, "compilation/warm-up");
  EXPECT_NE(busy.gaps[0].evidence.find("ACL operator compilation"), std::string::npos);
  EXPECT_EQ(busy.gaps[1].cause, "host partly busy");
  EXPECT_DOUBLE_EQ(busy.gaps[1].host_busy_pct, 30.0);
  ASSERT_EQ(busy.compile_ns.size(), 1u);
  EXPECT_EQ(busy.compile_ns[0].second, 750000);
  ASSERT_EQ(busy.unclassified.size(), 1u);
  EXPECT_EQ(busy.unclassified[0].first, "mtia_new_thing");
  EXPECT_EQ(busy.unclassified[0].second, 1);
}

TEST(DeviceBusy, TheCpuIsTheComputeDeviceWithoutDeviceWork) {
  Builder b;
  b.Add(EventClass::kHostOp, "aten::conv2d", 0, 100)
      .Add(EventClass::kHostOp, "aten::relu", 300, 400)  // 200 us between operators
      .Add(EventClass::kPython, "nn.Module: Net", 0, 400)
      .Add(EventClass::kHostOp, "aten::mm", 400, 500);
  const DeviceBusy busy = ComputeDeviceBusy(b.model, 10000, 10, 10);
  ASSERT_TRUE(busy.has_device);
  EXPECT_EQ(busy.compute_on, "cpu");
  EXPECT_EQ(busy.busy_ns, 300000);
  EXPECT_DOUBLE_EQ(busy.busy_pct, 60.0);
  ASSERT_EQ(busy.gaps.size(), 1u);
  EXPECT_EQ(busy.gaps[0].cause, "outside operators");
  EXPECT_NE(busy.gaps[0].evidence.find("Python"), std::string::npos);
}

}  // namespace
}  // namespace opscope::analyze
