#include <gtest/gtest.h>

#include "opscope/opscope.h"

namespace opscope::testing {
int RunCompiledOutScopes(int count);
}

namespace opscope {
namespace {

TEST(CompiledOut, ScopesRecordAndEvaluateNothing) {
  uint64_t events = 1;
  ProfilerOptions opts;
  opts.on_trace_ready = [&](TraceData& trace) { events = trace.EventCount(); };
  Profiler prof(opts);
  prof.Start();
  EXPECT_EQ(testing::RunCompiledOutScopes(1000), 0);
  prof.Stop();
  EXPECT_EQ(events, 0u);
}

}  // namespace
}  // namespace opscope
