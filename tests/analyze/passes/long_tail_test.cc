// The long_tail pass.
#include "analyze/passes/long_tail.h"

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

TEST(LongTail, FlagsOperatorsWithARareSlowCall) {
  Builder b;
  for (int i = 0; i < 20; ++i)
    b.Add(EventClass::kHostOp, "aten::item", i * 100, i * 100 + (i == 19 ? 50 : 2));
  for (int i = 0; i < 20; ++i)
    b.Add(EventClass::kHostOp, "aten::add", 5000 + i * 10, 5000 + i * 10 + 3);
  const auto tail = ComputeLongTail(ComputeOpStats(b.model));
  ASSERT_EQ(tail.size(), 1u);
  EXPECT_EQ(tail[0].name, "aten::item");
  EXPECT_EQ(tail[0].p50_ns, 2000);
  EXPECT_EQ(tail[0].max_ns, 50000);
}

}  // namespace
}  // namespace opscope::analyze
