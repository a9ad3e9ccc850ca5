// Per-thread buffers under load: nothing lost under the cap, exact drop counts past it.
#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <thread>
#include <vector>

#include "opscope/opscope.h"
#include "test_util.h"

namespace opscope {
namespace {

struct ThreadTally {
  uint64_t events = 0;
  int64_t last_ts = -1;
  bool ordered = true;
};

std::map<uint32_t, ThreadTally> Tally(TraceData& trace) {
  std::map<uint32_t, ThreadTally> tally;
  trace.ForEachEvent([&](const EventView& e) {
    ThreadTally& t = tally[e.tid];
    ++t.events;
    if (e.ts_ns < t.last_ts) t.ordered = false;
    t.last_ts = e.ts_ns;
  });
  return tally;
}

void RunScopes(int threads, int scopes_per_thread) {
  std::vector<std::thread> workers;
  std::atomic<int> ready{0};
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      ready.fetch_add(1);
      while (ready.load() < threads) {
      }
      for (int i = 0; i < scopes_per_thread; ++i) {
        OPSCOPE_SCOPE("hot");
      }
    });
  }
  for (auto& w : workers) w.join();
}

TEST(Capacity, EightThreadsMillionScopesLoseNothingUnderTheCap) {
  constexpr int kThreads = 8;
  constexpr int kScopes = 1000000;
  uint64_t events = 0, dropped = 1;
  std::map<uint32_t, ThreadTally> tally;
  ProfilerOptions opts;
  opts.max_buffer_bytes = size_t{512} << 20;
  opts.on_trace_ready = [&](TraceData& trace) {
    events = trace.EventCount();
    dropped = trace.DroppedCount();
    tally = Tally(trace);
  };
  Profiler prof(opts);
  prof.Start();
  RunScopes(kThreads, kScopes);
  prof.Stop();
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(events, uint64_t{kThreads} * kScopes);
  ASSERT_EQ(tally.size(), size_t{kThreads});
  for (const auto& [tid, t] : tally) {
    EXPECT_EQ(t.events, uint64_t{kScopes}) << "thread " << tid;
    EXPECT_TRUE(t.ordered) << "thread " << tid;
  }
}

TEST(Capacity, PastTheCapTheExactDropCountIsReported) {
  constexpr int kThreads = 8;
  constexpr int kScopes = 100000;
  testing::TempDir dir;
  uint64_t events = 0, dropped = 0;
  ProfilerOptions opts;
  opts.max_buffer_bytes = size_t{1} << 20;
  opts.on_trace_ready = [&](TraceData& trace) {
    events = trace.EventCount();
    dropped = trace.DroppedCount();
    trace.Export(dir.path() / "capped.json");
  };
  {
    Profiler prof(opts);
    prof.Start();
    RunScopes(kThreads, kScopes);
    prof.Stop();
  }
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(events + dropped, uint64_t{kThreads} * kScopes);
  EXPECT_EQ(events, (size_t{1} << 20) / 32) << "the cap holds exactly 1 MiB of 32-byte records";
  const auto check = testing::CheckTrace(
      dir.path() / "capped.json",
      "--expect-dropped " + std::to_string(dropped) + " --expect-events " + std::to_string(events));
  EXPECT_EQ(check.status, 0) << check.output;
}

TEST(Capacity, DynamicScopesPastTheCapAreCountedToo) {
  uint64_t events = 0, dropped = 0;
  ProfilerOptions opts;
  opts.max_buffer_bytes = size_t{4} << 20;
  opts.on_trace_ready = [&](TraceData& trace) {
    events = trace.EventCount();
    dropped = trace.DroppedCount();
  };
  Profiler prof(opts);
  prof.Start();
  // Distinct names: a repeated one is stored once (RuntimeNames tests).
  const std::string long_name(1000, 'x');
  for (int i = 0; i < 20000; ++i) {
    OPSCOPE_SCOPE_DYN(long_name + std::to_string(i));
  }
  prof.Stop();
  EXPECT_GT(dropped, 0u);
  EXPECT_GT(events, 1000u);
  EXPECT_EQ(events + dropped, 20000u);
}

TEST(Capacity, NestingHoldsPerThreadAcrossThreads) {
  testing::TempDir dir;
  ProfilerOptions opts;
  opts.output_dir = dir.path();
  Profiler prof(opts);
  prof.Start();
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([t] {
      SetThreadName("nest " + std::to_string(t));
      for (int i = 0; i < 200; ++i) {
        OPSCOPE_SCOPE("outer");
        for (int j = 0; j < 3; ++j) {
          OPSCOPE_SCOPE("middle");
          OPSCOPE_SCOPE("inner");
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  prof.Stop();
  ASSERT_EQ(prof.trace_files().size(), 1u);
  const auto check = testing::CheckTrace(
      prof.trace_files()[0],
      "--expect-name outer=800 --expect-name middle=2400 --expect-name inner=2400 "
      "--expect-threads 4");
  EXPECT_EQ(check.status, 0) << check.output;
  const std::string text = testing::ReadFile(prof.trace_files()[0]);
  EXPECT_NE(text.find("\"name\":\"nest 3\""), std::string::npos);
}

// The smallest budget records runtime-named scopes too (budgets of 64 KiB to
// 128 KiB - 1 once held one chunk of records and no room for a name); smaller
// budgets are refused.
TEST(Capacity, TheSmallestBudgetRecordsDynamicScopes) {
  uint64_t events = 0, dropped = 0;
  ProfilerOptions opts;
  opts.max_buffer_bytes = size_t{128} << 10;
  opts.on_trace_ready = [&](TraceData& trace) {
    events = trace.EventCount();
    dropped = trace.DroppedCount();
  };
  {
    Profiler prof(opts);
    prof.Start();
    for (int i = 0; i < 100; ++i) OPSCOPE_SCOPE_DYN("layer" + std::to_string(i));
    prof.Stop();
  }
  EXPECT_EQ(events, 100u);
  EXPECT_EQ(dropped, 0u);
  opts.max_buffer_bytes = (size_t{128} << 10) - 1;
  EXPECT_THROW(Profiler{opts}, Error);
}

}  // namespace
}  // namespace opscope

namespace opscope {
namespace {

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

// A thread that recorded much and lives on gives the memory back with the trace.
TEST(Memory, ReleasedAfterTheTraceIsHandled) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan's quarantine keeps freed memory resident; checked in the release build";
#else
  ProfilerOptions opts;
  opts.on_trace_ready = [](TraceData&) {};
  const int64_t before = ResidentBytes();
  int64_t during = 0;
  {
    Profiler prof(opts);
    prof.Start();
    for (int i = 0; i < 4000000; ++i) {
      OPSCOPE_SCOPE("fill");
    }
    during = ResidentBytes();
    prof.Stop();
  }
  // Temporary vectors of the export return to malloc's heap, which keeps them for
  // reuse; trimming it leaves only what opscope itself still holds.
  ::malloc_trim(0);
  const int64_t after = ResidentBytes();
  EXPECT_GT(during - before, 100 << 20) << "4M records are 128 MB";
  EXPECT_LT(after - before, 8 << 20) << "kept " << (after - before) << " bytes";
#endif
}

// A scope that began while recording and ends after the trace was handled writes
// into memory that is still mapped (ASan would flag a use after free).
TEST(Memory, ScopeStraddlingStopIsSafe) {
  uint64_t events = 0;
  ProfilerOptions opts;
  opts.on_trace_ready = [&](TraceData& trace) { events = trace.EventCount(); };
  Profiler prof(opts);
  prof.Start();
  for (int i = 0; i < 200000; ++i) {
    OPSCOPE_SCOPE("fill");
  }
  {
    OPSCOPE_SCOPE_DYN(std::string("straddles"));
    OPSCOPE_SCOPE("straddles too");
    prof.Stop();
  }
  EXPECT_EQ(events, 200000u);
  // The thread records again in a new session after the late writes.
  Profiler again(opts);
  again.Start();
  { OPSCOPE_SCOPE("next"); }
  again.Stop();
  EXPECT_EQ(events, 1u);
}

}  // namespace
}  // namespace opscope
