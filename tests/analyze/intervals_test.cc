// Union of intervals and the time they cover.
#include "analyze/intervals.h"

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

TEST(Intervals, UnionAndCoverage) {
  const auto merged = Union({{10, 20}, {0, 5}, {15, 30}, {40, 40}, {29, 35}});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].begin, 0);
  EXPECT_EQ(merged[1].begin, 10);
  EXPECT_EQ(merged[1].end, 35);
  EXPECT_EQ(Covered(merged, 3, 12), 4);
  EXPECT_EQ(Covered(merged, 100, 200), 0);
}

}  // namespace
}  // namespace opscope::analyze
