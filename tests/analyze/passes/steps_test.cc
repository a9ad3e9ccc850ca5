// The steps pass: device time inside each step span.
#include "analyze/passes/steps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analyze/compute_device.h"
#include "analyze/model_builder.h"
#include "analyze/names.h"
#include "analyze/pipeline.h"

namespace opscope::analyze {
namespace {

using model_builder::Builder;

// A loop's iterations: `n` of them, each `per_step` kernels of 1 us named
// "<prefix>0", "<prefix>1", ... after `from_us`; returns where it ended.
int64_t Loop(Builder& b, int n, int per_step, std::string_view prefix, int64_t from_us) {
  int64_t t = from_us;
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < per_step; ++k, ++t) {
      b.Add(EventClass::kKernel, std::string(prefix) + std::to_string(k), t, t + 1);
    }
    t += 50;  // the host between iterations
  }
  return t;
}

// Steps read from a trace that records none (issue 36): the iterations of a
// loop, and nothing where the repetition is a model's layers.
TEST(Steps, InferredFromAKernelLaunchedOncePerIteration) {
  Builder b;
  // Start-up work first, then 8 iterations of 120 kernels each.
  for (int k = 0; k < 300; ++k) b.Add(EventClass::kKernel, "setup", k, k + 1);
  const int64_t end = Loop(b, 8, 120, "k", 1000);
  const InferredSteps inferred = InferSteps(b.model);
  EXPECT_EQ(inferred.kernel, "k0");  // every kernel runs once per iteration: the first
  EXPECT_EQ(inferred.tasks_per_step, 120);
  ASSERT_EQ(inferred.spans.size(), 7u);  // between 8 launches; the last iteration in none
  EXPECT_EQ(inferred.spans[0], std::make_pair(int64_t{1000000}, int64_t{170000}));
  EXPECT_EQ(inferred.spans[6].first, (1000 + 6 * 170) * 1000);
  EXPECT_EQ(end, 1000 + 8 * 170);
  // The steps pass uses them, the first (start-up) work outside every step.
  const auto steps = ComputeSteps(b.model);
  ASSERT_EQ(steps.size(), 7u);
  EXPECT_EQ(steps[0].name, "inferred step 0");
  EXPECT_EQ(steps[0].compute_ns, 120000);
  EXPECT_EQ(steps[0].idle_ns, 50000);
  const Analysis a = AnalyzeTrace(b.model);
  EXPECT_EQ(a.step_summary.inferred_from, "k0");
  EXPECT_EQ(a.step_summary.complete, 7);
  // A trace with step spans of its own keeps them.
  b.Add(EventClass::kStep, "ProfilerStep#1", 1000, 2000);
  EXPECT_TRUE(InferSteps(b.model).spans.empty());
  EXPECT_EQ(ComputeSteps(b.model).size(), 1u);
}

TEST(Steps, NotInferredFromLayersOrIrregularWork) {
  // One forward pass of 24 layers of 40 kernels: too few tasks between two
  // launches of a layer's kernel for an iteration.
  Builder layers;
  Loop(layers, 24, 40, "layer", 0);
  EXPECT_TRUE(InferSteps(layers.model).spans.empty());
  // Large layers, recorded in one forward and backward: a forward kernel's
  // launches leave the whole backward after the last of them.
  Builder once;
  const int64_t t = Loop(once, 8, 120, "fwd", 0);
  Loop(once, 8, 240, "bwd", t);
  EXPECT_TRUE(InferSteps(once.model).spans.empty());
  // Iterations whose work differs from one to the next (no two alike).
  Builder irregular;
  int64_t at = 0;
  for (int i = 0; i < 10; ++i) {
    irregular.Add(EventClass::kKernel, "marker", at, at + 1), ++at;
    for (int k = 0; k < 150; ++k, ++at) {
      irregular.Add(EventClass::kKernel, "w" + std::to_string(i * 1000 + k), at, at + 1);
    }
  }
  EXPECT_TRUE(InferSteps(irregular.model).spans.empty());
  // An iteration in the middle that runs twice the work (an evaluation):
  // not a loop of equal iterations.
  Builder eval;
  int64_t e = Loop(eval, 4, 120, "k", 0);
  e = Loop(eval, 1, 240, "k", e);
  Loop(eval, 4, 120, "k", e);
  EXPECT_TRUE(InferSteps(eval.model).spans.empty());
}

TEST(Steps, DeviceTimeInsideEachStep) {
  Builder b;
  b.Add(EventClass::kStep, "ProfilerStep#1", 0, 100)
      .Add(EventClass::kStep, "ProfilerStep#2", 100, 200)
      .Add(EventClass::kKernel, "gemm", 0, 30)
      .Add(EventClass::kCommunication, "ncclKernel_AllReduce_RING_LL_Sum_float", 20, 50)
      .Add(EventClass::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 60, 70)
      .Add(EventClass::kKernel, "gemm", 90, 150);  // crosses into step 2
  const auto steps = ComputeSteps(b.model);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].name, "ProfilerStep#1");
  EXPECT_EQ(steps[0].compute_ns, 40000);        // 0..30 and 90..100
  EXPECT_EQ(steps[0].communication_ns, 30000);  // 20..50
  EXPECT_EQ(steps[0].memory_ns, 10000);
  EXPECT_EQ(steps[0].idle_ns, 100000 - 70000);  // busy: 0..50, 60..70, 90..100
  EXPECT_EQ(steps[1].compute_ns, 50000);
  EXPECT_EQ(steps[1].idle_ns, 50000);
  // Without overlap, the parts add up to the step: communication 20..50 less
  // compute's 20..30; the copy 60..70 overlaps neither.
  EXPECT_EQ(steps[0].communication_exposed_ns, 20000);
  EXPECT_EQ(steps[0].memory_exposed_ns, 10000);
  for (const auto& s : steps) {
    EXPECT_EQ(s.compute_ns + s.communication_exposed_ns + s.memory_exposed_ns + s.idle_ns,
              s.duration_ns)
        << s.name;
  }
}

TEST(Steps, ExposedPartsAddUpWhateverOverlaps) {
  // Random kernels, collectives and copies over five steps: the four parts
  // add up to each step, and each exposed part is at most its whole.
  std::mt19937 rng(7);
  Builder b;
  for (int i = 0; i < 5; ++i)
    b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(i), i * 1000, (i + 1) * 1000);
  const EventClass classes[] = {EventClass::kKernel, EventClass::kCommunication,
                                EventClass::kMemcpy, EventClass::kMemset};
  for (int i = 0; i < 300; ++i) {
    const int64_t begin = std::uniform_int_distribution<int64_t>(0, 4990)(rng);
    const int64_t length = std::uniform_int_distribution<int64_t>(1, 120)(rng);
    b.Add(classes[i % 4], i % 4 == 1 ? "ncclKernel_AllReduce" : "k", begin, begin + length);
  }
  for (const auto& s : ComputeSteps(b.model)) {
    EXPECT_EQ(s.compute_ns + s.communication_exposed_ns + s.memory_exposed_ns + s.idle_ns,
              s.duration_ns)
        << s.name;
    EXPECT_LE(s.communication_exposed_ns, s.communication_ns);
    EXPECT_LE(s.memory_exposed_ns, s.memory_ns);
    EXPECT_GE(s.communication_exposed_ns, 0);
    EXPECT_GE(s.memory_exposed_ns, 0);
  }
}

// Steps from durations alone, for the status rules.
std::vector<StepBreakdown> Spans(const std::vector<int64_t>& durations_us) {
  std::vector<StepBreakdown> steps;
  int64_t t = 0;
  for (size_t i = 0; i < durations_us.size(); ++i) {
    StepBreakdown s;
    s.name = "ProfilerStep#" + std::to_string(i);
    s.begin_ns = t, s.duration_ns = durations_us[i] * 1000, s.has_work = true;
    s.events = durations_us[i] < 100 ? 2 : 50;  // a cut-off step runs fewer operators
    t += s.duration_ns;
    steps.push_back(s);
  }
  return steps;
}

std::vector<std::string> Statuses(const std::vector<StepBreakdown>& steps) {
  std::vector<std::string> out;
  for (const auto& s : steps) out.push_back(s.status);
  return out;
}

TEST(Steps, WarmupPartialAndEmptyStepsAreNotAveraged) {
  // A 9.3 ms step, then one cut off after 49 us by the end of the trace.
  auto steps = Spans({9300, 9200, 49});
  ClassifySteps(steps);
  EXPECT_EQ(Statuses(steps), (std::vector<std::string>{"complete", "complete", "partial"}));
  // A slow first step (compilation, allocation): warm-up, when over 1.5x the
  // median of the later complete steps.
  steps = Spans({5000, 1000, 1020, 990, 1010});
  ClassifySteps(steps);
  EXPECT_EQ(Statuses(steps),
            (std::vector<std::string>{"warm-up", "complete", "complete", "complete", "complete"}));
  // 1.4x is within the rule: kept.
  steps = Spans({1400, 1000, 1000, 1000});
  ClassifySteps(steps);
  EXPECT_EQ(steps[0].status, "complete");
  // A last step that is only faster (as many operators) is complete, and the
  // slow first one is warm-up.
  steps = Spans({33000, 12000, 2800});
  ClassifySteps(steps);
  EXPECT_EQ(Statuses(steps), (std::vector<std::string>{"warm-up", "complete", "complete"}));
  // Two slow leading steps; never more than half the steps.
  steps = Spans({6000, 4000, 1000, 1000, 1000, 1000});
  ClassifySteps(steps);
  EXPECT_EQ(steps[0].status, "warm-up");
  EXPECT_EQ(steps[1].status, "warm-up");
  EXPECT_EQ(steps[2].status, "complete");
  // Two steps only: no warm-up judgement (it needs two later steps).
  steps = Spans({5000, 3000});
  ClassifySteps(steps);
  EXPECT_EQ(Statuses(steps), (std::vector<std::string>{"complete", "complete"}));
  // An empty last step (Step() at the end of the loop, then Stop()).
  steps = Spans({1000, 1000, 1000});
  steps.back().has_work = false;
  ClassifySteps(steps);
  EXPECT_EQ(steps.back().status, "empty");
  const StepSummary sum = SummarizeSteps(steps);
  EXPECT_EQ(sum.steps, 3);
  EXPECT_EQ(sum.complete, 2);
  EXPECT_EQ(sum.mean_ns, 1000000);
}

TEST(Steps, AStepThatOutlastsTheRecordingIsNoStep) {
  // Three steps of 1 ms from 0; the recording ends at 3 ms.
  auto steps = Spans({1000, 1000, 1000});
  ClassifySteps(steps, 3'000'000);
  EXPECT_EQ(Statuses(steps), (std::vector<std::string>{"complete", "complete", "complete"}));
  // The last ends within kOverrunSlackNs of it (clock rounding): complete.
  steps = Spans({1000, 1000, 1000 + 900});
  ClassifySteps(steps, 3'000'000);
  EXPECT_EQ(steps.back().status, "complete");
  // Past it: overrun, with how much of it the trace holds; the others stay.
  steps = Spans({1000, 1000, 1000 + 5000});
  ClassifySteps(steps, 3'000'000);
  EXPECT_EQ(Statuses(steps), (std::vector<std::string>{"complete", "complete", "overrun"}));
  EXPECT_NE(steps.back().status_reason.find("ends 5.000 ms after"), std::string::npos)
      << steps.back().status_reason;
  EXPECT_NE(steps.back().status_reason.find("only its first 1.000 ms"), std::string::npos)
      << steps.back().status_reason;
  // A recording end that is not known judges nothing.
  steps = Spans({1000, 1000, 1000 + 5000});
  ClassifySteps(steps);
  EXPECT_EQ(steps.back().status, "complete");
  // The other rules go on over the rest: a slow first step is warm-up.
  steps = Spans({5000, 1000, 1000, 1000000});
  ClassifySteps(steps, 8'000'000);
  EXPECT_EQ(Statuses(steps),
            (std::vector<std::string>{"warm-up", "complete", "complete", "overrun"}));
}

TEST(Steps, OnTheCpuWhenTheTraceHasNoDeviceWork) {
  Builder b;
  b.Add(EventClass::kStep, "ProfilerStep#1", 0, 100)
      .Add(EventClass::kStep, "ProfilerStep#2", 100, 200)
      .Add(EventClass::kHostOp, "aten::conv2d", 5, 60)
      .Add(EventClass::kHostOp, "aten::convolution", 6, 59)  // nested: counted once
      .Add(EventClass::kHostOp, "aten::relu", 70, 80)
      .Add(EventClass::kHostOp, "aten::mm", 110, 190);
  const auto steps = ComputeSteps(b.model);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].compute_ns, 65000);
  EXPECT_EQ(steps[0].idle_ns, 35000);
  EXPECT_EQ(steps[1].compute_ns, 80000);
  EXPECT_EQ(steps[0].status, "complete");
}

// A trace of the program's own scopes alone (opscope's C, C++ and Python APIs,
// record_function without operators): the scopes are the work. Nested scopes
// count once, data loading is not compute, and where the trace has a single
// framework operator the scopes are annotations again.
TEST(Steps, ScopesAreTheWorkWhenTheTraceHasNothingElse) {
  Builder b;
  b.Add(EventClass::kStep, "ProfilerStep#1", 0, 100)
      .Add(EventClass::kStep, "ProfilerStep#2", 100, 200)
      .Add(EventClass::kAnnotation, "forward", 10, 60)
      .Add(EventClass::kAnnotation, "layer1", 20, 40)  // nested: counted once
      .Add(EventClass::kAnnotation, "DataLoader.__next__", 100, 130)
      .Add(EventClass::kAnnotation, "forward", 130, 190);
  EXPECT_TRUE(ScopesAreTheWork(b.model));
  EXPECT_EQ(ComputeDeviceOf(b.model), ComputeOn::kCpu);
  auto steps = ComputeSteps(b.model);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].compute_ns, 50000);
  EXPECT_EQ(steps[0].idle_ns, 50000);
  EXPECT_EQ(steps[1].compute_ns, 60000);  // the 30 us of data loading is idle
  EXPECT_EQ(steps[1].idle_ns, 40000);
  EXPECT_EQ(steps[0].status, "complete");
  EXPECT_EQ(steps[1].status, "complete");

  b.Add(EventClass::kHostOp, "aten::mm", 150, 160);
  EXPECT_FALSE(ScopesAreTheWork(b.model));
  steps = ComputeSteps(b.model);
  EXPECT_EQ(steps[0].status, "empty");
  EXPECT_EQ(steps[1].compute_ns, 10000);
}

}  // namespace
}  // namespace opscope::analyze
