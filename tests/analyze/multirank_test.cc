// Several ranks of one job.
#include "analyze/multirank.h"

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

TEST(MultiRank, StepTimesSlowRankAndOverlap) {
  Builder fast, slow;
  fast.Add(EventClass::kStep, "ProfilerStep#1", 0, 100);
  fast.Add(EventClass::kKernel, "gemm", 0, 60)
      .Add(EventClass::kKernel, "ncclKernel_AllReduce", 40, 90);
  slow.Add(EventClass::kStep, "ProfilerStep#1", 0, 130);
  slow.Add(EventClass::kKernel, "gemm", 0, 80)
      .Add(EventClass::kKernel, "ncclKernel_AllReduce", 100, 120);
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

}  // namespace
}  // namespace opscope::analyze
