// The advisor's rules on analyses of synthetic traces.
#include "analyze/advisor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/model_builder.h"
#include "analyze/names.h"
#include "analyze/passes/pass.h"
#include "analyze/pipeline.h"

namespace opscope::analyze {
namespace {

using model_builder::Builder;

std::vector<std::string> Ids(const std::vector<Finding>& findings) {
  std::vector<std::string> ids;
  for (const auto& f : findings) ids.push_back(f.id);
  return ids;
}

TEST(Advisor, EveryRuleIsRegisteredOnceAndReadsRegisteredPasses) {
  std::set<std::string_view> passes, ids;
  for (const Pass& p : Passes()) passes.insert(p.name);
  for (const Rule& rule : Rules()) {
    EXPECT_TRUE(ids.insert(rule.id).second) << "two rules make " << rule.id;
    for (const std::string_view need : rule.needs) {
      EXPECT_TRUE(passes.count(need)) << rule.id << " reads '" << need << "', no such pass";
    }
    EXPECT_FALSE(rule.when(Thresholds{}).empty()) << rule.id;
    EXPECT_NE(rule.apply, nullptr) << rule.id;
  }
}

TEST(Advisor, ARuleWhosePassesDidNotRunIsNotApplied) {
  // An idle device: low_device_utilization fires when device_busy ran, and
  // not when only op_stats did (its input would be empty, not healthy).
  Builder b;
  b.Add(EventClass::kKernel, "k", 0, 10).Add(EventClass::kKernel, "k", 1000, 1010);
  const auto all = Ids(Advise(AnalyzeTrace(b.model)));
  EXPECT_NE(std::find(all.begin(), all.end(), "low_device_utilization"), all.end());
  const auto some = Ids(Advise(AnalyzeTrace(b.model, {.passes = {"op_stats"}})));
  EXPECT_EQ(std::find(some.begin(), some.end(), "low_device_utilization"), some.end());
}

TEST(Advisor, RulesFireOnTheirEvidenceAndOnlyThen) {
  // A busy device with nothing wrong: no findings.
  Builder healthy;
  for (int i = 0; i < 10; ++i) healthy.Add(EventClass::kKernel, "hgemm", i * 100, i * 100 + 99);
  EXPECT_TRUE(Advise(AnalyzeTrace(healthy.model)).empty());

  // Idle device waiting on syncs, TransData, AI CPU tasks and slow pageable copies.
  Builder b;
  b.Kind("AI_CORE").Add(EventClass::kKernel, "TransData", 0, 40);
  b.Kind("AI_CPU").Add(EventClass::kKernel, "Cast", 40, 60);
  b.Kind("").Add(EventClass::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 60, 80, 40000);  // 2 GB/s
  b.Copy(CopyDirection::kHostToDevice, HostMemory::kPageable);
  b.Add(EventClass::kKernel, "MatMul", 1000, 1020);
  b.Add(EventClass::kSync, "aclrtSynchronizeStream", 80, 990);
  const auto findings = Advise(AnalyzeTrace(b.model));
  const auto ids = Ids(findings);
  for (const char* id :
       {"low_device_utilization", "layout_conversions", "cpu_fallback", "transfers_HtoD"}) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
  }
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  const auto low = std::find_if(findings.begin(), findings.end(),
                                [](const Finding& f) { return f.id == "low_device_utilization"; });
  EXPECT_NE(low->evidence.find("synchronization wait"), std::string::npos) << low->evidence;
  EXPECT_NE(low->action.find(".item()"), std::string::npos);
  const auto copies = std::find_if(findings.begin(), findings.end(),
                                   [](const Finding& f) { return f.id == "transfers_HtoD"; });
  EXPECT_NE(copies->action.find("pin_memory"), std::string::npos);

  // The thresholds decide: raise them and the findings go.
  Thresholds lenient;
  lenient.busy_warning_pct = 1, lenient.layout_device_pct = 90, lenient.layout_host_pct = 90;
  lenient.ai_cpu_pct = 90, lenient.transfer_device_pct = 90, lenient.dominant_op_pct = 101;
  EXPECT_TRUE(Advise(AnalyzeTrace(b.model), lenient).empty())
      << Ids(Advise(AnalyzeTrace(b.model), lenient))[0];
}

const Finding* Find(const std::vector<Finding>& findings, std::string_view id) {
  for (const auto& f : findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

TEST(Advisor, CpuTracesGetCpuFindings) {
  // A CPU-only trace: operators 60% of the time, one of them dominant.
  Builder b;
  for (int i = 0; i < 10; ++i) {
    const int64_t t = i * 1000;
    b.Add(EventClass::kHostOp, "aten::conv2d", t, t + 500)
        .Add(EventClass::kHostOp, "aten::relu", t + 500, t + 600)
        .Add(EventClass::kPython, "forward", t + 600, t + 1000);
  }
  const Analysis a = AnalyzeTrace(b.model);
  EXPECT_EQ(a.compute_on, ComputeOn::kCpu);
  EXPECT_NEAR(a.busy.busy_pct, 100.0 * 6000 / 9600, 0.01);
  const auto findings = Advise(a);
  const Finding* low = Find(findings, "low_device_utilization");
  ASSERT_NE(low, nullptr);
  EXPECT_NE(low->title.find("CPU"), std::string::npos);
  EXPECT_NE(low->evidence.find("outside operators"), std::string::npos) << low->evidence;
  const Finding* dominant = Find(findings, "dominant_operator");
  ASSERT_NE(dominant, nullptr);
  EXPECT_NE(dominant->title.find("aten::conv2d"), std::string::npos);
  EXPECT_NE(dominant->title.find("83.3%"), std::string::npos) << dominant->title;  // 500 of 600
  EXPECT_EQ(Find(findings, "launch_bound"), nullptr);
}

TEST(Advisor, AdviceFollowsWhatTheDeviceSupports) {
  Builder b;
  b.Add(EventClass::kKernel, "volta_sgemm_128x64_nn", 0, 800)
      .Add(EventClass::kKernel, "relu", 800, 1000);
  Analysis a = AnalyzeTrace(b.model);
  a.compute_major = 7;
  const std::vector<Finding> volta = Advise(a);
  const Finding* mp = Find(volta, "mixed_precision");
  ASSERT_NE(mp, nullptr);
  EXPECT_NE(mp->action.find("fp16"), std::string::npos);
  EXPECT_NE(mp->action.find("no bf16"), std::string::npos) << mp->action;
  a.compute_major = 8;
  const std::vector<Finding> ampere = Advise(a);
  const Finding* mp8 = Find(ampere, "mixed_precision");
  ASSERT_NE(mp8, nullptr);
  EXPECT_EQ(mp8->action.find("no bf16"), std::string::npos) << mp8->action;
  EXPECT_NE(mp8->action.find("bf16"), std::string::npos) << mp8->action;
}

}  // namespace
}  // namespace opscope::analyze
