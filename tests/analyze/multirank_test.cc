// Several ranks of one job.
#include "analyze/multirank.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analyze/importers/ascend/step_trace_time.h"
#include "analyze/model_builder.h"
#include "analyze/names.h"
#include "analyze/pipeline.h"
#include "analyze/source.h"

namespace opscope::analyze {
namespace {

using model_builder::Builder;

TEST(MultiRank, StepTimesSlowRankAndOverlap) {
  Builder fast, slow;
  fast.Add(EventClass::kStep, "ProfilerStep#1", 0, 100);
  fast.Add(EventClass::kKernel, "gemm", 0, 60)
      .Add(EventClass::kCommunication, "ncclKernel_AllReduce", 40, 90);
  slow.Add(EventClass::kStep, "ProfilerStep#1", 0, 130);
  slow.Add(EventClass::kKernel, "gemm", 0, 80)
      .Add(EventClass::kCommunication, "ncclKernel_AllReduce", 100, 120);
  fast.model.metadata["distributedInfo"] =
      "{\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 4}";
  const RankSummary f = SummarizeRank(fast.model, 0);
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.mean_step_ns, 100000);
  EXPECT_EQ(f.compute_ns, 60000);
  EXPECT_EQ(f.communication_ns, 50000);
  EXPECT_EQ(f.overlap_ns, 20000);  // 40..60 us
  const RankSummary s = SummarizeRank(slow.model, 7);
  EXPECT_EQ(s.rank, 7);
  EXPECT_EQ(s.overlap_ns, 0);
  Builder third;
  third.Add(EventClass::kStep, "ProfilerStep#1", 0, 100).Add(EventClass::kKernel, "gemm", 0, 50);
  const RankComparison c = CompareRanks({s, f, SummarizeRank(third.model, 5)});
  ASSERT_EQ(c.ranks.size(), 3u);
  EXPECT_EQ(c.ranks[0].rank, 3);
  EXPECT_EQ(c.slow_rank, 7);
  EXPECT_DOUBLE_EQ(c.slow_pct, 30.0);  // 130 vs a median of 100
}

TEST(AscendSteps, ReadsTheRealStepTraceTimeWithItsDocumentedIdentities) {
  // The level-1 torch_npu sample: Step 50 (no Device_id column, an older writer).
  const auto source = Source::Open(std::string(OPSCOPE_TEST_DATA) +
                                   "/ascend/level1_text/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
                                   "step_trace_time.csv");
  const std::vector<ReportedStep> rows = ReadStepTraceTime(*source);
  ASSERT_EQ(rows.size(), 1u);
  const ReportedStep& r = rows[0];
  EXPECT_EQ(r.step, "50");
  EXPECT_EQ(r.device, "");
  EXPECT_EQ(r.computing_ns, 8873756);  // "8873.756000000001" us
  EXPECT_EQ(r.comm_not_overlapped_ns, 101963203);
  EXPECT_EQ(r.free_ns, 25744050);
  EXPECT_EQ(r.preparing_ns, 17902500);
  // docs/formats/ascend.md 3.4: Overlapped = Communication - Communication(Not Overlapped).
  EXPECT_NEAR(r.overlapped_ns, r.communication_ns - r.comm_not_overlapped_ns, 1);
  EXPECT_EQ(r.bubble_ns, 0);
  EXPECT_EQ(r.StepNs(), 8873756 + 101963203 + 25744050);
}

TEST(AscendSteps, TheSlowRankAndTheComponentThatMakesItSlow) {
  const auto step = [](int64_t computing, int64_t comm, int64_t free) {
    ReportedStep s;
    s.computing_ns = computing, s.comm_not_overlapped_ns = comm, s.free_ns = free;
    return s;
  };
  // Rank 2 waits 30 more in communication per step; rank 1 computes 5 more.
  const std::vector<ReportedStep> r0 = {step(100, 20, 10), step(100, 20, 10)};
  const std::vector<ReportedStep> r1 = {step(105, 20, 10), step(105, 20, 10)};
  const std::vector<ReportedStep> r2 = {step(100, 50, 10), step(100, 50, 10), ReportedStep{}};
  const ReportedStepRanks c =
      CompareReportedSteps({{2, "c", &r2}, {0, "a", &r0}, {1, "b", &r1}, {3, "d", nullptr}});
  ASSERT_EQ(c.ranks.size(), 3u);
  EXPECT_EQ(c.ranks[0].rank, 0);
  EXPECT_EQ(c.ranks[2].steps, 2) << "a row without the step's parts is not a step";
  EXPECT_EQ(c.slow_rank, 2);
  EXPECT_NEAR(c.slow_pct, 100.0 * (160 - 135) / 135, 1e-9);  // median step: rank 1's 135
  EXPECT_EQ(c.slow_component, "communication not overlapped");
  EXPECT_EQ(c.slow_component_excess_ns, 30);
  EXPECT_EQ(CompareReportedSteps({{0, "a", &r0}}).slow_rank, -1) << "one rank: nobody is slow";
}

}  // namespace
}  // namespace opscope::analyze
