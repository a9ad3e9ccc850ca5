// The critical_path pass on models whose paths are known by construction:
// each edge kind at a known place, the path adding up to its window, and the
// walk's choices (the dependency satisfied last) where two compete.
#include "analyze/passes/critical_path.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>

#include "analyze/advisor.h"
#include "analyze/analysis.h"
#include "analyze/model_builder.h"
#include "analyze/pipeline.h"

namespace opscope::analyze {
namespace {

using model_builder::Builder;

// An event on its own thread or stream (`tid`), in microseconds.
void On(Builder& b, std::string_view tid, EventClass cls, std::string_view name, int64_t begin_us,
        int64_t end_us, int64_t correlation = -1) {
  b.model.Append(EventRow{.start_ns = begin_us * 1000,
                          .duration_ns = (end_us - begin_us) * 1000,
                          .name = b.model.Intern(name),
                          .track = b.model.TrackFor(IsDevice(cls) ? "0" : "1", tid),
                          .cls = cls,
                          .correlation = correlation});
}

CriticalPath PathOf(const TraceModel& model) {
  const Analysis a = AnalyzeTrace(model);
  const CriticalPath* cp = a.results.Get<CriticalPath>(kCriticalPathPass);
  EXPECT_NE(cp, nullptr);
  return cp == nullptr ? CriticalPath{} : *cp;
}

int64_t Us(const CriticalPath& cp, PathEdge edge) {
  return cp.by_edge[static_cast<size_t>(edge)] / 1000;
}

// The path adds up to its window, by edge and by state.
void ExpectWhole(const CriticalPath& cp) {
  EXPECT_EQ(std::accumulate(cp.by_edge.begin(), cp.by_edge.end(), int64_t{0}), cp.window_ns);
  EXPECT_EQ(std::accumulate(cp.by_state.begin(), cp.by_state.end(), int64_t{0}), cp.window_ns);
  int64_t parts = 0;
  for (const CriticalPath::Part& p : cp.parts) parts += p.ns;
  EXPECT_EQ(parts, cp.window_ns);
  EXPECT_EQ(cp.cut_walks, 0);
}

int64_t PartUs(const CriticalPath& cp, PathEdge edge, std::string_view name) {
  for (const CriticalPath::Part& p : cp.parts) {
    if (p.edge == edge && p.name == name) return p.ns / 1000;
  }
  return -1;
}

// A launch, its kernel on an idle stream, and a synchronisation that waits
// for it: the sync's tail, the kernel, and the launch delay from the call's
// start (HTA's kernel_launch_delay).
TEST(CriticalPath, SyncLeadsToTheKernelAndItsLaunch) {
  Builder b;
  On(b, "1", EventClass::kRuntime, "cudaLaunchKernel", 0, 10, 1);
  On(b, "7", EventClass::kKernel, "gemm", 15, 25, 1);
  On(b, "1", EventClass::kRuntime, "cudaDeviceSynchronize", 12, 30);
  const CriticalPath cp = PathOf(b.model);
  ExpectWhole(cp);
  EXPECT_EQ(cp.window_ns, 30'000);
  EXPECT_EQ(Us(cp, PathEdge::kSync), 5);
  EXPECT_EQ(Us(cp, PathEdge::kDevice), 10);
  EXPECT_EQ(Us(cp, PathEdge::kLaunchDelay), 15);
  EXPECT_EQ(cp.by_state[static_cast<size_t>(StepState::kCompute)], 10'000);
  EXPECT_EQ(cp.by_state[static_cast<size_t>(StepState::kBlocked)], 5'000);
  // Without the sync's name the call is not a wait: its own time is the path.
  Builder plain;
  On(plain, "1", EventClass::kRuntime, "cudaLaunchKernel", 0, 10, 1);
  On(plain, "7", EventClass::kKernel, "gemm", 15, 25, 1);
  On(plain, "1", EventClass::kRuntime, "cudaGetDevice", 12, 30);
  const CriticalPath own = PathOf(plain.model);
  ExpectWhole(own);
  EXPECT_EQ(Us(own, PathEdge::kDevice), 0);
  EXPECT_EQ(PartUs(own, PathEdge::kHost, "cudaGetDevice"), 18);
}

// Two kernels queued on one stream: the second waits for the first (a stream
// gap of 0), not for its launch, which came earlier.
TEST(CriticalPath, AQueuedKernelWaitsForThePreviousOnItsStream) {
  Builder b;
  On(b, "1", EventClass::kRuntime, "cudaLaunchKernel", 0, 2, 1);
  On(b, "1", EventClass::kRuntime, "cudaLaunchKernel", 2, 4, 2);
  On(b, "7", EventClass::kKernel, "first", 5, 15, 1);
  On(b, "7", EventClass::kKernel, "second", 17, 25, 2);
  On(b, "1", EventClass::kRuntime, "cudaStreamSynchronize", 4, 26);
  const CriticalPath cp = PathOf(b.model);
  ExpectWhole(cp);
  EXPECT_EQ(Us(cp, PathEdge::kSync), 1);
  EXPECT_EQ(PartUs(cp, PathEdge::kDevice, "second"), 8);
  EXPECT_EQ(Us(cp, PathEdge::kStreamGap), 2);
  EXPECT_EQ(PartUs(cp, PathEdge::kDevice, "first"), 10);
  EXPECT_EQ(Us(cp, PathEdge::kLaunchDelay), 5);  // the first call's start to the first kernel
}

// A kernel held back long after its launch, its stream idle, starts when a
// task on another stream ends: an event dependency the trace does not record.
TEST(CriticalPath, AHeldBackKernelWaitsForAnotherStream) {
  Builder b;
  On(b, "1", EventClass::kRuntime, "cudaLaunchKernel", 0, 2, 1);
  On(b, "1", EventClass::kRuntime, "cudaLaunchKernel", 2, 4, 2);
  On(b, "7", EventClass::kKernel, "producer", 5, 300, 1);
  On(b, "8", EventClass::kKernel, "consumer", 302, 320, 2);
  On(b, "1", EventClass::kRuntime, "cudaDeviceSynchronize", 4, 321);
  const CriticalPath cp = PathOf(b.model);
  ExpectWhole(cp);
  EXPECT_EQ(PartUs(cp, PathEdge::kCrossStream, "producer"), 2);
  EXPECT_EQ(PartUs(cp, PathEdge::kDevice, "producer"), 295);
  EXPECT_EQ(cp.by_state[static_cast<size_t>(StepState::kQueued)], 2'000);
  // Started within the grace after its launch: the launch explains it.
  Builder soon;
  On(soon, "1", EventClass::kRuntime, "cudaLaunchKernel", 0, 2, 1);
  On(soon, "1", EventClass::kRuntime, "cudaLaunchKernel", 280, 282, 2);
  On(soon, "7", EventClass::kKernel, "producer", 5, 300, 1);
  On(soon, "8", EventClass::kKernel, "consumer", 302, 320, 2);
  On(soon, "1", EventClass::kRuntime, "cudaDeviceSynchronize", 282, 321);
  const CriticalPath launched = PathOf(soon.model);
  ExpectWhole(launched);
  EXPECT_EQ(Us(launched, PathEdge::kCrossStream), 0);
  EXPECT_EQ(PartUs(launched, PathEdge::kLaunchDelay, "cudaLaunchKernel"), 22);
}

// A kernel launched long before and held back on an idle stream with no
// other stream's task to explain it: the stream gap is the device waiting on
// a dependency the trace does not record (queued, as the attribution counts
// it), not launch overhead; a gap of a few microseconds behind the previous
// task is the device's own launch overhead.
TEST(CriticalPath, AStreamGapLongAfterTheLaunchIsQueued) {
  const auto path = [](int64_t second_start_us) {
    Builder b;
    On(b, "1", EventClass::kRuntime, "cudaLaunchKernel", 0, 2, 1);
    On(b, "1", EventClass::kRuntime, "cudaLaunchKernel", 2, 4, 2);
    On(b, "7", EventClass::kKernel, "first", 5, 15, 1);
    On(b, "7", EventClass::kKernel, "second", second_start_us, second_start_us + 10, 2);
    On(b, "1", EventClass::kRuntime, "cudaStreamSynchronize", 4, second_start_us + 11);
    return PathOf(b.model);
  };
  const CriticalPath held = path(400);
  ExpectWhole(held);
  EXPECT_EQ(Us(held, PathEdge::kStreamGap), 385);
  EXPECT_EQ(held.by_state[static_cast<size_t>(StepState::kQueued)], 385'000);
  const CriticalPath next = path(17);
  ExpectWhole(next);
  EXPECT_EQ(Us(next, PathEdge::kStreamGap), 2);
  EXPECT_EQ(next.by_state[static_cast<size_t>(StepState::kQueued)], 0);
}

// A runtime call that returns once the work it issued is done (MTIA's
// runFunction prepares a job, submits it and returns when it ends): where
// most of a name's calls end after their own task, the call waited for it,
// and the path goes through the task and its launch delay. A launch that
// returns after its task but by chance, once in three, is host time.
TEST(CriticalPath, ACallThatWaitsForItsOwnWorkLeadsToIt) {
  const auto path = [](std::string_view call, int waited) {
    Builder b;
    for (int i = 0; i < 3; ++i) {
      const int64_t t = 1000 * i;
      On(b, "1", EventClass::kRuntime, call, t, t + 300, i + 1);
      const int64_t end = i < waited ? t + 290 : t + 310;
      On(b, "7", EventClass::kKernel, "fc", end - 40, end, i + 1);
    }
    return PathOf(b.model);
  };
  // The trace's span, 0 to 2310 us, walked back from the last task's end:
  // each call's launch delay and its task (the first two end 10 us before
  // their calls: sync edges), and the gaps between the calls.
  const CriticalPath waits = path("runFunction - job_prep_and_submit_for_execution", 2);
  ExpectWhole(waits);
  EXPECT_EQ(Us(waits, PathEdge::kSync), 20);
  EXPECT_EQ(PartUs(waits, PathEdge::kDevice, "fc"), 120);
  EXPECT_EQ(
      PartUs(waits, PathEdge::kLaunchDelay, "runFunction - job_prep_and_submit_for_execution"),
      250 + 250 + 270);
  EXPECT_EQ(PartUs(waits, PathEdge::kHost, "runFunction - job_prep_and_submit_for_execution"), -1);
  // By chance: the first two calls' whole spans are host time.
  const CriticalPath chance = path("cudaLaunchKernel", 1);
  ExpectWhole(chance);
  EXPECT_EQ(Us(chance, PathEdge::kSync), 0);
  EXPECT_EQ(PartUs(chance, PathEdge::kHost, "cudaLaunchKernel"), 600);
}

// Nesting on one thread: a parent's own time around its child, the gap
// between two top-level events (HTA weighs it 0; here it is counted).
TEST(CriticalPath, HostNestingAndGapsBetweenTopLevelEvents) {
  Builder b;
  On(b, "1", EventClass::kHostOp, "aten::linear", 0, 10);
  On(b, "1", EventClass::kHostOp, "aten::addmm", 2, 5);
  On(b, "1", EventClass::kHostOp, "aten::relu", 20, 30);
  const CriticalPath cp = PathOf(b.model);
  ExpectWhole(cp);
  EXPECT_EQ(PartUs(cp, PathEdge::kHost, "aten::relu"), 10);
  EXPECT_EQ(Us(cp, PathEdge::kHostGap), 10);
  EXPECT_EQ(PartUs(cp, PathEdge::kHost, "aten::linear"), 7);
  EXPECT_EQ(PartUs(cp, PathEdge::kHost, "aten::addmm"), 3);
}

// A Python call that began before an event and returns inside it is beside
// it, not its parent: the later event keeps its whole span.
TEST(CriticalPath, APartialOverlapIsNotNesting) {
  Builder b;
  On(b, "1", EventClass::kPython, "enter", 0, 4);
  On(b, "1", EventClass::kHostOp, "aten::mm", 2, 30);
  const CriticalPath cp = PathOf(b.model);
  ExpectWhole(cp);
  EXPECT_EQ(PartUs(cp, PathEdge::kHost, "aten::mm"), 28);
  EXPECT_EQ(PartUs(cp, PathEdge::kHost, "enter"), 2);
}

// A step recorded with Python stacks (with_stack=True): the profiler's own
// Python call that closes the step starts inside it and returns after it, so
// it is beside the step, and the step's children before it are still its
// children: the walk back from the step's end reaches the operators, not
// the step's own time.
TEST(CriticalPath, AStepClosedByAPythonCallThatOutlastsIt) {
  Builder b;
  for (int s = 0; s < 3; ++s) {
    const int64_t t = 1000 * s;
    On(b, "1", EventClass::kPython, "profiler.py(241): step", t - 20, t + 30);
    On(b, "1", EventClass::kStep, "ProfilerStep#" + std::to_string(s), t, t + 1000);
    On(b, "1", EventClass::kHostOp, "aten::mm", t + 100, t + 500);
    On(b, "1", EventClass::kHostOp, "aten::relu", t + 500, t + 960);
    On(b, "1", EventClass::kPython, "profiler.py(231): step", t + 970, t + 1010);
    On(b, "1", EventClass::kPython, "autograd/profiler.py(636): __exit__", t + 975, t + 1005);
  }
  const CriticalPath cp = PathOf(b.model);
  ExpectWhole(cp);
  ASSERT_GE(cp.complete_steps, 1);
  const int64_t steps = cp.complete_steps;
  EXPECT_EQ(PartUs(cp, PathEdge::kHost, "aten::relu"), steps * 460);
  EXPECT_EQ(PartUs(cp, PathEdge::kHost, "aten::mm"), steps * 400);
  // The step's own time: before the mm (100) and after the relu (40).
  EXPECT_EQ(PartUs(cp, PathEdge::kHost, "ProfilerStep#1"), 140);
}

// The main thread idles inside its step while another thread works (a
// backward pass on autograd's thread) and resumes just after it ends: the
// path goes through the other thread's work, then back where it was woken.
TEST(CriticalPath, AThreadThatResumesAfterAnotherWaitedForIt) {
  Builder b;
  On(b, "1", EventClass::kStep, "ProfilerStep#1", 0, 1000);
  On(b, "1", EventClass::kHostOp, "aten::mse_loss", 10, 100);
  On(b, "2", EventClass::kHostOp, "autograd::engine::evaluate_function: AddmmBackward0", 120, 800);
  On(b, "1", EventClass::kHostOp, "Optimizer.step#SGD.step", 830, 990);
  // The same steps twice more, so that the middle one is complete.
  for (int s = 1; s <= 2; ++s) {
    const int64_t t = 1000 * s;
    On(b, "1", EventClass::kStep, "ProfilerStep#" + std::to_string(s + 1), t, t + 1000);
    On(b, "1", EventClass::kHostOp, "aten::mse_loss", t + 10, t + 100);
    On(b, "2", EventClass::kHostOp, "autograd::engine::evaluate_function: AddmmBackward0", t + 120,
       t + 800);
    On(b, "1", EventClass::kHostOp, "Optimizer.step#SGD.step", t + 830, t + 990);
  }
  const CriticalPath cp = PathOf(b.model);
  ExpectWhole(cp);
  ASSERT_GE(cp.complete_steps, 1);
  const int64_t steps = cp.complete_steps;
  EXPECT_EQ(cp.window_ns, steps * 1'000'000);
  // Per step: the optimizer 160, the wake-up 30, the backward 680, the main
  // thread from the loss's end to the backward's start 20, the loss 90, the
  // step's own time before it 10 and after the optimizer 10.
  EXPECT_EQ(PartUs(cp, PathEdge::kHost, "autograd::engine::evaluate_function: AddmmBackward0"),
            steps * 680);
  EXPECT_EQ(Us(cp, PathEdge::kCrossThread), steps * 30);
  EXPECT_EQ(PartUs(cp, PathEdge::kHost, "aten::mse_loss"), steps * 90);
  EXPECT_EQ(PartUs(cp, PathEdge::kHost, "Optimizer.step#SGD.step"), steps * 160);
}

// A step whose device work outlasts its host span ends with that work: the
// path is the device's, counted within the step. Each step launches a
// 100 us kernel 10 us in, which runs 10 us into the next step, where the
// next kernel follows it on the stream: the device is the whole path
// after the first kernel starts.
TEST(CriticalPath, AStepEndsWithTheDeviceWorkItLaunched) {
  Builder b;
  for (int s = 0; s < 4; ++s) {
    const int64_t t = 100 * s;
    On(b, "1", EventClass::kStep, "ProfilerStep#" + std::to_string(s), t, t + 100);
    On(b, "1", EventClass::kHostOp, "aten::mm", t + 1, t + 5);
    On(b, "1", EventClass::kRuntime, "cudaLaunchKernel", t + 2, t + 4, s + 1);
    On(b, "7", EventClass::kKernel, "gemm", t + 10, t + 110, s + 1);
  }
  const CriticalPath cp = PathOf(b.model);
  ExpectWhole(cp);
  ASSERT_EQ(cp.complete_steps, 4);
  // All of every step but the first's 10 us before its kernel: its launch
  // delay from the call's start (8) and the step's own time before it (2).
  EXPECT_EQ(Us(cp, PathEdge::kDevice), 390);
  EXPECT_EQ(Us(cp, PathEdge::kLaunchDelay), 8);
  // Its host span alone would have made it the step's own time and the mm.
  Builder host;
  for (int s = 0; s < 4; ++s) {
    const int64_t t = 100 * s;
    On(host, "1", EventClass::kStep, "ProfilerStep#" + std::to_string(s), t, t + 100);
    On(host, "1", EventClass::kHostOp, "aten::mm", t + 1, t + 5);
    On(host, "1", EventClass::kRuntime, "cudaLaunchKernel", t + 2, t + 4, s + 1);
    On(host, "7", EventClass::kKernel, "gemm", t + 10, t + 20, s + 1);
  }
  const CriticalPath own = PathOf(host.model);
  ExpectWhole(own);
  EXPECT_EQ(Us(own, PathEdge::kDevice), 0);
  EXPECT_EQ(PartUs(own, PathEdge::kHost, "aten::mm"), own.complete_steps * 2);
}

// A trace whose only events are on the CPU: the path is the host's.
TEST(CriticalPath, ACpuTraceIsItsHostThread) {
  Builder b;
  On(b, "1", EventClass::kHostOp, "aten::conv2d", 0, 50);
  On(b, "1", EventClass::kHostOp, "aten::relu", 50, 60);
  const CriticalPath cp = PathOf(b.model);
  ExpectWhole(cp);
  EXPECT_EQ(cp.by_state[static_cast<size_t>(StepState::kCompute)], 60'000);
}

// Device tasks with no host event and no launch recorded (a reader without
// correlation ids): the stream's order, then untraced.
TEST(CriticalPath, DeviceTasksAloneFollowTheirStream) {
  Builder b;
  On(b, "7", EventClass::kKernel, "a", 0, 10);
  On(b, "7", EventClass::kKernel, "b", 12, 20);
  On(b, "8", EventClass::kCommunication, "hcom_allReduce", 30, 50);
  const CriticalPath cp = PathOf(b.model);
  ExpectWhole(cp);
  EXPECT_EQ(cp.window_ns, 50'000);
  EXPECT_EQ(PartUs(cp, PathEdge::kDevice, "hcom_allReduce"), 20);
  EXPECT_EQ(Us(cp, PathEdge::kUntraced), 30);
}

// torch_npu's tasks carry no correlation id: the HostToDevice flow from the
// runtime call that issued a task to the task's start is its launch, so a
// stream gap behind a recorded launch is launch overhead and the first task
// leads to the call, as a correlated launch does.
TEST(CriticalPath, AnAscendTaskLeadsToTheCallItsFlowStartsIn) {
  const auto trace = [](bool flows) {
    Builder b;
    On(b, "2", EventClass::kRuntime, "AscendCL@aclnnMm", 0, 50);
    On(b, "7", EventClass::kKernel, "MatMul", 60, 100);
    On(b, "2", EventClass::kRuntime, "AscendCL@aclnnAdd", 100, 110);
    On(b, "7", EventClass::kKernel, "Add", 120, 150);
    if (flows) {
      const uint32_t host = b.model.TrackFor("1", "2"), device = b.model.TrackFor("0", "7");
      b.model.launch_flows = {{40'000, 60'000, host, device}, {105'000, 120'000, host, device}};
    }
    return PathOf(b.model);
  };
  const CriticalPath cp = trace(true);
  ExpectWhole(cp);
  EXPECT_EQ(cp.window_ns, 150'000);
  EXPECT_EQ(Us(cp, PathEdge::kDevice), 70);
  EXPECT_EQ(PartUs(cp, PathEdge::kLaunchDelay, "AscendCL@aclnnMm"), 60);
  EXPECT_EQ(Us(cp, PathEdge::kStreamGap), 20);
  EXPECT_EQ(cp.by_state[static_cast<size_t>(StepState::kLaunch)], 80'000);
  EXPECT_EQ(cp.by_state[static_cast<size_t>(StepState::kUntraced)], 0);
  // Without the flows nothing in the trace says who launched the tasks: the
  // stream gap is untraced, and the first task continues on the host thread
  // at its start (a gap of 10 us after the first call).
  const CriticalPath none = trace(false);
  ExpectWhole(none);
  EXPECT_EQ(Us(none, PathEdge::kLaunchDelay), 0);
  EXPECT_EQ(none.by_state[static_cast<size_t>(StepState::kUntraced)], 30'000);
}

// The diagnosis projects no saving its critical path cannot give. Each step:
// the main thread launches a 40 us kernel from aten::mm, waits in
// cudaDeviceSynchronize until 50 us before the step's end, long after the
// kernel, while a second thread runs an operator for 800 us; aten::add
// closes the step. The attribution counts the second thread's operator as
// host overhead (the device idles), 910 us a step; but the step waited on
// the synchronisation: on its path, host overhead is aten::mm's own time (90),
// the launch call (10) and aten::add (50), and nothing is unexplained:
// removing the host overhead saves at most 150 us a step.
TEST(CriticalPath, ADiagnosisSavesNoMoreThanItsCriticalPathAllows) {
  const auto trace = [](bool side_thread) {
    Builder b;
    for (int s = 0; s < 3; ++s) {
      const int64_t t = 1000 * s;
      On(b, "1", EventClass::kStep, "ProfilerStep#" + std::to_string(s), t, t + 1000);
      On(b, "1", EventClass::kHostOp, "aten::mm", t, t + 100);
      On(b, "1", EventClass::kRuntime, "cudaLaunchKernel", t + 50, t + 60, s + 1);
      On(b, "7", EventClass::kKernel, "gemm", t + 60, t + 100, s + 1);
      On(b, "1", EventClass::kRuntime, "cudaDeviceSynchronize", t + 100, t + 950);
      On(b, "1", EventClass::kHostOp, "aten::add", t + 950, t + 1000);
      if (side_thread) On(b, "2", EventClass::kHostOp, "aten::copy_", t + 100, t + 900);
    }
    const Analysis a = AnalyzeTrace(b.model);
    Finding diagnosis;  // the step-time diagnosis among the findings
    for (const Finding& f : Advise(a)) {
      if (f.id.starts_with("step_")) diagnosis = f;
    }
    return std::make_pair(*a.results.Get<CriticalPath>(kCriticalPathPass), diagnosis);
  };
  const auto [cp, busy] = trace(true);
  ExpectWhole(cp);
  ASSERT_GE(cp.complete_steps, 1);
  EXPECT_EQ(busy.id, "step_host_overhead");
  EXPECT_EQ(busy.saving_ns, cp.complete_steps * 150'000);
  EXPECT_NE(busy.action.find("critical path holds only"), std::string::npos) << busy.action;
  // Without the second thread the host is blocked while the device idles:
  // the synchronisation is on the path, and its whole wait is the saving.
  const auto [alone_cp, alone] = trace(false);
  EXPECT_EQ(alone.id, "step_host_blocked");
  EXPECT_EQ(alone.saving_ns, alone_cp.complete_steps * 850'000);
  EXPECT_EQ(alone.action.find("critical path holds only"), std::string::npos) << alone.action;
}

// The diagnosis names the state the steps waited on where two are close:
// each step the host runs operators for its whole 1 ms while the kernel it
// launched early computes for 530 us of it. The attribution counts compute
// first (530 us, more than the 470 us of host overhead while the device
// idles), but the step ends when the host does: compute is not on its
// critical path, and faster kernels would not end it sooner.
TEST(CriticalPath, TheDiagnosisNamesWhatTheStepsWaitedOn) {
  Builder b;
  for (int s = 0; s < 3; ++s) {
    const int64_t t = 1000 * s;
    On(b, "1", EventClass::kStep, "ProfilerStep#" + std::to_string(s), t, t + 1000);
    On(b, "1", EventClass::kHostOp, "aten::linear", t, t + 500);
    On(b, "1", EventClass::kRuntime, "cudaLaunchKernel", t + 10, t + 20, s + 1);
    On(b, "7", EventClass::kKernel, "gemm", t + 30, t + 560, s + 1);
    On(b, "1", EventClass::kHostOp, "aten::relu", t + 500, t + 1000);
  }
  const Analysis a = AnalyzeTrace(b.model);
  const Attribution& at = *a.results.Get<Attribution>(kAttributionPass);
  const CriticalPath& cp = *a.results.Get<CriticalPath>(kCriticalPathPass);
  ASSERT_GE(at.complete_steps, 1);
  EXPECT_GT(at.Of(StepState::kCompute), at.Of(StepState::kLaunch) + at.Of(StepState::kFramework));
  EXPECT_EQ(cp.by_state[static_cast<size_t>(StepState::kCompute)], 0);
  EXPECT_EQ(Diagnosis(a), "step_host_overhead");
}

TEST(CriticalPath, AnEmptyTraceHasNoPath) {
  Builder b;
  const CriticalPath cp = PathOf(b.model);
  EXPECT_EQ(cp.window_ns, 0);
  EXPECT_TRUE(cp.parts.empty());
}

}  // namespace
}  // namespace opscope::analyze
