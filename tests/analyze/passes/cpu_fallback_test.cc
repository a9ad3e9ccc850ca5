// The cpu_fallback pass.
#include "analyze/passes/cpu_fallback.h"

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

TEST(CpuFallback, AiCpuTasksAndHostOnlyOperators) {
  Builder b;
  b.Kind("AI_CPU")
      .Add(EventClass::kKernel, "Unique", 0, 30)
      .Kind("AI_CORE")
      .Add(EventClass::kKernel, "MatMul", 30, 100);
  b.Kind("").Add(EventClass::kRuntime, "aclnnMatmul", 0, 10);
  b.Add(EventClass::kHostOp, "aten::matmul", 0, 20);        // launched work
  b.Add(EventClass::kHostOp, "aten::nonzero", 2000, 5000);  // 3 ms on the CPU alone
  const CpuFallback f = ComputeCpuFallback(b.model);
  EXPECT_EQ(f.ai_cpu_count, 1);
  EXPECT_DOUBLE_EQ(f.ai_cpu_share_pct, 30.0);
  ASSERT_EQ(f.host_only_ops.size(), 1u);
  EXPECT_EQ(f.host_only_ops[0].first, "aten::nonzero");
}

}  // namespace
}  // namespace opscope::analyze
