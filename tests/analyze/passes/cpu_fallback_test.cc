// The cpu_fallback pass.
#include "analyze/passes/cpu_fallback.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analyze/advisor.h"
#include "analyze/model_builder.h"
#include "analyze/names.h"
#include "analyze/pipeline.h"

namespace opscope::analyze {
namespace {

using model_builder::Builder;

TEST(CpuFallback, AiCpuTasksAndHostOnlyOperators) {
  Builder b;
  b.Kind("AI_CPU")
      .Add(EventClass::kKernel, "Unique", 0, 30)
      .Kind("AI_CORE")
      .Add(EventClass::kKernel, "MatMul", 30, 100);
  b.Kind("").Add(EventClass::kRuntime, "aclnnMatmul", 0, 10);
  b.Add(EventClass::kHostOp, "aten::matmul", 0, 20);        // launched work
  b.Add(EventClass::kHostOp, "aten::nonzero", 2000, 5000);  // 3 ms on the CPU alone
  const CpuFallback f = ComputeCpuFallback(b.model);
  EXPECT_EQ(f.ai_cpu_count, 1);
  EXPECT_DOUBLE_EQ(f.ai_cpu_share_pct, 30.0);
  ASSERT_EQ(f.host_only_ops.size(), 1u);
  EXPECT_EQ(f.host_only_ops[0].first, "aten::nonzero");
}

// Host-only operators are framework operators (issue 36, class 11): a
// runtime's own method and the DataLoader are not work that could run on
// the device. And the rule judges only where the operators' links explain
// the device time: where the launches cannot be tied to operators (a task
// queue on another thread, unrecorded), no operator is shown to launch
// nothing.
TEST(CpuFallback, HostOnlyOperatorsAreFrameworkOperatorsWhereLaunchesAreLinked) {
  const auto advise = [](bool linked) {
    Builder b;
    b.Add(EventClass::kHostOp, "aten::mm", 0, 20);
    b.Correlate(linked ? 1 : -1).Add(EventClass::kRuntime, "cudaLaunchKernel", 5, 10);
    b.Add(EventClass::kKernel, "gemm", 30, 100).Correlate(-1);
    b.Add(EventClass::kHostOp, "aten::nonzero", 2000, 5000);                   // 3 ms alone
    b.Add(EventClass::kHostOp, "BufferSequencingEvent::Execute", 6000, 9000);  // the runtime's
    b.Add(EventClass::kHostOp, "torch/utils/data/dataloader.py(631): __next__", 9000, 13000);
    const CpuFallback f = ComputeCpuFallback(b.model);
    EXPECT_EQ(f.host_only_ops.size(), 1u);
    EXPECT_EQ(f.host_only_ops.empty() ? "" : f.host_only_ops[0].first, "aten::nonzero");
    const auto findings = Advise(AnalyzeTrace(b.model));
    return std::find_if(findings.begin(), findings.end(), [](const Finding& x) {
             return x.id == "host_only_operators";
           }) != findings.end();
  };
  EXPECT_TRUE(advise(true));
  EXPECT_FALSE(advise(false));
}

// A trace whose device work is launched by a linked call from an operator:
// where the rule judges host-only operators at all.
Builder WithALinkedLaunch() {
  Builder b;
  b.Add(EventClass::kHostOp, "aten::mm", 0, 20);
  b.Correlate(1).Add(EventClass::kRuntime, "cudaLaunchKernel", 5, 10);
  b.Add(EventClass::kKernel, "gemm", 30, 100).Correlate(-1);
  return b;
}

// A copy operator drives device traffic with no launch call on record
// (MTIA's dma_request tasks under aten::copy_): it is not host-only work,
// whereas the same operator with no device traffic beside it is.
TEST(CpuFallback, AnOperatorUnderDeviceTrafficIsNotHostOnly) {
  const auto host_only = [](EventClass traffic) {
    Builder b = WithALinkedLaunch();
    b.Add(EventClass::kHostOp, "aten::copy_", 2000, 9000);  // 7 ms
    b.Add(traffic, "dma_request", 4000, 4005);
    return ComputeCpuFallback(b.model).host_only_ops;
  };
  for (const EventClass moves : {EventClass::kDma, EventClass::kMemcpy, EventClass::kMemset}) {
    EXPECT_TRUE(host_only(moves).empty()) << static_cast<int>(moves);
  }
  // A compute kernel beside it, launched by nothing on record, says nothing.
  const auto alone = host_only(EventClass::kKernel);
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].first, "aten::copy_");
}

// A name judged by its calls: one whose long calls mostly run under device
// traffic drives it (its traffic can start after a call returns), so its
// other calls are not host-only either; one whose calls mostly do not is.
TEST(CpuFallback, AnOperatorNameThatMostlyMovesDataIsNotHostOnly) {
  const auto host_only = [](int calls_under_dma) {
    Builder b = WithALinkedLaunch();
    for (int i = 0; i < 3; ++i) {
      const int64_t t = 10'000 * (i + 1);
      b.Add(EventClass::kHostOp, "aten::copy_", t, t + 2000);  // 2 ms each
      if (i < calls_under_dma) b.Add(EventClass::kDma, "dma_request", t + 500, t + 600);
    }
    return ComputeCpuFallback(b.model).host_only_ops;
  };
  EXPECT_TRUE(host_only(2).empty());
  const auto once = host_only(1);
  ASSERT_EQ(once.size(), 1u);
  EXPECT_EQ(once[0].second, 4'000'000);  // the two calls with nothing beside them
}

// Operators inside data loading on their thread (a DataLoader's collate:
// aten::stack) are the host's input pipeline, CPU work by design: not
// host-only operators; the same operator outside it is.
TEST(CpuFallback, DataLoadingIsNotHostOnly) {
  const auto host_only = [](bool inside) {
    Builder b = WithALinkedLaunch();
    if (inside) {
      b.Add(EventClass::kDataLoading, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            1000, 9000);
    }
    b.Add(EventClass::kHostOp, "aten::stack", 2000, 5000);
    return ComputeCpuFallback(b.model).host_only_ops;
  };
  EXPECT_TRUE(host_only(true).empty());
  ASSERT_EQ(host_only(false).size(), 1u);
}

}  // namespace
}  // namespace opscope::analyze
