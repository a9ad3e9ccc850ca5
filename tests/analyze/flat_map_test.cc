// The flat hash map the passes use.
#include "analyze/flat_map.h"

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

TEST(Int64Map, AgreesWithStdMapThroughGrowthAndExtremeKeys) {
  Int64Map<int64_t> flat;
  std::map<int64_t, int64_t> reference;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    // Dense ids, colliding multiples of the table size, and both extremes.
    const int64_t key = i % 5 == 0   ? static_cast<int64_t>(rng() % 1000) << 20
                        : i % 7 == 0 ? (i % 2 ? INT64_MIN : INT64_MAX)
                                     : static_cast<int64_t>(rng() % 50000) - 25000;
    flat[key] += i;
    reference[key] += i;
  }
  ASSERT_EQ(flat.size(), reference.size());
  for (const auto& [key, value] : reference) {
    const int64_t* found = flat.Find(key);
    ASSERT_NE(found, nullptr) << key;
    EXPECT_EQ(*found, value) << key;
  }
  EXPECT_EQ(flat.Find(123456789), nullptr);
  size_t seen = 0;
  flat.ForEach([&](int64_t key, int64_t value) {
    ++seen;
    EXPECT_EQ(reference.at(key), value);
  });
  EXPECT_EQ(seen, reference.size());
}

}  // namespace
}  // namespace opscope::analyze

namespace opscope::analyze {
namespace {

// SortedIdMap against std::map on random ids with repeats: the last value
// added for an id is the one found.
TEST(SortedIdMap, FindsTheLastValueOfEachIdLikeAMap) {
  std::mt19937_64 rng(7);
  SortedIdMap<uint32_t> sorted;
  std::map<int64_t, uint32_t> reference;
  for (uint32_t i = 0; i < 20000; ++i) {
    const int64_t id = static_cast<int64_t>(rng() % 5000) - 2500;
    sorted.Add(id, i);
    reference[id] = i;
  }
  sorted.Sort();
  for (int64_t id = -2600; id < 2600; ++id) {
    const uint32_t* found = sorted.Find(id);
    const auto it = reference.find(id);
    if (it == reference.end()) {
      EXPECT_EQ(found, nullptr) << id;
    } else {
      ASSERT_NE(found, nullptr) << id;
      EXPECT_EQ(*found, it->second) << id;
    }
  }
  EXPECT_EQ(SortedIdMap<int64_t>().Find(0), nullptr);
}

}  // namespace
}  // namespace opscope::analyze
