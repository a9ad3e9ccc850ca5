// Chunks of records mapped and faulted in ahead of the threads that fill them,
// so that a thread beginning to record, or moving on to its next chunk, finds
// its pages already there instead of paying for their first touch on the hot
// path.
//
// Why: the first write to a fresh 2 MiB chunk makes the kernel zero it (and, on a
// virtual machine, the host back it); on the 2-core development VM that cost
// about 8 ns per 32-byte record, a quarter of a scope. A helper thread of the
// collection keeps up to kTargetChunks large chunks and kTargetSmallChunks small
// ones ready; the session's start fills them all before it returns, so that a
// fresh process's first 260,000 events find them without the helper working
// beside them. (With one chunk filled at the start, the helper's three refills
// ran during the first events: the first 300,000 literal scopes of a fresh
// process took a median 25.2-25.5 ns, max 72 ns over 30 processes, against
// 23.9-24.4 ns, max 26-28 ns; Start() went from about 0.5 to 1.0 ms.)
//
// Budget: a ready chunk is charged to the budget only when a thread takes it, so
// the budget counts exactly the records that threads hold, as before; and the
// reserve never holds more chunks than the budget has room left for, so charged
// plus ready memory stays within it.
#ifndef OPSCOPE_COLLECT_CHUNK_RESERVE_H_
#define OPSCOPE_COLLECT_CHUNK_RESERVE_H_

#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "collect/recorder.h"

namespace opscope::collect {

class ChunkReserve {
 public:
  static constexpr size_t kTargetChunks = 4;  // large ones: 8 MiB
  // Small chunks, a thread's first: one is taken by each thread that begins to
  // record, so that its first event does not populate one itself (50 us here).
  static constexpr size_t kTargetSmallChunks = 4;  // 256 KiB

  // Fills both targets (as the budget allows; one large chunk when huge pages
  // are off) on the calling thread, so that the first events of a session find
  // them ready, then starts the helper thread that keeps them filled.
  explicit ChunkReserve(std::shared_ptr<Budget> budget);
  ~ChunkReserve();  // Stop()
  ChunkReserve(const ChunkReserve&) = delete;
  ChunkReserve& operator=(const ChunkReserve&) = delete;

  // A ready chunk of `capacity` records (Chunk::kSmallRecords or
  // kLargeRecords), charged to the budget; nullptr when none is ready, the
  // helper holds the lock, or the budget has no room for it (then the caller
  // allocates as it would without a reserve). Wakes the helper to replace it.
  Chunk* Take(uint32_t capacity = Chunk::kLargeRecords);
  // Joins the helper and unmaps the chunks no thread took. Idempotent.
  void Stop();

  // In a child forked while a session recorded, the helper does not exist and
  // its mutex may have been held at the fork: Take() hands out nothing there
  // and Stop() leaves the parent's objects alone.

  // Whether large chunks are advised as transparent huge pages: yes unless the
  // environment sets OPSCOPE_HUGE_PAGES=0 (read when a collection begins).
  static bool HugePagesWanted();

 private:
  // Maps and faults in one chunk of `capacity` records if the budget leaves
  // room for it beside the ready ones; false otherwise (or when memory is short).
  bool FillOne(uint32_t capacity);
  // Fills one chunk of a size below its target (`large_target` large ones),
  // large first; false when none is wanted or none fits.
  bool FillWanted(size_t large_target = kTargetChunks);
  size_t ReadyBytes() const;  // mutex_ held
  std::vector<Chunk*>& ReadyOf(uint32_t capacity) {
    return capacity == Chunk::kSmallRecords ? ready_small_ : ready_;
  }
  void Run();

  bool InForkedChild() const;

  const std::shared_ptr<Budget> budget_;
  const bool huge_pages_;
  const pid_t owner_pid_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Chunk*> ready_;            // large; guarded by mutex_
  std::vector<Chunk*> ready_small_;      // guarded by mutex_
  bool stopping_ = false;                // guarded by mutex_
  uint64_t taken_ = 0;                   // chunks taken so far; guarded by mutex_
  std::unique_ptr<std::thread> helper_;  // released, not joined, in a forked child
};

}  // namespace opscope::collect

#endif  // OPSCOPE_COLLECT_CHUNK_RESERVE_H_
