// The timeline pass: lanes, busy share per slice, starts per slice, and the
// kept events within a budget, on models whose answers are known by
// construction.
#include "analyze/passes/timeline.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "analyze/model_builder.h"
#include "report/timeline_html.h"

namespace opscope::analyze {
namespace {

using model_builder::Builder;

TEST(FairShares, SmallLanesKeepAllAndTheRestSplitWhatIsLeft) {
  EXPECT_EQ(FairShares({10, 1000, 5}, 100), (std::vector<size_t>{10, 85, 5}));
  EXPECT_EQ(FairShares({10, 20}, 1000), (std::vector<size_t>{10, 20}));
  EXPECT_EQ(FairShares({50, 50, 50}, 90), (std::vector<size_t>{30, 30, 30}));
  EXPECT_EQ(FairShares({}, 10), (std::vector<size_t>{}));
  const auto shares = FairShares({7, 300, 300, 2}, 101);
  EXPECT_LE(std::accumulate(shares.begin(), shares.end(), size_t{0}), size_t{101});
}

// Host: a parent 0-100 us with a child 20-40 us nested in it, and 150-200 us.
// Device: a kernel 50-100 us. Window 0-200 us in 4 slices of 50 us.
Builder TwoLanes(bool reversed) {
  Builder b;
  const auto host = [&] {
    b.Add(EventClass::kHostOp, "parent", 0, 100);
    b.Add(EventClass::kHostOp, "child", 20, 40);
    b.Add(EventClass::kHostOp, "late", 150, 200);
  };
  const auto device = [&] { b.Add(EventClass::kKernel, "gemm", 50, 100); };
  if (reversed) {
    b.Add(EventClass::kHostOp, "late", 150, 200);
    device();
    b.Add(EventClass::kHostOp, "child", 20, 40);
    b.Add(EventClass::kHostOp, "parent", 0, 100);
  } else {
    host();
    device();
  }
  return b;
}

TEST(Timeline, BusySharePerSliceCountsNestedEventsOnce) {
  for (const bool reversed : {false, true}) {
    const Builder b = TwoLanes(reversed);
    const TimelineSummary t = SummarizeTimeline(b.model, 4, 100);
    EXPECT_EQ(t.begin_ns, 0);
    EXPECT_EQ(t.end_ns, 200000);
    EXPECT_EQ(t.events, 4);
    ASSERT_EQ(t.lanes.size(), 2u);
    EXPECT_TRUE(t.lanes[0].device);  // device lanes first
    EXPECT_FALSE(t.lanes[1].device);
    EXPECT_EQ(t.lanes[0].busy_permil, (std::vector<uint16_t>{0, 1000, 0, 0}));
    EXPECT_EQ(t.lanes[1].busy_permil, (std::vector<uint16_t>{1000, 1000, 0, 1000}));
    // Starts: 0 and 20 us in the first slice, 50 in the second, 150 in the last.
    EXPECT_EQ(t.starts, (std::vector<uint32_t>{2, 1, 0, 1}));
    EXPECT_EQ(t.lanes[1].events, 3);
  }
}

TEST(Timeline, PartialSlicesAndAnOffsetWindow) {
  Builder b;
  b.Add(EventClass::kKernel, "k", 1000, 1010);  // 10 us of the first 25 us slice
  b.Add(EventClass::kKernel, "k", 1090, 1100);  // 10 us of the last
  const TimelineSummary t = SummarizeTimeline(b.model, 4, 100);
  EXPECT_EQ(t.begin_ns, 1000000);
  ASSERT_EQ(t.lanes.size(), 1u);
  EXPECT_EQ(t.lanes[0].busy_permil, (std::vector<uint16_t>{400, 0, 0, 400}));
}

TEST(Timeline, KeepsTheLongestEventsOfEachLaneWithinTheBudget) {
  const Builder b = TwoLanes(false);
  const TimelineSummary t = SummarizeTimeline(b.model, 4, 2);
  // One event each: the kernel, and the host lane's longest (the parent).
  ASSERT_EQ(t.lanes[0].kept.size(), 1u);
  ASSERT_EQ(t.lanes[1].kept.size(), 1u);
  EXPECT_EQ(t.strings[t.lanes[0].kept[0].name], "gemm");
  EXPECT_EQ(t.strings[t.lanes[1].kept[0].name], "parent");
  EXPECT_EQ(t.lanes[1].kept[0].duration_ns, 100000);
  // With room for all, every event, the longest first.
  const TimelineSummary all = SummarizeTimeline(b.model, 4, 100);
  ASSERT_EQ(all.lanes[1].kept.size(), 3u);
  EXPECT_EQ(all.strings[all.lanes[1].kept[0].name], "parent");
  EXPECT_EQ(all.strings[all.lanes[1].kept[1].name], "late");
  EXPECT_EQ(all.strings[all.lanes[1].kept[2].name], "child");
}

TEST(Timeline, ArgsNameTheColumnsAnEventHas) {
  Builder b;
  b.Add(EventClass::kMemcpy, "copy", 0, 10, 4096);
  const TimelineSummary t = SummarizeTimeline(b.model, 4, 10);
  ASSERT_EQ(t.lanes.size(), 1u);
  ASSERT_EQ(t.lanes[0].kept.size(), 1u);
  EXPECT_EQ(t.strings[t.lanes[0].kept[0].args], "bytes: 4096");
}

TEST(Timeline, RanksShareOneTimelineOnTheirCommonClock) {
  // Rank 0 computes from 0 to 50 us, rank 1 from 50 to 100 us; on 4 common
  // slices of 25 us each rank is busy in its own two.
  Builder r0, r1;
  r0.Add(EventClass::kKernel, "a", 0, 50);
  r0.Add(EventClass::kHostOp, "host", 0, 100);  // threads do not count beside device lanes
  r1.Add(EventClass::kKernel, "b", 50, 100);
  const TimelineSummary t0 = SummarizeTimeline(r0.model, 4, 10);
  const TimelineSummary t1 = SummarizeTimeline(r1.model, 4, 10);
  const TimelineSummary t = report::RanksTimeline({{0, &t0}, {1, &t1}}, 4, 10);
  EXPECT_EQ(t.begin_ns, 0);
  EXPECT_EQ(t.end_ns, 100000);
  ASSERT_EQ(t.lanes.size(), 2u);
  EXPECT_EQ(t.lanes[0].process, "rank 0");
  EXPECT_EQ(t.lanes[0].busy_permil, (std::vector<uint16_t>{1000, 1000, 0, 0}));
  EXPECT_EQ(t.lanes[1].busy_permil, (std::vector<uint16_t>{0, 0, 1000, 1000}));
  ASSERT_EQ(t.lanes[1].kept.size(), 1u);
  EXPECT_EQ(t.strings[t.lanes[1].kept[0].name], "b");
}

TEST(Timeline, AnEmptyModelHasNoLanes) {
  const TraceModel empty;
  const TimelineSummary t = SummarizeTimeline(empty);
  EXPECT_EQ(t.events, 0);
  EXPECT_TRUE(t.lanes.empty());
}

}  // namespace
}  // namespace opscope::analyze
