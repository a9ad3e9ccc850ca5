// The advisor's rules on analyses of synthetic traces.
#include "analyze/advisor.h"

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

std::vector<std::string> Ids(const std::vector<Finding>& findings) {
  std::vector<std::string> ids;
  for (const auto& f : findings) ids.push_back(f.id);
  return ids;
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
  lenient.ai_cpu_pct = 90, lenient.transfer_device_pct = 90;
  EXPECT_TRUE(Advise(AnalyzeTrace(b.model), lenient).empty());
}

}  // namespace
}  // namespace opscope::analyze
