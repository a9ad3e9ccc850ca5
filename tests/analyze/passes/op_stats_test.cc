// Operator statistics and their percentiles.
#include "analyze/passes/op_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analyze/importer.h"
#include "analyze/intervals.h"
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
    Percentiles(values, p50, p99, max);
    EXPECT_EQ(p50, nearest_rank(50)) << n;
    EXPECT_EQ(p99, nearest_rank(99)) << n;
    EXPECT_EQ(max, sorted.back()) << n;
  }
}

// A parent [0,100) holding a child [10,40) that holds [20,30), and a second
// child [50,60); an event that starts inside the parent and ends after it
// takes the time from its start on; device work keeps its whole time.
TEST(SelfTime, NestedCallsAreSubtractedOnce) {
  Builder b;
  b.Add(EventClass::kStep, "ProfilerStep#0", 0, 100)
      .Add(EventClass::kHostOp, "aten::conv2d", 10, 40)
      .Add(EventClass::kHostOp, "aten::mkldnn_convolution", 20, 30)
      .Add(EventClass::kRuntime, "cudaLaunchKernel", 50, 60)
      .Add(EventClass::kKernel, "gemm", 10, 90)
      .Add(EventClass::kHostOp, "aten::partial", 95, 130);
  const auto self = SelfTimes(b.model);
  EXPECT_EQ(self[0], (100 - 30 - 10 - 5) * 1000) << "less the 5 us the last one covers";
  EXPECT_EQ(self[1], (30 - 10) * 1000);
  EXPECT_EQ(self[2], 10 * 1000);
  EXPECT_EQ(self[3], 10 * 1000);
  EXPECT_EQ(self[4], 80 * 1000) << "device work does not nest";
  EXPECT_EQ(self[5], 35 * 1000) << "from its start, it is the innermost open event";
  const auto stats = ComputeOpStats(b.model);
  ASSERT_FALSE(stats.empty());
  EXPECT_EQ(stats[0].name, "gemm") << "ranked by self time";
  EXPECT_EQ(stats[1].name, "ProfilerStep#0");
  int64_t sum = 0;
  for (size_t e = 0; e < b.model.size(); ++e)
    sum += b.model.cls[e] == EventClass::kKernel ? 0 : self[e];
  EXPECT_EQ(sum, 130 * 1000) << "the thread was busy from 0 to 130 us";
  EXPECT_EQ(stats[1].total_ns, 100000);
}

TEST(SelfTime, SumsToTheThreadsBusyTimeOnARealTrace) {
  const TraceModel model = ImportTrace(std::filesystem::path(OPSCOPE_TEST_DATA) /
                                       "torch-cpu/small_cnn_train_torch1.13.json");
  const auto self = SelfTimes(model);
  std::map<uint32_t, int64_t> self_by_track;
  std::map<uint32_t, Intervals> spans;
  for (size_t e = 0; e < model.size(); ++e) {
    if (IsDevice(model.cls[e]) || model.cls[e] == EventClass::kOther) continue;
    self_by_track[model.track[e]] += self[e];
    spans[model.track[e]].push_back({model.start_ns[e], model.start_ns[e] + model.duration_ns[e]});
  }
  ASSERT_FALSE(self_by_track.empty());
  for (auto& [track, intervals] : spans) {
    int64_t busy = 0;
    for (const Interval& i : Union(intervals)) busy += i.end - i.begin;
    EXPECT_EQ(self_by_track[track], busy) << model.tracks[track].thread;
  }
}

}  // namespace
}  // namespace opscope::analyze
