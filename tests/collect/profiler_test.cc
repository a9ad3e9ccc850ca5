#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "opscope/opscope.h"
#include "opscope/opscope_c.h"
#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__)
namespace {
const pid_t kTestProcess = ::getpid();
}  // namespace

// LeakSanitizer's check at exit() is turned off in the fork tests' children.
// There it can only be wrong or hang: the parent's other threads do not exist
// in the child, so what their stacks and thread-exit records reach reads as
// leaked ("Running thread N was not suspended. False leaks are possible."),
// and GCC 12's libasan has no fork interceptor that holds the allocator's
// locks across fork(), so the check, which takes every one of them, waited
// forever on a lock another thread of the parent held at the fork (seen in
// CI and here: __lsan::LockAllocator under exit(), 1 child of about 120 under
// load). The parent's own check at its exit still runs.
extern "C" __attribute__((visibility("default"), used)) int __lsan_is_turned_off() {
  return ::getpid() != kTestProcess;
}
#endif

namespace opscope {
namespace {

using testing::CheckTrace;
using testing::ListFiles;
using testing::TempDir;

// The minimal program of the issue: one trace file in output_dir.
TEST(Profiler, MinimalProgramWritesOneTrace) {
  TempDir dir;
  {
    ProfilerOptions opts;
    opts.output_dir = dir.path() / "out";
    Profiler prof(opts);
    prof.Start();
    for (int i = 0; i < 3; ++i) {
      OPSCOPE_SCOPE("work");
      volatile double x = 0;
      for (int k = 0; k < 1000; ++k) x = x + k;
      prof.Step();
    }
    prof.Stop();
    ASSERT_EQ(prof.trace_files().size(), 1u);
  }
  const auto files = ListFiles(dir.path() / "out");
  ASSERT_EQ(files.size(), 1u);
  const std::string name = files[0].filename().string();
  EXPECT_NE(name.find("_" + std::to_string(::getpid()) + "."), std::string::npos) << name;
  EXPECT_TRUE(name.ends_with(".opscope.json")) << name;
  const auto check = CheckTrace(files[0],
                                "--expect-name work=3 --expect-name 'ProfilerStep#0=1' "
                                "--expect-name 'ProfilerStep#2=1' --expect-name "
                                "'ProfilerStep#3=0' --expect-dropped 0");
  EXPECT_EQ(check.status, 0) << check.output;
}

// Step spans and other events of a trace, by name.
std::map<std::string, int> NamesOf(TraceData& trace) {
  std::map<std::string, int> names;
  trace.ForEachEvent([&](const EventView& e) { ++names[std::string(e.name)]; });
  return names;
}

int StepSpans(const std::map<std::string, int>& names) {
  int steps = 0;
  for (const auto& [name, n] : names) steps += name.starts_with("ProfilerStep#") ? n : 0;
  return steps;
}

// N calls of Step(), at the end of each iteration as the README shows: N step
// spans, not N + 1 (the span the last call opens holds nothing).
TEST(Profiler, NStepCallsGiveNStepSpans) {
  for (const bool work_after_last_step : {false, true}) {
    std::map<std::string, int> names;
    ProfilerOptions opts;
    opts.on_trace_ready = [&](TraceData& trace) { names = NamesOf(trace); };
    Profiler prof(opts);
    prof.Start();
    for (int i = 0; i < 5; ++i) {
      { OPSCOPE_SCOPE("work"); }
      prof.Step();
    }
    if (work_after_last_step) {
      OPSCOPE_SCOPE("tail");
    }
    prof.Stop();
    // Work after the last Step() is a step of its own.
    EXPECT_EQ(StepSpans(names), work_after_last_step ? 6 : 5);
    EXPECT_EQ(names["work"], 5);
  }
}

// The README's Python loop (wait 1, warm-up 1, active 3, repeating) over 12
// batches: the 12th Step() begins a third window that Stop() ends with nothing
// in it. Two traces are written, not a third that holds no event; a window
// that did record something before Stop() is written.
TEST(Profiler, AScheduledWindowThatRecordedNothingIsNotWritten) {
  for (const bool work_after_last_step : {false, true}) {
    std::vector<std::map<std::string, int>> traces;
    ProfilerOptions opts;
    opts.schedule = Schedule{.wait = 1, .warmup = 1, .active = 3};
    opts.on_trace_ready = [&](TraceData& trace) { traces.push_back(NamesOf(trace)); };
    Profiler prof(opts);
    prof.Start();
    for (int i = 0; i < 12; ++i) {
      { OPSCOPE_SCOPE("work"); }
      prof.Step();
    }
    if (work_after_last_step) {
      OPSCOPE_SCOPE("tail");
    }
    prof.Stop();
    ASSERT_EQ(traces.size(), work_after_last_step ? 3u : 2u);
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(traces[k]["work"], 3) << k;
      EXPECT_EQ(StepSpans(traces[k]), 3) << k;
    }
    if (work_after_last_step) {
      EXPECT_EQ(traces[2]["tail"], 1);
    }
  }
}

// Step() from several threads at once: calls are serialised, none is lost,
// nothing throws.
TEST(Profiler, StepFromSeveralThreadsCountsEveryCall) {
  std::map<std::string, int> names;
  ProfilerOptions opts;
  opts.on_trace_ready = [&](TraceData& trace) { names = NamesOf(trace); };
  Profiler prof(opts);
  prof.Start();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        try {
          OPSCOPE_SCOPE("work");
          prof.Step();
        } catch (...) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  prof.Stop();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(prof.step_num(), 200);
  EXPECT_EQ(StepSpans(names), 200);
}

// With a schedule, the scope around Step() in the last active step ends after
// the window's recording stopped; it is still in that window's trace.
TEST(Profiler, TheLastScopeOfAnActiveWindowIsInTheTrace) {
  std::vector<std::map<std::string, int>> traces;
  ProfilerOptions opts;
  opts.schedule = Schedule{.wait = 1, .warmup = 0, .active = 2, .repeat = 2};
  opts.on_trace_ready = [&](TraceData& trace) { traces.push_back(NamesOf(trace)); };
  Profiler prof(opts);
  prof.Start();
  for (int i = 0; i < 6; ++i) {
    OPSCOPE_SCOPE("iteration");
    prof.Step();
  }
  prof.Stop();
  ASSERT_EQ(traces.size(), 2u);
  for (auto& names : traces) {
    EXPECT_EQ(names["iteration"], 2);  // both active steps' scopes, the last one too
    EXPECT_EQ(StepSpans(names), 2);
  }
}

// A thread that exits with scopes still open (the C API's, which a thread
// ends itself) leaves a trace Stop() writes, those scopes in it, ended at the
// thread's exit (issue 39: Stop() crashed 19 times in 20, and ASan found a
// heap-use-after-free in Collection::Threads()). Twenty rounds, as the probe ran.
TEST(Profiler, AThreadThatExitsWithScopesOpenLeavesAReadableTrace) {
  for (int round = 0; round < 20; ++round) {
    std::map<std::string, int> names;
    ProfilerOptions opts;
    opts.on_trace_ready = [&](TraceData& trace) { names = NamesOf(trace); };
    Profiler prof(opts);
    prof.Start();
    // One thread ends a scope before it leaves (its buffer made while it
    // runs), one only opens scopes (its buffer made as it exits).
    std::thread worker([] {
      opscope_set_thread_name("leaves early");
      ASSERT_EQ(opscope_scope_begin("left_open"), 0);
      ASSERT_EQ(opscope_scope_begin("inner"), 0);
      ASSERT_EQ(opscope_scope_begin("closed"), 0);
      ASSERT_EQ(opscope_scope_end(), 0);
    });
    std::thread opener([] { ASSERT_EQ(opscope_scope_begin("only_opened"), 0); });
    worker.join();
    opener.join();
    { OPSCOPE_SCOPE("main_work"); }
    prof.Stop();
    EXPECT_EQ(names["closed"], 1) << round;
    EXPECT_EQ(names["main_work"], 1) << round;
    EXPECT_EQ(names["left_open"], 1) << "round " << round << ": a scope open at thread exit";
    EXPECT_EQ(names["inner"], 1) << round;
    EXPECT_EQ(names["only_opened"], 1) << round;
  }
}

// Waits up to 10 s for `child` to end; kills it and returns false when it
// does not (a hang).
bool WaitForChild(pid_t child, int& status) {
  for (int wait_ms = 0; wait_ms < 10000; wait_ms += 5) {
    if (::waitpid(child, &status, WNOHANG) == child) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
  return false;
}

// fork() while recording, with another thread recording at the same time:
// every child records and leaves (by _exit, by exit() with the profiler's
// copy destroyed, and after starting a profiler of its own) without hanging,
// and the parent's trace is its own (issue 39: 3 children of 30 hung).
TEST(Profiler, ForkWhileRecordingNeverHangsTheChild) {
  std::map<std::string, int> names;
  ProfilerOptions opts;
  opts.on_trace_ready = [&](TraceData& trace) { names = NamesOf(trace); };
  auto prof = std::make_unique<Profiler>(opts);
  prof->Start();
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    while (!stop.load()) {
      OPSCOPE_SCOPE("busy");
    }
  });
  int hung = 0, failed = 0;
  for (int round = 0; round < 30; ++round) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      {
        OPSCOPE_SCOPE("in_child");  // records nothing: the child is not traced
      }
      prof->Step();
      if (round % 3 == 0) ::_exit(0);
      prof->Stop();
      if (round % 3 == 1) {
        prof.reset();
        std::exit(0);  // static destructors run: nothing may wait on the parent's threads
      }
#if defined(__SANITIZE_THREAD__)
      // ThreadSanitizer cannot follow threads a child of a multi-threaded
      // process starts ("dup thread with used id"): this branch is run by the
      // other builds, ASan's included.
      ::_exit(0);
#endif
      TempDir own;
      ProfilerOptions child_opts;
      child_opts.output_dir = own.path();
      Profiler mine(child_opts);  // a profiler of the child's own records the child
      mine.Start();
      { OPSCOPE_SCOPE("child_own"); }
      mine.Stop();
      const int code = mine.trace_files().size() == 1 ? 0 : 3;
      // _exit runs no destructor: the folder is removed here, or every
      // round would leave one behind in the temporary folder.
      std::error_code ec;
      std::filesystem::remove_all(own.path(), ec);
      ::_exit(code);
    }
    int status = 0;
    if (!WaitForChild(child, status)) {
      ++hung;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ++failed;
    }
  }
  stop = true;
  busy.join();
  prof->Stop();
  EXPECT_EQ(hung, 0) << "children that hung";
  EXPECT_EQ(failed, 0) << "children that failed";
  EXPECT_GT(names["busy"], 0);
  EXPECT_EQ(names.count("in_child"), 0u) << "a child's scope in the parent's trace";
}

// fork() while another thread is inside Stop() (issue 51): Stop() has
// already cleared started_ and holds the profiler's mutex while it hands the
// trace over, so a copy that judged itself by started_ locked that mutex in
// the child and hung. The copy is inert whatever state the parent was in.
TEST(Profiler, AChildForkedDuringStopNeverHangs) {
  std::atomic<bool> inside{false}, forked{false};
  ProfilerOptions opts;
  opts.on_trace_ready = [&](TraceData&) {
    inside = true;  // inside Stop(), the mutex held, started_ already false
    for (int i = 0; i < 2000 && !forked.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  Profiler prof(opts);
  prof.Start();
  for (int i = 0; i < 1000; ++i) {
    OPSCOPE_SCOPE("work");
  }
  std::thread stopper([&] { prof.Stop(); });
  for (int i = 0; i < 5000 && !inside.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(inside.load()) << "the trace was never handed over";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (int i = 0; i < 1000; ++i) {
      OPSCOPE_SCOPE("in_child");
    }
    prof.Step();
    prof.Stop();
    ::_exit(0);
  }
  forked = true;
  stopper.join();
  int status = 0;
  const bool done = WaitForChild(child, status);
  EXPECT_TRUE(done) << "the child hung in its copy's Stop()";
  EXPECT_TRUE(done && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(Profiler, RaiiStopsAndWrites) {
  TempDir dir;
  {
    ProfilerOptions opts;
    opts.output_dir = dir.path();
    Profiler prof(opts);
    prof.Start();
    OPSCOPE_SCOPE("inside");
  }
  const auto files = ListFiles(dir.path());
  ASSERT_EQ(files.size(), 1u);
  // Declared after the profiler, the scope ends first, so the trace holds it.
  const auto check = CheckTrace(files[0], "--expect-name inside=1 --expect-events 1");
  EXPECT_EQ(check.status, 0) << check.output;
}

TEST(Profiler, OnlyOneRecordsAtATime) {
  ProfilerOptions quiet;
  quiet.on_trace_ready = [](TraceData&) {};
  Profiler first(quiet);
  first.Start();
  Profiler second(quiet);
  try {
    second.Start();
    FAIL() << "second profiler started";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
  }
  first.Stop();
}

// Collects the complete-event names of every trace handed to the handler.
struct Collected {
  std::vector<std::vector<std::string>> traces;
  std::vector<int64_t> ready_steps;
};

ProfilerOptions Capturing(Collected& collected, Schedule schedule) {
  ProfilerOptions opts;
  opts.schedule = schedule;
  opts.on_trace_ready = [&collected](TraceData& trace) {
    std::vector<std::string> names;
    trace.ForEachEvent([&](const EventView& e) {
      if (e.phase == EventPhase::kComplete) names.emplace_back(e.name);
    });
    std::sort(names.begin(), names.end());
    collected.traces.push_back(names);
    collected.ready_steps.push_back(trace.StepNumber());
  };
  return opts;
}

TEST(Profiler, ScheduleRecordsActiveStepsAndDiscardsWarmup) {
  Collected collected;
  Profiler prof(Capturing(collected, Schedule{0, 1, 1, 2, 2}));
  prof.Start();
  for (int step = 0; step < 12; ++step) {
    OPSCOPE_SCOPE_DYN("s" + std::to_string(step));
    prof.Step();
  }
  prof.Stop();
  // Cycle: wait 0, warm-up 1, record 2 and 3 (save); then 4..7 likewise; then none.
  ASSERT_EQ(collected.traces.size(), 2u);
  EXPECT_EQ(collected.ready_steps, (std::vector<int64_t>{4, 8}));
  // Each scope straddles its Step(); the one of the window's last step ends after
  // the window stopped recording, and is still in its trace.
  EXPECT_EQ(collected.traces[0],
            (std::vector<std::string>{"ProfilerStep#2", "ProfilerStep#3", "s2", "s3"}));
  EXPECT_EQ(collected.traces[1],
            (std::vector<std::string>{"ProfilerStep#6", "ProfilerStep#7", "s6", "s7"}));
}

TEST(Profiler, StopInsideRecordingSavesTrace) {
  Collected collected;
  Profiler prof(Capturing(collected, Schedule{1, 0, 0, 5, 1}));
  prof.Start();
  for (int step = 0; step < 3; ++step) {
    { OPSCOPE_SCOPE_DYN("s" + std::to_string(step)); }
    prof.Step();
  }
  prof.Stop();  // in RECORD at step 3: torch saves the partial cycle
  ASSERT_EQ(collected.traces.size(), 1u);
  // Step 3 recorded nothing before Stop(): no empty ProfilerStep#3.
  EXPECT_EQ(collected.traces[0],
            (std::vector<std::string>{"ProfilerStep#1", "ProfilerStep#2", "s1", "s2"}));
}

TEST(Profiler, NoScheduleRecordsEverythingOnce) {
  Collected collected;
  ProfilerOptions opts = Capturing(collected, Schedule{});
  opts.schedule.reset();
  Profiler prof(opts);
  prof.Start();
  for (int step = 0; step < 4; ++step) {
    { OPSCOPE_SCOPE("a"); }
    prof.Step();
  }
  prof.Stop();
  ASSERT_EQ(collected.traces.size(), 1u);
  EXPECT_EQ(std::count(collected.traces[0].begin(), collected.traces[0].end(), "a"), 4);
}

TEST(Profiler, ArgumentsCountersInstantsAndFlows) {
  TempDir dir;
  ProfilerOptions opts;
  opts.output_dir = dir.path();
  opts.record_shapes = true;
  std::map<std::string, EventView> seen;
  std::vector<std::string> storage;
  int counters = 0, instants = 0, flows = 0;
  opts.on_trace_ready = [&](TraceData& trace) {
    trace.ForEachEvent([&](const EventView& e) {
      if (e.phase == EventPhase::kCounter) ++counters;
      if (e.phase == EventPhase::kInstant) ++instants;
      if (e.phase == EventPhase::kFlowStart || e.phase == EventPhase::kFlowEnd) ++flows;
      if (e.name == "mm") {
        EXPECT_EQ(e.shapes, "[[8,16],[16,4]]");
        EXPECT_EQ(e.dtype, "fp32");
        EXPECT_EQ(e.flops, 1024);
        EXPECT_EQ(e.bytes, 896);
        EXPECT_EQ(e.category, "cpu_op");
      }
    });
    trace.Export(dir.path() / "t.json");
  };
  Profiler prof(opts);
  prof.Start();
  {
    OPSCOPE_SCOPE("launch");
    FlowStart(7, "ac2g");
  }
  {
    OPSCOPE_SCOPE_DYN("mm", ScopeArgs{.shapes = "[[8,16],[16,4]]",
                                      .dtype = "fp32",
                                      .flops = 1024,
                                      .bytes = 896,
                                      .category = "cpu_op"});
    FlowEnd(7, "ac2g");
    Counter("queue", 3.5);
    Instant("mark");
  }
  prof.Stop();
  EXPECT_EQ(counters, 1);
  EXPECT_EQ(instants, 1);
  EXPECT_EQ(flows, 2);
  const auto check = CheckTrace(dir.path() / "t.json", "--expect-name mm=1 --expect-events 6");
  EXPECT_EQ(check.status, 0) << check.output;
  const std::string text = testing::ReadFile(dir.path() / "t.json");
  EXPECT_NE(text.find("\"args\":{\"shapes\":\"[[8,16],[16,4]]\",\"dtype\":\"fp32\",\"flops\":1024,"
                      "\"bytes\":896}"),
            std::string::npos);
  EXPECT_NE(text.find("\"ph\":\"f\""), std::string::npos);
  EXPECT_NE(text.find("\"bp\":\"e\""), std::string::npos);
}

TEST(Profiler, ShapesOnlyWhenAsked) {
  ProfilerOptions opts;
  std::string shapes = "unset";
  opts.on_trace_ready = [&](TraceData& trace) {
    trace.ForEachEvent([&](const EventView& e) { shapes = std::string(e.shapes); });
  };
  Profiler prof(opts);
  prof.Start();
  { OPSCOPE_SCOPE_DYN("mm", ScopeArgs{.shapes = "[[1]]"}); }
  prof.Stop();
  EXPECT_EQ(shapes, "");
}

TEST(Profiler, HostileNamesGiveValidJson) {
  TempDir dir;
  ProfilerOptions opts;
  opts.output_dir = dir.path();
  const std::vector<std::string> names = {"quote\"d",
                                          "new\nline",
                                          "</script><script>alert(1)</script>",
                                          "bad\xFF\xFEutf8",
                                          std::string("nul\0byte", 8),
                                          "back\\slash",
                                          "\x1b[31mred",
                                          "<img src=x onerror=alert(1)>"};
  Profiler prof(opts);
  prof.Start();
  SetThreadName("thread \"</script>\"\n\xC3");
  for (const auto& n : names) {
    OPSCOPE_SCOPE_DYN(n, ScopeArgs{.dtype = n});
    Instant(n);
    Counter(n, 1.0);
  }
  prof.Stop();
  SetThreadName("main");
  ASSERT_EQ(prof.trace_files().size(), 1u);
  const auto path = prof.trace_files()[0];
  const auto check = CheckTrace(path);
  ASSERT_EQ(check.status, 0) << check.output;
  // The decoded names, read back by Python, are the originals with invalid UTF-8
  // replaced by U+FFFD.
  const auto decoded = testing::RunCommand(
      std::string(OPSCOPE_PYTHON) +
      " -c \"import json,sys; d=json.load(open(sys.argv[1])); "
      "print(json.dumps(sorted({e['name'] for e in d['traceEvents'] if e['ph']=='X'}), "
      "ensure_ascii=True))\" " +
      testing::Quote(path.string()));
  EXPECT_EQ(decoded.output,
            "[\"\\u001b[31mred\", \"</script><script>alert(1)</script>\", "
            "\"<img src=x onerror=alert(1)>\", \"back\\\\slash\", \"bad\\ufffd\\ufffdutf8\", "
            "\"new\\nline\", \"nul\\u0000byte\", \"quote\\\"d\"]\n");
  const std::string raw = testing::ReadFile(path);
  EXPECT_EQ(raw.find("</script>"), std::string::npos) << "raw '<' must be escaped";
}

TEST(Profiler, GzipTraceOnRequest) {
  TempDir dir;
  ProfilerOptions opts;
  opts.output_dir = dir.path();
  opts.gzip = true;
  Profiler prof(opts);
  prof.Start();
  for (int i = 0; i < 100; ++i) {
    OPSCOPE_SCOPE("z");
  }
  prof.Stop();
  ASSERT_EQ(prof.trace_files().size(), 1u);
  const auto path = prof.trace_files()[0];
  EXPECT_TRUE(path.string().ends_with(".opscope.json.gz"));
  const auto check = CheckTrace(path, "--expect-name z=100");
  EXPECT_EQ(check.status, 0) << check.output;
}

TEST(Profiler, CudaActivityIsUnsupportedInThisBuild) {
  ProfilerOptions opts;
  opts.activities = {Activity::kCpu, Activity::kCuda};
  try {
    Profiler prof(opts);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  }
}

TEST(Profiler, NothingRecordedWithoutSession) {
  EXPECT_FALSE(IsRecording());
  { OPSCOPE_SCOPE("nobody listens"); }
  Instant("x");
  Counter("y", 1);
  EXPECT_FALSE(IsRecording());
}

}  // namespace
}  // namespace opscope
