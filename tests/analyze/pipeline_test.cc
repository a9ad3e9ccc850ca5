// The pipeline: every registered pass runs after its needs, an unknown need
// or a cycle is refused, and the result does not depend on the thread count.
#include "analyze/pipeline.h"

#include <gtest/gtest.h>

#include <set>

#include "analyze/importer.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

void Nothing(const TraceModel&, Analysis&) {}

TEST(Pipeline, EveryRegisteredPassRunsAfterItsNeeds) {
  const auto order = PassOrder(Passes());
  ASSERT_EQ(order.size(), Passes().size());
  std::set<std::string_view> done;
  for (const Pass* p : order) {
    for (const std::string_view need : p->needs) EXPECT_TRUE(done.count(need)) << p->name;
    EXPECT_FALSE(p->question.empty()) << p->name;
    done.insert(p->name);
  }
}

TEST(Pipeline, UnknownNeedsCyclesAndTwinsAreRefused) {
  const auto message = [](const std::vector<Pass>& passes) {
    try {
      PassOrder(passes);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInternal);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"a", "?", {"b"}, Nothing}}).find("needs 'b', which is not registered"),
            std::string::npos);
  EXPECT_NE(message({{"a", "?", {"b"}, Nothing}, {"b", "?", {"a"}, Nothing}}).find("cycle"),
            std::string::npos);
  EXPECT_NE(message({{"a", "?", {}, Nothing}, {"a", "?", {}, Nothing}}).find("two analysis passes"),
            std::string::npos);
  const std::vector<Pass> chain = {
      {"c", "?", {"b"}, Nothing}, {"b", "?", {"a"}, Nothing}, {"a", "?", {}, Nothing}};
  const auto order = PassOrder(chain);
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0]->name, "a");
  EXPECT_EQ(order[2]->name, "c");
}

TEST(Pipeline, TheSameAnalysisOnAnyThreadCount) {
  const TraceModel model =
      ImportTrace(std::filesystem::path(OPSCOPE_TEST_DATA) / "kineto/alexnet_cuda_rank0.json.gz");
  const Analysis one = AnalyzeTrace(model, {.threads = 1});
  for (const int threads : {2, 8}) {
    const Analysis many = AnalyzeTrace(model, {.threads = threads});
    ASSERT_EQ(many.operators.size(), one.operators.size());
    for (size_t i = 0; i < one.operators.size(); ++i) {
      EXPECT_EQ(many.operators[i].name, one.operators[i].name);
      EXPECT_EQ(many.operators[i].total_ns, one.operators[i].total_ns);
    }
    EXPECT_EQ(many.busy.busy_ns, one.busy.busy_ns);
    EXPECT_EQ(many.launch.launch_delay_p50_ns, one.launch.launch_delay_p50_ns);
    EXPECT_EQ(many.roofline.size(), one.roofline.size());
    EXPECT_EQ(many.steps.size(), one.steps.size());
    EXPECT_EQ(many.device_ns, one.device_ns);
  }
  EXPECT_GT(one.device_ns, 0);
  EXPECT_TRUE(one.busy.has_device);
}

}  // namespace
}  // namespace opscope::analyze
