// The recording buffers' costs taken off the hot path: chunks faulted in ahead
// (ChunkReserve) and runtime names copied once per thread and trace (PayloadCache).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "collect/chunk_reserve.h"
#include "collect/payload_cache.h"
#include "collect/recorder.h"
#include "opscope/opscope.h"

namespace opscope::collect {
namespace {

constexpr size_t kLarge = ChunkBudgetBytes(Chunk::kLargeRecords);

// A ready chunk. Take() never waits on the reserve's lock, which its helper
// (at idle priority: any other thread preempts it) may hold for a moment
// between refills; then it hands out nothing and a recording thread maps its
// own chunk. A ready chunk is there as soon as the lock is free: tried for up
// to a second (the tests failed 2 runs in 30 under load on the lock alone).
Chunk* TakeReady(ChunkReserve& reserve, uint32_t capacity = Chunk::kLargeRecords) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    if (Chunk* chunk = reserve.Take(capacity)) return chunk;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return nullptr;
}

// Pages of `chunk` the kernel has backed, per mincore().
size_t ResidentPages(const Chunk& chunk) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t bytes = ChunkBudgetBytes(chunk.capacity);
  std::vector<unsigned char> residency((bytes + page - 1) / page);
  if (::mincore(chunk.records, bytes, residency.data()) != 0) return 0;
  size_t resident = 0;
  for (const unsigned char r : residency) resident += r & 1;
  return resident;
}

TEST(ChunkReserve, ChunksAreFaultedInBeforeTheyAreTaken) {
  auto budget = std::make_shared<Budget>(size_t{64} << 20, false, true);
  ChunkReserve reserve(budget);
  Chunk* chunk = TakeReady(reserve);
  ASSERT_NE(chunk, nullptr) << "Start() makes the first chunks ready before it returns";
  const size_t pages = (kLarge + ::sysconf(_SC_PAGESIZE) - 1) / ::sysconf(_SC_PAGESIZE);
  EXPECT_EQ(ResidentPages(*chunk), pages) << "every page is backed before a thread writes";
  EXPECT_EQ(chunk->capacity, Chunk::kLargeRecords);
  EXPECT_EQ(budget->used_bytes(), kLarge) << "a chunk is charged when it is taken";
  delete chunk;
  reserve.Stop();
  EXPECT_EQ(reserve.Take(), nullptr) << "a stopped reserve hands out nothing";
}

TEST(ChunkReserve, AThreadsFirstSmallChunkIsReadyToo) {
  auto budget = std::make_shared<Budget>(size_t{64} << 20, false, true);
  ChunkReserve reserve(budget);
  std::vector<Chunk*> taken;
  for (size_t i = 0; i < ChunkReserve::kTargetSmallChunks; ++i) {
    Chunk* chunk = TakeReady(reserve, Chunk::kSmallRecords);
    ASSERT_NE(chunk, nullptr) << "Start() fills the small chunks before it returns: " << i;
    EXPECT_EQ(chunk->capacity, Chunk::kSmallRecords);
    const size_t pages = ChunkBudgetBytes(Chunk::kSmallRecords) / ::sysconf(_SC_PAGESIZE);
    EXPECT_EQ(ResidentPages(*chunk), pages) << "populated before a thread writes";
    taken.push_back(chunk);
  }
  EXPECT_EQ(budget->used_bytes(),
            ChunkReserve::kTargetSmallChunks * ChunkBudgetBytes(Chunk::kSmallRecords))
      << "charged as taken, and the large ones still are not";
  for (Chunk* chunk : taken) delete chunk;
}

TEST(ChunkReserve, NeverHoldsMoreThanTheBudgetHasRoomFor) {
  // Room for one large chunk: one is made ready, and nothing is charged until taken.
  auto budget = std::make_shared<Budget>(kLarge + (size_t{64} << 10), false, true);
  ChunkReserve reserve(budget);
  EXPECT_EQ(budget->used_bytes(), 0u);
  Chunk* first = TakeReady(reserve);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(budget->used_bytes(), kLarge);
  // The helper must not make a second: the budget has 64 KiB left.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(reserve.Take(), nullptr);
  EXPECT_EQ(budget->used_bytes(), kLarge);
  delete first;
}

TEST(ChunkReserve, ReadyChunksTheBudgetCanNoLongerPayForAreNotHandedOut) {
  auto budget = std::make_shared<Budget>(size_t{8} << 20, false, true);
  ChunkReserve reserve(budget);
  // Other threads' small chunks use up the room the ready chunks were made for.
  ASSERT_TRUE(budget->Reserve((size_t{8} << 20) - (size_t{1} << 20)));
  EXPECT_EQ(reserve.Take(), nullptr);
  EXPECT_EQ(budget->used_bytes(), (size_t{8} << 20) - (size_t{1} << 20));
}

TEST(ChunkReserve, HugePagesCanBeTurnedOff) {
  ::unsetenv("OPSCOPE_HUGE_PAGES");
  EXPECT_TRUE(ChunkReserve::HugePagesWanted());
  ::setenv("OPSCOPE_HUGE_PAGES", "0", 1);
  EXPECT_FALSE(ChunkReserve::HugePagesWanted());
  ::setenv("OPSCOPE_HUGE_PAGES", "1", 1);
  EXPECT_TRUE(ChunkReserve::HugePagesWanted());
  ::unsetenv("OPSCOPE_HUGE_PAGES");
}

PayloadKey Key(std::string_view name, std::string_view shapes = {}, int64_t flops = -1) {
  return PayloadKey{{name, shapes, {}, {}, {}}, "user_annotation", flops, -1};
}

TEST(PayloadCache, FindsWhatItRememberedByContentNotByPointer) {
  PayloadCache cache;
  const int payload = 0;
  const PayloadKey key = Key("conv2d_forward");
  cache.Remember(7, key, key.Hash(), &payload);
  std::string copy = "conv2d_forward";  // other storage, same text
  const PayloadKey again = Key(copy);
  EXPECT_EQ(again.Hash(), key.Hash());
  EXPECT_EQ(cache.Find(7, again, again.Hash()), &payload);
  copy[0] = 'd';  // same storage, other text
  const PayloadKey changed = Key(copy);
  EXPECT_EQ(cache.Find(7, changed, changed.Hash()), nullptr);
}

TEST(PayloadCache, EveryArgumentAndTheGenerationArePartOfTheKey) {
  PayloadCache cache;
  const int payload = 0;
  const PayloadKey key = Key("matmul", "[[8,64],[64,64]]", 65536);
  cache.Remember(3, key, key.Hash(), &payload);
  EXPECT_EQ(cache.Find(3, key, key.Hash()), &payload);
  EXPECT_EQ(cache.Find(4, key, key.Hash()), nullptr) << "another collection owns other payloads";
  for (const PayloadKey& other :
       {Key("matmul", "[[8,64],[64,32]]", 65536), Key("matmul", "", 65536),
        Key("matmul", "[[8,64],[64,64]]", 1), Key("matmu", "l[[8,64],[64,64]]", 65536)}) {
    EXPECT_EQ(cache.Find(3, other, other.Hash()), nullptr);
    // Even when forced into the same slot under the same hash.
    EXPECT_EQ(cache.Find(3, other, key.Hash()), nullptr);
  }
  PayloadKey category = key;
  category.category = "cpu_op";
  EXPECT_EQ(cache.Find(3, category, key.Hash()), nullptr);
}

TEST(PayloadCache, NamesThatDifferOnlyInTheMiddleHashApart) {
  std::map<uint64_t, int> slots;
  for (int layer = 0; layer < 64; ++layer) {
    const std::string name = "model.layers." + std::to_string(layer) + ".self_attn.q_proj";
    ++slots[Key(name).Hash()];
  }
  EXPECT_EQ(slots.size(), 64u) << "every layer's name has its own hash";
}

}  // namespace
}  // namespace opscope::collect

namespace opscope {
namespace {

// A name recorded again and again is stored once: 20,000 scopes of a 1,000-byte
// name fit in the smallest budget (one block of names and one small chunk of
// records, 2,048 records), where copying each would have spent the budget
// after 62 scopes.
TEST(RuntimeNames, ARepeatedNameIsCopiedOncePerTrace) {
  uint64_t events = 0, dropped = 0;
  std::map<std::string, int> names;
  std::map<std::string, int> shapes;
  ProfilerOptions opts;
  opts.max_buffer_bytes = size_t{128} << 10;
  opts.record_shapes = true;
  opts.on_trace_ready = [&](TraceData& trace) {
    events = trace.EventCount();
    dropped = trace.DroppedCount();
    trace.ForEachEvent([&](const EventView& e) {
      ++names[std::string(e.name)];
      ++shapes[std::string(e.shapes)];
    });
  };
  const std::string long_name(1000, 'x');
  {
    Profiler prof(opts);
    prof.Start();
    for (int i = 0; i < 2000; ++i) {
      // The same storage with other text each time must not be mistaken for a repeat.
      std::string name = "layer" + std::to_string(i % 3);
      OPSCOPE_SCOPE_DYN(i % 2 == 0 ? std::string_view(long_name) : std::string_view(name),
                        ScopeArgs{.shapes = i % 4 == 1 ? "[[1,2]]" : "[[3]]"});
    }
    prof.Stop();
  }
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(events, 2000u);
  EXPECT_EQ(names[long_name], 1000);
  EXPECT_EQ(names["layer0"] + names["layer1"] + names["layer2"], 1000);
  EXPECT_EQ(names["layer1"], 334);  // i % 6 == 1: 1, 7, ..., 1999
  EXPECT_EQ(shapes["[[1,2]]"], 500);
  EXPECT_EQ(shapes["[[3]]"], 1500);
}

// The chunk reserve keeps the budget exact: with many threads past the cap,
// what was recorded is the budget to the record and the rest is counted.
TEST(RuntimeNames, ReserveKeepsTheCapExactAcrossThreads) {
  // Each thread records more than the whole cap, so no thread ends with a chunk
  // it charged but did not fill.
  constexpr int kThreads = 6;
  constexpr int kScopes = 300000;
  uint64_t events = 0, dropped = 0;
  ProfilerOptions opts;
  opts.max_buffer_bytes = size_t{9} << 20;  // room for ready chunks and small ones
  opts.on_trace_ready = [&](TraceData& trace) {
    events = trace.EventCount();
    dropped = trace.DroppedCount();
  };
  {
    Profiler prof(opts);
    prof.Start();
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; ++t) {
      workers.emplace_back([] {
        for (int i = 0; i < kScopes; ++i) {
          OPSCOPE_SCOPE("hot");
        }
      });
    }
    for (auto& w : workers) w.join();
    prof.Stop();
  }
  EXPECT_EQ(events + dropped, uint64_t{kThreads} * kScopes);
  EXPECT_EQ(events, (size_t{9} << 20) / 32) << "the cap holds exactly 9 MiB of 32-byte records";
}

// A child forked while a session records (a data loader's workers) goes on
// recording into its copy without the parent's helper thread, and the parent's
// trace is whole.
TEST(RuntimeNames, AChildForkedWhileRecordingRecordsWithoutTheHelper) {
  uint64_t events = 0;
  ProfilerOptions opts;
  opts.on_trace_ready = [&](TraceData& trace) { events = trace.EventCount(); };
  Profiler prof(opts);
  prof.Start();
  for (int i = 0; i < 100000; ++i) {
    OPSCOPE_SCOPE("parent");
  }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(20);  // a hang in the child ends it by SIGALRM, which fails the test
    for (int i = 0; i < 300000; ++i) {
      OPSCOPE_SCOPE("child");
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  for (int i = 0; i < 100000; ++i) {
    OPSCOPE_SCOPE("parent");
  }
  prof.Stop();
  EXPECT_EQ(events, 200000u);
}

}  // namespace
}  // namespace opscope
