// The fusion pass.
#include "analyze/passes/fusion.h"

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

TEST(Fusion, GemmFollowedByElementwise) {
  Builder b;
  for (int i = 0; i < 4; ++i) {
    b.Add(EventClass::kKernel, "ampere_sgemm_128x64_nn", i * 100, i * 100 + 50);
    b.Add(EventClass::kKernel, "vectorized_elementwise_kernel<relu>", i * 100 + 51, i * 100 + 60);
  }
  b.Add(EventClass::kKernel, "ampere_sgemm_128x64_nn", 1000, 1050)
      .Add(EventClass::kKernel, "softmax", 1051, 1060);
  const auto f = ComputeFusionCandidates(b.model);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].count, 4);
  EXPECT_EQ(f[0].consumer_ns, 36000);
}

}  // namespace
}  // namespace opscope::analyze
