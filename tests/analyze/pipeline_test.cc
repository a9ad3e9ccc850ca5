// The pipeline: every registered pass runs after its needs, an unknown need
// or a cycle is refused, and the result does not depend on the thread count.
#include "analyze/pipeline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "analyze/importer.h"
#include "analyze/model_builder.h"
#include "analyze/passes/import_notes.h"
#include "analyze/passes/launch.h"
#include "analyze/passes/roofline.h"
#include "core/cancel.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

void Nothing(const TraceModel&, Analysis&) {}

// Measured ceilings apply only to a trace of the device they were measured on.
using model_builder::Builder;

TEST(Pipeline, CeilingsApplyOnlyToTheirDevice) {
  const RooflineCeilings cpu{
      "Intel(R) Xeon(R) Platinum 8480+", "ceilings.json", {{"fp32", 2e12}}, 2e11};
  // A GPU trace: the CPU's ceilings are refused; the known A100 figures apply.
  Builder gpu;
  gpu.Add(EventClass::kKernel, "gemm", 0, 10);
  gpu.model.device_name = "NVIDIA A100-PG509-200";
  Analysis a = AnalyzeTrace(gpu.model, {.ceilings = cpu});
  ASSERT_TRUE(a.ceilings.has_value());
  EXPECT_NE(a.ceilings->source.find("A100"), std::string::npos);
  EXPECT_NE(a.ceilings_note.find("measured on 'Intel(R) Xeon(R) Platinum 8480+'"),
            std::string::npos)
      << a.ceilings_note;
  // A CPU trace that names no device: not matched, no ceilings, and the reason.
  Builder host;
  host.Add(EventClass::kHostOp, "aten::mm", 0, 10);
  a = AnalyzeTrace(host.model, {.ceilings = cpu});
  EXPECT_FALSE(a.ceilings.has_value());
  EXPECT_NE(a.ceilings_note.find("does not name the device"), std::string::npos) << a.ceilings_note;
  // opscope's own CPU trace names its CPU: the same CPU's ceilings apply.
  host.model.metadata["otherData"] =
      "{\"devices\":[{\"id\":\"cpu\",\"type\":\"cpu\",\"name\":\"Intel(R) Xeon(R) "
      "Platinum 8480+\",\"logical_cpus\":2}]}";
  a = AnalyzeTrace(host.model, {.ceilings = cpu});
  ASSERT_TRUE(a.ceilings.has_value());
  EXPECT_EQ(a.ceilings->source, "ceilings.json");
  EXPECT_TRUE(a.ceilings_note.empty()) << a.ceilings_note;
}

// Analyses add durations up; a trace whose durations together pass 4e18 ns
// (each one within the importers' bound) is refused with the event that
// passes it, before a sum overflows (found by the fuzzer: a task_time CSV
// whose durations were timestamps).
TEST(Pipeline, RefusesDurationsThatAddUpBeyondTheTimeBound) {
  constexpr int64_t kYearsUs = 1'736'408'883'711'114;  // 1.7e18 ns each
  Builder b;
  b.model.source = "t.csv";
  b.Add(EventClass::kKernel, "a", 0, kYearsUs).Add(EventClass::kKernel, "b", 0, kYearsUs);
  EXPECT_NO_THROW(AnalyzeTrace(b.model));  // 3.5e18 ns in all
  b.Add(EventClass::kKernel, "c", 0, kYearsUs);
  try {
    AnalyzeTrace(b.model);
    ADD_FAILURE() << "not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("'t.csv': the events' durations add up to more than 4e18 "
                                         "ns (about 126 years) by event 2 ('c'"),
              std::string::npos)
        << e.what();
  }
}

// Host events that overlap unevenly on one thread (one starts inside another
// and ends after it) are counted and said in the import notes (issue 37:
// producers write traces the format does not allow); rounding (1 us or less)
// is not counted.
TEST(Pipeline, UnevenlyOverlappingHostEventsAreSaid) {
  Builder b;
  b.Add(EventClass::kHostOp, "outer", 0, 100)
      .Add(EventClass::kHostOp, "spills", 50, 130)    // 30 us past "outer"
      .Add(EventClass::kHostOp, "rounded", 200, 300)  // its inner one ends 1 us late: rounding
      .Add(EventClass::kKernel, "k", 0, 10);
  b.Add(EventClass::kHostOp, "inner", 250, 301);
  const Analysis a = AnalyzeTrace(b.model);
  const auto* found = a.results.Get<ImportNotes>(kImportNotesPass);
  ASSERT_NE(found, nullptr);
  const std::vector<std::string>* notes = &found->notes;
  ASSERT_EQ(notes->size(), 1u);
  EXPECT_NE((*notes)[0].find("1 host event start inside another on their thread and end after it "
                             "(by up to 0.030 ms; the first: 'spills')"),
            std::string::npos)
      << (*notes)[0];
  Builder clean;
  clean.Add(EventClass::kHostOp, "outer", 0, 100).Add(EventClass::kHostOp, "inner", 10, 90);
  const Analysis c = AnalyzeTrace(clean.model);
  const auto* none = c.results.Get<ImportNotes>(kImportNotesPass);
  ASSERT_NE(none, nullptr);
  EXPECT_TRUE(none->notes.empty());
}

// A cancelled analysis (Ctrl-C in the Python package) stops before its next
// pass on whichever thread takes it, and says so with core::Cancelled, not an
// opscope Error; without a flag, or with one not set, it runs whole.
TEST(Pipeline, ACancelledAnalysisStopsBeforeItsNextPass) {
  Builder b;
  b.Add(EventClass::kHostOp, "aten::mm", 0, 10);
  b.Add(EventClass::kKernel, "gemm", 2, 8);
  std::atomic<bool> flag{false};
  {
    core::CancelScope scope(&flag);
    EXPECT_FALSE(AnalyzeTrace(b.model, {.threads = 2}).pass_ms.empty());
    flag = true;
    for (const int threads : {1, 2}) {
      EXPECT_THROW(AnalyzeTrace(b.model, {.threads = threads}), core::Cancelled) << threads;
    }
  }
  EXPECT_FALSE(core::IsCancelled()) << "the scope ended";
  EXPECT_EQ(AnalyzeTrace(b.model, {.threads = 2}).pass_ms.size(), Passes().size());
}

// Threads a cancellable computation starts take the flag of the thread that
// starts them (core::WithCallersCancel); others see none.
TEST(Pipeline, ThreadsTakeTheirStartersCancelFlag) {
  std::atomic<bool> flag{true};
  core::CancelScope scope(&flag);
  bool inherited = false, plain = true;
  std::thread([&] { plain = core::IsCancelled(); }).join();
  std::thread(core::WithCallersCancel([&] { inherited = core::IsCancelled(); })).join();
  EXPECT_TRUE(inherited);
  EXPECT_FALSE(plain);
}

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
    const auto* launch = many.results.Get<LaunchBound>(kLaunchPass);
    ASSERT_NE(launch, nullptr);
    EXPECT_EQ(launch->launch_delay_p50_ns,
              one.results.Get<LaunchBound>(kLaunchPass)->launch_delay_p50_ns);
    const auto* roofline = many.results.Get<std::vector<OpRoofline>>(kRooflinePass);
    ASSERT_NE(roofline, nullptr);
    EXPECT_EQ(roofline->size(), one.results.Get<std::vector<OpRoofline>>(kRooflinePass)->size());
    EXPECT_EQ(many.steps.size(), one.steps.size());
    EXPECT_EQ(many.device_ns, one.device_ns);
  }
  EXPECT_GT(one.device_ns, 0);
  EXPECT_TRUE(one.busy.has_device);
}

}  // namespace
}  // namespace opscope::analyze
