// Operator statistics and their percentiles.
#include "analyze/passes/op_stats.h"

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

TEST(Percentiles, NearestRankAsDefined) {
  std::mt19937_64 rng(3);
  for (const size_t n : {1u, 2u, 3u, 10u, 99u, 100u, 101u, 174u, 1000u}) {
    std::vector<int64_t> values(n);
    for (auto& v : values) v = static_cast<int64_t>(rng() % 1000);
    std::vector<int64_t> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    // The definition: the smallest value with at least P% of the values at or
    // below it (nearest rank), found by counting, not by a rank formula.
    const auto nearest_rank = [&](int percent) {
      for (const int64_t v : sorted) {
        const auto at_or_below = std::upper_bound(sorted.begin(), sorted.end(), v) - sorted.begin();
        if (100 * static_cast<size_t>(at_or_below) >= static_cast<size_t>(percent) * n) return v;
      }
      return sorted.back();
    };
    int64_t p50 = -1, p99 = -1, max = -1;
    Percentiles(values.begin(), values.end(), p50, p99, max);
    EXPECT_EQ(p50, nearest_rank(50)) << n;
    EXPECT_EQ(p99, nearest_rank(99)) << n;
    EXPECT_EQ(max, sorted.back()) << n;
  }
}

}  // namespace
}  // namespace opscope::analyze
