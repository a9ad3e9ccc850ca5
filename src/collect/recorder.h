// The recording state behind the inline hot path of opscope.h.
//
// A Collection is one recording window (one generation). Each thread that records
// into it owns a ThreadBuffer: a linked list of fixed-size chunks of Records plus
// blocks for dynamic-scope payloads, all charged to the collection's byte budget.
// The owning thread appends without locks and publishes each chunk's count with a
// release store; the collector reads counts with acquire loads, so it can snapshot
// buffers while late writers still run. Buffers are shared_ptr-owned by both the
// thread and the collection, so neither side can free memory the other still uses;
// a buffer reaches the budget through the shared Budget, never the Collection, so
// the ownership has no cycle.
#ifndef OPSCOPE_COLLECT_RECORDER_H_
#define OPSCOPE_COLLECT_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "opscope/opscope.h"

namespace opscope::collect {

using detail::Record;
using detail::RecordKind;

// A run of records. A thread's first chunk is small (64 KiB, populated: taken
// from the collection's ChunkReserve, or mapped when the thread first records
// and the reserve has none), so threads that record little cost little. Later
// chunks are 2 MiB, aligned and (unless OPSCOPE_HUGE_PAGES=0) advised as
// transparent huge pages, so a busy thread's chunk is one page, not 512; they
// come faulted in from the collection's ChunkReserve when it has one ready.
struct Chunk {
  static constexpr uint32_t kSmallRecords = 2048;   // 64 KiB
  static constexpr uint32_t kLargeRecords = 65536;  // 2 MiB
  static constexpr size_t kLargeAlignment = size_t{2} << 20;

  // nullptr when memory is short. `huge_pages` advises a large chunk as THP.
  static Chunk* Allocate(uint32_t capacity, bool huge_pages);
  ~Chunk();

  // One past the last record published (written by the owning thread with
  // release; readers load it with acquire); `records` until the first.
  std::atomic<Record*> published_end{nullptr};
  std::atomic<Chunk*> next{nullptr};
  Record* records = nullptr;
  uint32_t capacity = 0;

  // The records published so far.
  uint32_t Published() const {
    return static_cast<uint32_t>(published_end.load(std::memory_order_acquire) - records);
  }
};

// What a chunk charges to the budget: its records (the header is not counted, so
// budgets in multiples of 64 KiB are used to the byte).
constexpr size_t ChunkBudgetBytes(uint32_t capacity) { return size_t{capacity} * sizeof(Record); }

struct PayloadBlock {
  static constexpr size_t kBytes = size_t{64} << 10;
  std::atomic<PayloadBlock*> next{nullptr};
  size_t used = 0;
  char data[kBytes];
};

// A dynamic scope's copied name and arguments, followed by the characters.
struct Payload {
  const char* category;
  int64_t flops;
  int64_t bytes;
  uint32_t name_size;
  uint32_t shapes_size;
  uint32_t dtype_size;
  uint32_t layout_size;
  uint32_t module_size;
  std::string_view name() const { return {Chars(), name_size}; }
  std::string_view shapes() const { return {Chars() + name_size, shapes_size}; }
  std::string_view dtype() const { return {Chars() + name_size + shapes_size, dtype_size}; }
  std::string_view layout() const {
    return {Chars() + name_size + shapes_size + dtype_size, layout_size};
  }
  std::string_view module() const {
    return {Chars() + name_size + shapes_size + dtype_size + layout_size, module_size};
  }

 private:
  const char* Chars() const { return reinterpret_cast<const char*>(this + 1); }
};

// The smallest budget: one small chunk of records and one block of runtime
// names, so that the smallest session records static and dynamic scopes alike
// (a budget of one chunk alone had no room for a runtime name).
constexpr size_t kMinBudgetBytes = ChunkBudgetBytes(Chunk::kSmallRecords) + PayloadBlock::kBytes;

// Longest name or argument string kept; longer ones are cut.
constexpr size_t kMaxPayloadString = 4096;

// The byte budget and open/closed state of one collection, shared by its buffers.
class Budget {
 public:
  Budget(size_t limit_bytes, bool record_shapes, bool huge_pages)
      : limit_bytes_(limit_bytes), record_shapes_(record_shapes), huge_pages_(huge_pages) {}

  // Charges `bytes`; false (and nothing charged) when it would not fit.
  bool Reserve(size_t bytes);
  size_t limit_bytes() const { return limit_bytes_; }
  size_t used_bytes() const { return used_bytes_.load(std::memory_order_relaxed); }
  bool record_shapes() const { return record_shapes_; }
  bool huge_pages() const { return huge_pages_; }
  bool closed() const { return closed_.load(std::memory_order_acquire); }
  void Close() { closed_.store(true, std::memory_order_release); }

 private:
  const size_t limit_bytes_;
  const bool record_shapes_;
  const bool huge_pages_;
  std::atomic<size_t> used_bytes_{0};
  std::atomic<bool> closed_{false};
};

class ChunkReserve;

struct ThreadBuffer {
  ThreadBuffer(std::shared_ptr<Budget> shared_budget, std::shared_ptr<ChunkReserve> chunk_reserve,
               uint32_t os_tid, std::string thread_name, uint32_t order);
  ~ThreadBuffer();

  const std::shared_ptr<Budget> budget;
  const std::shared_ptr<ChunkReserve> reserve;  // ready large chunks
  const uint32_t tid;
  const uint32_t sort_index;
  Chunk* head = nullptr;
  Chunk* tail = nullptr;  // owner thread only
  PayloadBlock* payload_head = nullptr;
  PayloadBlock* payload_tail = nullptr;  // owner thread only
  std::atomic<uint64_t> dropped{0};

  std::string name() const;
  void set_name(std::string name);

  // Called once the collection is closed and read: frees every chunk and payload
  // block but the tails, which the owning thread may still hold a cursor into
  // (a scope that began before Stop() ends after it), and returns the tail
  // chunk's physical pages to the system. A late write then lands in a fresh zero
  // page of still-mapped memory, never in freed memory.
  void ReleaseMemory();

  // Guards linking chunks and blocks against ReleaseMemory(); taken once per
  // chunk or block, never per event.
  std::mutex link_mutex;

 private:
  mutable std::mutex name_mutex_;
  std::string name_;
};

class Collection {
 public:
  // Makes the first chunks ready (ChunkReserve) before it returns.
  Collection(uint32_t generation, size_t budget_bytes, bool record_shapes);
  ~Collection();

  uint32_t generation() const { return generation_; }
  Budget& budget() { return *budget_; }
  const Budget& budget() const { return *budget_; }

  std::shared_ptr<ThreadBuffer> Register(uint32_t tid, std::string name);
  std::vector<std::shared_ptr<ThreadBuffer>> Threads() const;
  // After the collection was closed and read (or discarded): see ThreadBuffer.
  void ReleaseMemory();
  // Once no new scope records into it: no more chunks are made ready.
  void StopReserve();

  int64_t start_ns = 0;           // CLOCK_MONOTONIC at start
  int64_t start_realtime_ns = 0;  // the same instant on the wall clock

 private:
  const uint32_t generation_;
  const std::shared_ptr<Budget> budget_;
  const std::shared_ptr<ChunkReserve> reserve_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<ThreadBuffer>> threads_;
};

// Makes the calling thread's recording state now rather than at its first
// record. A thread-local object whose destructor may record (the C API's
// stack of open scopes, ended at thread exit) calls this before it is made
// itself: thread-local objects are destroyed in the reverse order of their
// making, so the recording state then outlives it. A record made after the
// state is gone is dropped (counted by no thread), never written through it.
void PrepareThread();

// Opens a new collection and makes it the one the hot path records into. Throws
// Error(kFailedPrecondition) if another collection is open.
std::shared_ptr<Collection> BeginCollection(size_t budget_bytes, bool record_shapes);
// Stops recording into `collection` and returns it for reading.
void EndCollection(const std::shared_ptr<Collection>& collection);
// Stops new scopes from recording into `collection` while those already open
// on threads that recorded into it can still end into it; EndCollection later.
void DetachCollection(const std::shared_ptr<Collection>& collection);
// Whether some thread recorded an event that began at or after `ticks` (each
// thread's latest 256 records are checked).
bool RecordedSince(const Collection& collection, uint64_t ticks);
// Whether some thread recorded anything but step spans (or dropped an event).
bool RecordedAnything(const Collection& collection);
// The open collection if its generation is `generation`.
std::shared_ptr<Collection> CurrentCollection(uint32_t generation);

}  // namespace opscope::collect

#endif  // OPSCOPE_COLLECT_RECORDER_H_
