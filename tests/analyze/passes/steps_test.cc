// The steps pass: device time inside each step span.
#include "analyze/passes/steps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analyze/model_builder.h"
#include "analyze/names.h"
#include "analyze/pipeline.h"

namespace opscope::analyze {
namespace {

using model_builder::Builder;

TEST(Steps, DeviceTimeInsideEachStep) {
  Builder b;
  b.Add(EventClass::kStep, "ProfilerStep#1", 0, 100)
      .Add(EventClass::kStep, "ProfilerStep#2", 100, 200)
      .Add(EventClass::kKernel, "gemm", 0, 30)
      .Add(EventClass::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", 20, 50)
      .Add(EventClass::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 60, 70)
      .Add(EventClass::kKernel, "gemm", 90, 150);  // crosses into step 2
  const auto steps = ComputeSteps(b.model);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].name, "ProfilerStep#1");
  EXPECT_EQ(steps[0].compute_ns, 40000);        // 0..30 and 90..100
  EXPECT_EQ(steps[0].communication_ns, 30000);  // 20..50
  EXPECT_EQ(steps[0].memory_ns, 10000);
  EXPECT_EQ(steps[0].idle_ns, 100000 - 70000);  // busy: 0..50, 60..70, 90..100
  EXPECT_EQ(steps[1].compute_ns, 50000);
  EXPECT_EQ(steps[1].idle_ns, 50000);
}

}  // namespace
}  // namespace opscope::analyze
