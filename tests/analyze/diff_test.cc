// Comparing two traces.
#include "analyze/diff.h"

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

TEST(Diff, StepsAndOperatorDeltas) {
  Builder before, after;
  before.Add(EventClass::kStep, "ProfilerStep#1", 0, 1000)
      .Add(EventClass::kStep, "ProfilerStep#2", 1000, 2000);
  before.Add(EventClass::kKernel, "gemm", 0, 600).Add(EventClass::kKernel, "TransData", 600, 800);
  after.Add(EventClass::kStep, "ProfilerStep#1", 0, 800)
      .Add(EventClass::kStep, "ProfilerStep#2", 800, 1600);
  after.Add(EventClass::kKernel, "gemm", 0, 606).Add(EventClass::kKernel, "relu", 606, 650);
  const TraceDiff d = DiffTraces(before.model, after.model);
  EXPECT_EQ(d.basis, "mean step");
  EXPECT_EQ(d.before_ns, 1000000);
  EXPECT_EQ(d.after_ns, 800000);
  EXPECT_DOUBLE_EQ(d.change_pct, -20.0);
  std::map<std::string, std::string> change;
  for (const auto& o : d.operators) change[o.name] = o.change;
  EXPECT_EQ(change["TransData"], "removed");
  EXPECT_EQ(change["relu"], "added");
  EXPECT_EQ(change["gemm"], "same");  // +1%, within 2%
  EXPECT_EQ(change["ProfilerStep#1"], "faster");
  // Without steps, the span decides.
  Builder x, y;
  x.Add(EventClass::kKernel, "a", 0, 100);
  y.Add(EventClass::kKernel, "a", 50, 200);
  EXPECT_EQ(DiffTraces(x.model, y.model).basis, "trace span");
  EXPECT_DOUBLE_EQ(DiffTraces(x.model, y.model).change_pct, 50.0);
}

}  // namespace
}  // namespace opscope::analyze
