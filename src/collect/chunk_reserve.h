// Large chunks of records mapped and faulted in ahead of the threads that fill
// them, so that a thread moving on to its next chunk finds its pages already
// there instead of paying for their first touch on the hot path.
//
// Why: the first write to a fresh 2 MiB chunk makes the kernel zero it (and, on a
// virtual machine, the host back it); on the 2-core development VM that cost
// about 8 ns per 32-byte record, a quarter of a scope. A helper thread of the
// collection keeps up to kTargetChunks chunks ready; the session's start fills
// kInitialChunks of them before it returns, so the first events find them.
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
  static constexpr size_t kTargetChunks = 4;   // 8 MiB
  static constexpr size_t kInitialChunks = 1;  // made ready before Start() returns

  // Fills kInitialChunks (as the budget allows) on the calling thread, then
  // starts the helper thread that keeps kTargetChunks ready.
  explicit ChunkReserve(std::shared_ptr<Budget> budget);
  ~ChunkReserve();  // Stop()
  ChunkReserve(const ChunkReserve&) = delete;
  ChunkReserve& operator=(const ChunkReserve&) = delete;

  // A ready large chunk, charged to the budget; nullptr when none is ready or the
  // budget has no room for one (then the caller allocates as it would without
  // a reserve). Wakes the helper to replace it.
  Chunk* Take();
  // Joins the helper and unmaps the chunks no thread took. Idempotent.
  void Stop();

  // In a child forked while a session recorded, the helper does not exist and
  // its mutex may have been held at the fork: Take() hands out nothing there
  // and Stop() leaves the parent's objects alone.

  // Whether large chunks are advised as transparent huge pages: yes unless the
  // environment sets OPSCOPE_HUGE_PAGES=0 (read when a collection begins).
  static bool HugePagesWanted();

 private:
  // Maps and faults in one chunk if the budget leaves room for one more ready
  // chunk; false otherwise (or when memory is short).
  bool FillOne();
  void Run();

  bool InForkedChild() const;

  const std::shared_ptr<Budget> budget_;
  const bool huge_pages_;
  const pid_t owner_pid_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Chunk*> ready_;            // guarded by mutex_
  bool stopping_ = false;                // guarded by mutex_
  uint64_t taken_ = 0;                   // chunks taken so far; guarded by mutex_
  std::unique_ptr<std::thread> helper_;  // released, not joined, in a forked child
};

}  // namespace opscope::collect

#endif  // OPSCOPE_COLLECT_CHUNK_RESERVE_H_
