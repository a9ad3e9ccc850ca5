// The launch pass.
#include "analyze/passes/launch.h"

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

TEST(LaunchBound, ShortKernelsAndLaunchDelay) {
  Builder b;
  for (int i = 0; i < 150; ++i) {
    b.Correlate(i).Add(EventClass::kRuntime, "cudaLaunchKernel", i * 20, i * 20 + 5);
    b.Correlate(i).Add(EventClass::kKernel, "tiny", i * 20 + 7,
                       i * 20 + 9);  // 2 us kernels, 7 us after launch
  }
  const LaunchBound l = ComputeLaunchBound(b.model, 10.0);
  EXPECT_EQ(l.kernels, 150);
  EXPECT_EQ(l.median_kernel_ns, 2000);
  EXPECT_EQ(l.launch_delay_p50_ns, 7000);
  EXPECT_TRUE(l.launch_bound);
  EXPECT_FALSE(ComputeLaunchBound(b.model, 80.0).launch_bound);
}

}  // namespace
}  // namespace opscope::analyze
