// The layout pass and the names it counts as layout conversions.
#include "analyze/passes/layout.h"

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

TEST(Layout, ConversionShare) {
  Builder b;
  b.Add(EventClass::kKernel, "TransData", 0, 38)
      .Add(EventClass::kKernel, "Conv2D", 38, 100)
      .Add(EventClass::kHostOp, "aten::contiguous", 0, 5)
      .Add(EventClass::kHostOp, "aten::conv2d", 5, 25);
  const LayoutShare l = ComputeLayoutShare(b.model);
  EXPECT_DOUBLE_EQ(l.device_pct, 38.0);
  EXPECT_DOUBLE_EQ(l.host_pct, 20.0);
  ASSERT_EQ(l.top.size(), 2u);
  EXPECT_EQ(l.top[0].first, "TransData");
  EXPECT_TRUE(IsLayoutConversion("aclnnMm_TransData_TransData"));
  EXPECT_FALSE(IsLayoutConversion("aten::conv2d"));
  EXPECT_TRUE(IsCommunication("hcom_allReduce_"));
}

}  // namespace
}  // namespace opscope::analyze
