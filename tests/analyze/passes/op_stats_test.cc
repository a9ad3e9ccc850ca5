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

TEST(Percentiles, NearestRankLikeAFullSort) {
  std::mt19937_64 rng(3);
  for (const size_t n : {1u, 2u, 3u, 10u, 99u, 100u, 101u, 1000u}) {
    std::vector<int64_t> values(n);
    for (auto& v : values) v = static_cast<int64_t>(rng() % 1000);
    std::vector<int64_t> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const auto rank = [&](double q) {
      return sorted[std::min(n - 1, static_cast<size_t>(q * static_cast<double>(n - 1) + 0.5))];
    };
    int64_t p50 = -1, p99 = -1, max = -1;
    Percentiles(values.begin(), values.end(), p50, p99, max);
    EXPECT_EQ(p50, rank(0.5)) << n;
    EXPECT_EQ(p99, rank(0.99)) << n;
    EXPECT_EQ(max, sorted.back()) << n;
  }
}

}  // namespace
}  // namespace opscope::analyze
