#include "collect/recorder.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "collect/chunk_reserve.h"
#include "collect/payload_cache.h"
#include "core/clock.h"
#include "core/intern.h"

namespace opscope {
namespace detail {

std::atomic<uint32_t> g_generation{0};
#if defined(__cpp_constinit)
constinit thread_local ThreadWriter t_writer;
#else
thread_local ThreadWriter t_writer;
#endif

}  // namespace detail

namespace collect {
namespace {

std::mutex g_mutex;
std::shared_ptr<Collection> g_current;  // guarded by g_mutex
uint32_t g_last_generation = 0;         // guarded by g_mutex

// The owning references live in holders whose destructors (at thread exit)
// clear the raw pointers the hot paths read: a constinit raw pointer costs no
// TLS guard check per access.
constinit thread_local ThreadBuffer* t_buffer_raw = nullptr;
constinit thread_local PayloadCache* t_payload_cache = nullptr;  // made at the first runtime name
// Set when the thread's state below is destroyed (thread exit): from then on
// records are dropped, not written through a destroyed object.
constinit thread_local bool t_state_gone = false;
struct ThreadState {
  std::shared_ptr<ThreadBuffer> buffer;
  std::unique_ptr<PayloadCache> cache;
  ~ThreadState() {
    t_buffer_raw = nullptr;
    t_payload_cache = nullptr;
    t_state_gone = true;
  }
};
thread_local ThreadState t_state;
thread_local std::string t_thread_name;  // set by SetThreadName

uint32_t OsThreadId() { return static_cast<uint32_t>(::syscall(SYS_gettid)); }

std::string DefaultThreadName() {
  if (!t_thread_name.empty()) return t_thread_name;
  if (OsThreadId() == static_cast<uint32_t>(::getpid())) return "main";
  char name[64] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof name) == 0 && name[0] != '\0') return name;
  return "thread " + std::to_string(OsThreadId());
}

// Makes the calling thread's buffer belong to the collection of `generation`.
ThreadBuffer* BufferFor(uint32_t generation) {
  detail::ThreadWriter& writer = detail::t_writer;
  if (writer.generation == generation && t_buffer_raw != nullptr) return t_buffer_raw;
  if (t_state_gone) return nullptr;  // the thread is exiting: its state is destroyed
  std::shared_ptr<Collection> collection = CurrentCollection(generation);
  if (!collection) return nullptr;  // the window closed: outside any trace
  t_state.buffer = collection->Register(OsThreadId(), DefaultThreadName());
  t_buffer_raw = t_state.buffer.get();
  writer = detail::ThreadWriter{};
  writer.generation = generation;
  return t_buffer_raw;
}

bool OpenChunk(ThreadBuffer& buffer) {
  Budget& budget = *buffer.budget;
  std::lock_guard lock(buffer.link_mutex);
  if (budget.closed()) return false;
  // A small first chunk, then large ones, faulted in ahead when the reserve has
  // one ready (charged as it is taken); small ones also use up the end of the
  // budget.
  Chunk* chunk =
      buffer.reserve->Take(buffer.head == nullptr ? Chunk::kSmallRecords : Chunk::kLargeRecords);
  if (chunk == nullptr) {
    uint32_t capacity = buffer.head == nullptr ? Chunk::kSmallRecords : Chunk::kLargeRecords;
    if (!budget.Reserve(ChunkBudgetBytes(capacity))) {
      capacity = Chunk::kSmallRecords;
      if (!budget.Reserve(ChunkBudgetBytes(capacity))) return false;
    }
    chunk = Chunk::Allocate(capacity, budget.huge_pages());
    if (chunk == nullptr) return false;
  }
  const uint32_t capacity = chunk->capacity;
  if (buffer.tail == nullptr) {
    buffer.head = chunk;
  } else {
    buffer.tail->next.store(chunk, std::memory_order_release);
  }
  buffer.tail = chunk;
  detail::ThreadWriter& writer = detail::t_writer;
  writer.cursor = chunk->records;
  writer.limit = chunk->records + capacity;
  writer.published = &chunk->published_end;
  return true;
}

}  // namespace

namespace {

// Maps `bytes` aligned to `alignment` straight from the kernel: malloc would keep
// freed chunks in its heap (its mmap threshold grows after the first free).
void* MapAligned(size_t bytes, size_t alignment) {
  const size_t span = bytes + alignment;
  void* raw = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + alignment - 1) & ~(uintptr_t{alignment} - 1);
  if (aligned > start) ::munmap(raw, aligned - start);
  const uintptr_t end = start + span;
  if (end > aligned + bytes)
    ::munmap(reinterpret_cast<void*>(aligned + bytes), end - aligned - bytes);
  return reinterpret_cast<void*>(aligned);
}

}  // namespace

Chunk* Chunk::Allocate(uint32_t capacity, bool huge_pages) {
  const size_t bytes = ChunkBudgetBytes(capacity);
  const bool large = capacity >= kLargeRecords;
  void* memory = large ? MapAligned(bytes, kLargeAlignment)
                       // Populated: a thread's first chunk is backed in one call (by the
                       // reserve's helper, or as the thread registers), not by 16 faults
                       // among its first 2,048 events.
                       : ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (memory == nullptr || memory == MAP_FAILED) return nullptr;
  if (large && huge_pages) ::madvise(memory, bytes, MADV_HUGEPAGE);  // advice: fine if refused
  Chunk* chunk = new (std::nothrow) Chunk;
  if (chunk == nullptr) {
    ::munmap(memory, bytes);
    return nullptr;
  }
  chunk->records = static_cast<Record*>(memory);
  chunk->published_end.store(chunk->records, std::memory_order_relaxed);
  chunk->capacity = capacity;
  return chunk;
}

Chunk::~Chunk() {
  if (records != nullptr) ::munmap(records, ChunkBudgetBytes(capacity));
}

ThreadBuffer::ThreadBuffer(std::shared_ptr<Budget> shared_budget,
                           std::shared_ptr<ChunkReserve> chunk_reserve, uint32_t os_tid,
                           std::string thread_name, uint32_t order)
    : budget(std::move(shared_budget)),
      reserve(std::move(chunk_reserve)),
      tid(os_tid),
      sort_index(order),
      name_(std::move(thread_name)) {}

ThreadBuffer::~ThreadBuffer() {
  for (Chunk* c = head; c != nullptr;) {
    Chunk* next = c->next.load(std::memory_order_acquire);
    delete c;
    c = next;
  }
  for (PayloadBlock* b = payload_head; b != nullptr;) {
    PayloadBlock* next = b->next.load(std::memory_order_acquire);
    delete b;
    b = next;
  }
}

void ThreadBuffer::ReleaseMemory() {
  std::lock_guard lock(link_mutex);
  while (head != nullptr && head != tail) {
    Chunk* next = head->next.load(std::memory_order_acquire);
    delete head;
    head = next;
  }
  if (tail != nullptr) {
    ::madvise(tail->records, ChunkBudgetBytes(tail->capacity), MADV_DONTNEED);
  }
  while (payload_head != nullptr && payload_head != payload_tail) {
    PayloadBlock* next = payload_head->next.load(std::memory_order_acquire);
    delete payload_head;
    payload_head = next;
  }
}

std::string ThreadBuffer::name() const {
  std::lock_guard lock(name_mutex_);
  return name_;
}

void ThreadBuffer::set_name(std::string name) {
  std::lock_guard lock(name_mutex_);
  name_ = std::move(name);
}

Collection::Collection(uint32_t generation, size_t budget_bytes, bool record_shapes)
    : generation_(generation),
      budget_(
          std::make_shared<Budget>(budget_bytes, record_shapes, ChunkReserve::HugePagesWanted())),
      reserve_(std::make_shared<ChunkReserve>(budget_)) {}

Collection::~Collection() { StopReserve(); }

void Collection::StopReserve() { reserve_->Stop(); }

bool Budget::Reserve(size_t bytes) {
  size_t used = used_bytes_.load(std::memory_order_relaxed);
  do {
    if (used + bytes > limit_bytes_) return false;
  } while (!used_bytes_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return true;
}

std::shared_ptr<ThreadBuffer> Collection::Register(uint32_t tid, std::string name) {
  std::lock_guard lock(mutex_);
  auto buffer = std::make_shared<ThreadBuffer>(budget_, reserve_, tid, std::move(name),
                                               static_cast<uint32_t>(threads_.size()));
  threads_.push_back(buffer);
  return buffer;
}

std::vector<std::shared_ptr<ThreadBuffer>> Collection::Threads() const {
  std::lock_guard lock(mutex_);
  return threads_;
}

void Collection::ReleaseMemory() {
  for (const auto& buffer : Threads()) buffer->ReleaseMemory();
}

namespace {

// fork() while recording: the child has only the forking thread, so the
// collection's other writers and its chunk reserve's helper thread are gone,
// and a lock one of them held stays held. The child records nothing (the
// generation is 0) and never releases the parent's collection (that would
// wait on the helper thread); g_mutex is held across the fork, so the child
// gets it in a known state. Profiler's copy in the child is inert (profiler.cc).
void ForkPrepare() { g_mutex.lock(); }
void ForkParent() { g_mutex.unlock(); }
void ForkChild() {
  detail::g_generation.store(0, std::memory_order_release);
  // Kept where a static reaches it (never released, and no leak to a leak checker).
  static auto* const parents = new std::shared_ptr<Collection>();
  if (g_current) *parents = std::move(g_current);
  g_mutex.unlock();
}

}  // namespace

std::shared_ptr<Collection> BeginCollection(size_t budget_bytes, bool record_shapes) {
  core::InitClockAnchor();
  static std::once_flag fork_handlers;
  std::call_once(fork_handlers, [] { ::pthread_atfork(ForkPrepare, ForkParent, ForkChild); });
  std::lock_guard lock(g_mutex);
  if (g_current) {
    throw Error(ErrorCode::kFailedPrecondition,
                "another opscope profiler is already recording in this process");
  }
  // Generation 0 means "not recording"; skip it when the counter wraps.
  uint32_t generation = ++g_last_generation;
  if (generation == 0) generation = ++g_last_generation;
  g_current = std::make_shared<Collection>(generation, budget_bytes, record_shapes);
  g_current->start_ns = core::MonotonicNs();
  g_current->start_realtime_ns = core::RealtimeNs();
  detail::g_generation.store(generation, std::memory_order_release);
  return g_current;
}

void EndCollection(const std::shared_ptr<Collection>& collection) {
  DetachCollection(collection);
  collection->budget().Close();
}

void DetachCollection(const std::shared_ptr<Collection>& collection) {
  {
    std::lock_guard lock(g_mutex);
    if (g_current == collection) {
      detail::g_generation.store(0, std::memory_order_release);
      g_current.reset();
    }
  }
  // Scopes still open may end into it, from the chunks they hold or fresh ones.
  collection->StopReserve();
}

bool RecordedSince(const Collection& collection, uint64_t ticks) {
  for (const auto& buffer : collection.Threads()) {
    std::lock_guard lock(buffer->link_mutex);
    const Chunk* tail = buffer->tail;
    if (tail == nullptr) continue;
    // Records are appended as scopes end; one that began at `ticks` or later
    // ends among the last few unless it encloses many.
    const uint32_t n = tail->Published();
    for (uint32_t k = n; k > 0 && n - k < 256; --k) {
      const Record& r = tail->records[k - 1];
      if (static_cast<RecordKind>(r.meta & 0xFF) == RecordKind::kStepSpan) continue;
      if (r.t0 >= ticks) return true;
    }
  }
  return false;
}

bool RecordedAnything(const Collection& collection) {
  for (const auto& buffer : collection.Threads()) {
    if (buffer->dropped.load(std::memory_order_relaxed) > 0) return true;
    std::lock_guard lock(buffer->link_mutex);
    if (buffer->head != buffer->tail) return true;  // a chunk was filled
    const Chunk* tail = buffer->tail;
    if (tail == nullptr) continue;
    const uint32_t n = tail->Published();
    for (uint32_t k = 0; k < n; ++k) {
      if (static_cast<RecordKind>(tail->records[k].meta & 0xFF) != RecordKind::kStepSpan)
        return true;
    }
  }
  return false;
}

std::shared_ptr<Collection> CurrentCollection(uint32_t generation) {
  std::lock_guard lock(g_mutex);
  if (g_current && g_current->generation() == generation) return g_current;
  return nullptr;
}

void PrepareThread() {
  if (t_state_gone) return;
  // Odr-uses make both thread-locals now (the name first: it is read while
  // the state registers a buffer).
  t_thread_name.size();
  t_state.buffer.get();
}

}  // namespace collect

namespace detail {

void AppendSlow(uint32_t generation, const void* what, uint64_t t0, uint64_t t1,
                uint64_t meta) noexcept {
  collect::ThreadBuffer* buffer = collect::BufferFor(generation);
  if (buffer == nullptr) return;
  ThreadWriter& writer = t_writer;
  if (writer.cursor == writer.limit && !collect::OpenChunk(*buffer)) {
    // Counted only while the window is open: a late event after Stop() is simply
    // outside the trace, as it would be had it started later.
    if (!buffer->budget->closed()) {
      buffer->dropped.store(buffer->dropped.load(std::memory_order_relaxed) + 1,
                            std::memory_order_relaxed);
    }
    return;
  }
  *writer.cursor = Record{what, t0, t1, meta};
  ++writer.cursor;
  writer.published->store(writer.cursor, std::memory_order_release);
}

void CountDrop(uint32_t generation) noexcept {
  collect::ThreadBuffer* buffer = collect::BufferFor(generation);
  if (buffer == nullptr || buffer->budget->closed()) return;
  buffer->dropped.store(buffer->dropped.load(std::memory_order_relaxed) + 1,
                        std::memory_order_relaxed);
}

namespace {

std::string_view Kept(std::string_view text) {
  return text.size() <= collect::kMaxPayloadString ? text
                                                   : text.substr(0, collect::kMaxPayloadString);
}

// Copies a payload the thread's cache did not hold into its payload blocks and
// remembers it. Apart from the hot path of CopyPayload, so that a hit stays short.
[[gnu::noinline]] const void* CopyNewPayload(collect::ThreadBuffer& buffer, uint32_t generation,
                                             const collect::PayloadKey& key, uint64_t hash) {
  collect::PayloadCache* cache = collect::t_payload_cache;
  if (cache == nullptr) {
    collect::t_state.cache.reset(new (std::nothrow) collect::PayloadCache);
    cache = collect::t_payload_cache = collect::t_state.cache.get();
  }
  size_t chars_size = 0;
  for (const std::string_view part : key.parts) chars_size += part.size();
  const size_t needed = (sizeof(collect::Payload) + chars_size + alignof(collect::Payload) - 1) &
                        ~(alignof(collect::Payload) - 1);
  collect::PayloadBlock* block = buffer.payload_tail;
  if (block == nullptr || block->used + needed > collect::PayloadBlock::kBytes) {
    std::lock_guard lock(buffer.link_mutex);
    collect::Budget& budget = *buffer.budget;
    if (budget.closed() || !budget.Reserve(collect::PayloadBlock::kBytes)) return nullptr;
    auto* fresh = new (std::nothrow) collect::PayloadBlock;
    if (fresh == nullptr) return nullptr;
    if (block == nullptr) {
      buffer.payload_head = fresh;
    } else {
      block->next.store(fresh, std::memory_order_release);
    }
    buffer.payload_tail = block = fresh;
  }
  auto* payload =
      new (block->data + block->used) collect::Payload{key.category,
                                                       key.flops,
                                                       key.bytes,
                                                       static_cast<uint32_t>(key.parts[0].size()),
                                                       static_cast<uint32_t>(key.parts[1].size()),
                                                       static_cast<uint32_t>(key.parts[2].size()),
                                                       static_cast<uint32_t>(key.parts[3].size()),
                                                       static_cast<uint32_t>(key.parts[4].size())};
  char* chars = reinterpret_cast<char*>(payload + 1);
  // Empty views may hold a null pointer, which memcpy must not see.
  for (const std::string_view part : key.parts) {
    if (!part.empty()) std::memcpy(chars, part.data(), part.size());
    chars += part.size();
  }
  block->used += needed;
  if (cache != nullptr) cache->Remember(generation, key, hash, payload);
  return payload;
}

}  // namespace

const void* CopyPayload(uint32_t generation, std::string_view name,
                        const ScopeArgs& args) noexcept {
  collect::ThreadBuffer* buffer = collect::BufferFor(generation);
  if (buffer == nullptr) return nullptr;
  const collect::PayloadKey key{
      {Kept(name), buffer->budget->record_shapes() ? Kept(args.shapes) : std::string_view(),
       Kept(args.dtype), Kept(args.layout), Kept(args.module)},
      args.category != nullptr ? args.category : "user_annotation",
      args.flops,
      args.bytes};
  const uint64_t hash = key.Hash();
  // A name this thread recorded before in this collection: the same payload.
  if (const collect::PayloadCache* cache = collect::t_payload_cache) {
    if (const void* known = cache->Find(generation, key, hash)) return known;
  }
  return CopyNewPayload(*buffer, generation, key, hash);
}

}  // namespace detail

void SetThreadName(std::string_view name) {
  collect::t_thread_name = std::string(name);
  collect::ThreadBuffer* buffer = collect::t_buffer_raw;
  if (buffer != nullptr && !buffer->budget->closed()) {
    buffer->set_name(collect::t_thread_name);
  }
}

bool IsRecording() noexcept { return detail::g_generation.load(std::memory_order_relaxed) != 0; }

void Instant(std::string_view name) {
  const uint32_t generation = detail::g_generation.load(std::memory_order_relaxed);
  if (generation == 0) return;
  detail::Append(generation, detail::Record{core::Intern(name), detail::Ticks(), 0,
                                            static_cast<uint64_t>(detail::RecordKind::kInstant)});
}

void Counter(std::string_view name, double value) {
  const uint32_t generation = detail::g_generation.load(std::memory_order_relaxed);
  if (generation == 0) return;
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  detail::Append(generation, detail::Record{core::Intern(name), detail::Ticks(), bits,
                                            static_cast<uint64_t>(detail::RecordKind::kCounter)});
}

void FlowStart(uint64_t id, const char* category) {
  const uint32_t generation = detail::g_generation.load(std::memory_order_relaxed);
  if (generation == 0) return;
  detail::Append(generation, detail::Record{core::Intern(category), detail::Ticks(), id,
                                            static_cast<uint64_t>(detail::RecordKind::kFlowStart)});
}

void FlowEnd(uint64_t id, const char* category) {
  const uint32_t generation = detail::g_generation.load(std::memory_order_relaxed);
  if (generation == 0) return;
  detail::Append(generation, detail::Record{core::Intern(category), detail::Ticks(), id,
                                            static_cast<uint64_t>(detail::RecordKind::kFlowEnd)});
}

}  // namespace opscope
