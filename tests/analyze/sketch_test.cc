#include "analyze/scaleout/sketch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace opscope::analyze {
namespace {

// The nearest-rank quantile of the values, computed directly.
int64_t Exact(std::vector<int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  const auto rank = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(q * v.size())), 1,
                                        static_cast<int64_t>(v.size()));
  return v[static_cast<size_t>(rank - 1)];
}

void ExpectWithinBound(int64_t got, int64_t exact) {
  EXPECT_LE(std::abs(static_cast<double>(got - exact)),
            QuantileSketch::kRelativeError * static_cast<double>(exact) + 0.5)
      << "got " << got << ", exact " << exact;
}

TEST(QuantileSketch, QuantilesWithinTheStatedBoundOnWideData) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(10, 3);  // ns to seconds
  std::vector<int64_t> values;
  QuantileSketch s;
  for (int i = 0; i < 20000; ++i) {
    const auto v = static_cast<int64_t>(dist(rng));
    values.push_back(v);
    s.Add(v);
  }
  EXPECT_EQ(s.count(), 20000);
  EXPECT_EQ(s.min(), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(s.max(), *std::max_element(values.begin(), values.end()));
  for (const double q : {0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0}) {
    ExpectWithinBound(s.Quantile(q), Exact(values, q));
  }
}

TEST(QuantileSketch, SmallIntegersAreExact) {
  QuantileSketch s;
  std::vector<int64_t> values = {0, 0, 1, 2, 3, 5, 8, 13, 21, 34, 49};
  for (const int64_t v : values) s.Add(v);
  for (const double q : {0.1, 0.3, 0.5, 0.7, 0.9, 1.0}) EXPECT_EQ(s.Quantile(q), Exact(values, q));
}

TEST(QuantileSketch, MergeIsExactAndOrderFree) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> dist(0, 5'000'000);
  std::vector<QuantileSketch> parts(5);
  QuantileSketch all;
  std::vector<int64_t> values;
  for (int i = 0; i < 5000; ++i) {
    const int64_t v = dist(rng);
    parts[i % 5].Add(v);
    all.Add(v);
    values.push_back(v);
  }
  QuantileSketch forward, backward, tree;
  for (const auto& p : parts) forward.Merge(p);
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) backward.Merge(*it);
  QuantileSketch left = parts[0], right = parts[3];
  left.Merge(parts[1]);
  right.Merge(parts[4]);
  left.Merge(parts[2]);
  tree = right;
  tree.Merge(left);
  EXPECT_EQ(forward, all);
  EXPECT_EQ(backward, all);
  EXPECT_EQ(tree, all);
}

TEST(QuantileSketch, FromPartsRefusesInconsistentParts) {
  QuantileSketch s, back;
  for (const int64_t v : {10, 200, 3000}) s.Add(v);
  ASSERT_TRUE(QuantileSketch::FromParts(s.buckets(), s.min(), s.max(), back));
  EXPECT_EQ(back, s);
  auto swapped = s.buckets();
  std::swap(swapped[0], swapped[1]);
  EXPECT_FALSE(QuantileSketch::FromParts(swapped, s.min(), s.max(), back));
  auto zero = s.buckets();
  zero[1].second = 0;
  EXPECT_FALSE(QuantileSketch::FromParts(zero, s.min(), s.max(), back));
  EXPECT_FALSE(QuantileSketch::FromParts(s.buckets(), 11, s.max(), back) && back.min() != 10);
  EXPECT_FALSE(QuantileSketch::FromParts(s.buckets(), s.min(), 999999, back));
  EXPECT_FALSE(QuantileSketch::FromParts({{99999, 1}}, 5, 5, back));
  EXPECT_TRUE(QuantileSketch::FromParts({}, -1, -1, back));
  EXPECT_EQ(back.count(), 0);
  EXPECT_EQ(back.Quantile(0.5), -1);
}

}  // namespace
}  // namespace opscope::analyze
