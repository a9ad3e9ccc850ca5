// The host_practices pass: its rules on models whose answers are known by
// construction.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analyze/advisor.h"
#include "analyze/analysis.h"
#include "analyze/model_builder.h"
#include "analyze/pipeline.h"

namespace opscope::analyze {
namespace {

using model_builder::Builder;

// The fused-optimizer advice measures the optimizer's steps against the
// complete steps, so the pass needs the steps pass: asked for alone, it must
// still judge them (it read the steps' table while that pass was writing it,
// and without it judged the trace's span). Three 10 ms steps with a 1 ms
// optimizer step each, then 20 ms of other work: 3 ms of the 30 ms the steps
// take, 10.0% (of the 50 ms span, 6.0%).
TEST(HostPractices, TheOptimizerIsJudgedAgainstTheCompleteSteps) {
  Builder b;
  b.model.fused_optimizers = {"torch_npu.optim.NpuFused", {"Adam"}};
  for (int s = 0; s < 3; ++s) {
    const int64_t t = 10'000 * s;
    b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(s), t, t + 10'000);
    b.Add(EventClass::kHostOp, "aten::mm", t, t + 2'000);
    b.Add(EventClass::kKernel, "gemm", t + 100, t + 1'900);
    b.Add(EventClass::kHostOp, "Optimizer.step#Adam.step", t + 3'000, t + 4'000);
  }
  b.Add(EventClass::kHostOp, "aten::save", 30'000, 50'000);
  for (const bool alone : {false, true}) {
    const Analysis a =
        alone ? AnalyzeTrace(b.model, {.passes = {"host_practices"}}) : AnalyzeTrace(b.model);
    const auto findings = Advise(a);
    const auto it = std::find_if(findings.begin(), findings.end(),
                                 [](const Finding& f) { return f.id == "fused_optimizer"; });
    ASSERT_NE(it, findings.end()) << alone;
    EXPECT_NE(it->title.find("take 10.0% of the window (3.000 ms)"), std::string::npos)
        << alone << ": " << it->title;
    EXPECT_NE(it->title.find("torch_npu.optim.NpuFusedAdam"), std::string::npos) << it->title;
  }
}

}  // namespace
}  // namespace opscope::analyze
