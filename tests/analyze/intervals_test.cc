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

namespace opscope::analyze {
namespace {

// UnionBuilder's batches give the union of every interval added, whether
// they nest (few spans) or not (the buffer doubles).
TEST(UnionBuilder, EqualsTheUnionOfEverything) {
  std::mt19937_64 rng(3);
  for (const int64_t spread : {int64_t{1000}, int64_t{100000000}}) {
    UnionBuilder builder;
    Intervals all;
    for (int i = 0; i < 300000; ++i) {
      const int64_t begin = static_cast<int64_t>(rng() % static_cast<uint64_t>(spread));
      const Interval interval{begin, begin + static_cast<int64_t>(rng() % 50)};
      builder.Add(interval);
      all.push_back(interval);
    }
    const Intervals got = builder.Take(), want = Union(all);
    ASSERT_EQ(got.size(), want.size()) << spread;
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(got[i].begin, want[i].begin);
      ASSERT_EQ(got[i].end, want[i].end);
    }
  }
  EXPECT_TRUE(UnionBuilder().Take().empty());
}

}  // namespace
}  // namespace opscope::analyze
