#include "collect/chunk_reserve.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <system_error>

namespace opscope::collect {
namespace {

constexpr size_t kLargeBytes = ChunkBudgetBytes(Chunk::kLargeRecords);
constexpr size_t kPageBytes = 4096;

// Writes one byte in every 4 KiB page, so that every page (or the one huge page)
// is backed before a recording thread writes there.
void FaultIn(Chunk& chunk) {
  auto* bytes = reinterpret_cast<volatile char*>(chunk.records);
  const size_t size = ChunkBudgetBytes(chunk.capacity);
  for (size_t offset = 0; offset < size; offset += kPageBytes) bytes[offset] = 0;
}

}  // namespace

bool ChunkReserve::HugePagesWanted() {
  const char* value = std::getenv("OPSCOPE_HUGE_PAGES");
  return value == nullptr || std::strcmp(value, "0") != 0;
}

ChunkReserve::ChunkReserve(std::shared_ptr<Budget> budget)
    : budget_(std::move(budget)), huge_pages_(budget_->huge_pages()), owner_pid_(::getpid()) {
  // As 4 KiB pages (OPSCOPE_HUGE_PAGES=0) a chunk takes 512 faults, about 5 ms
  // here: Start() then fills one large chunk and leaves the rest to the helper.
  const size_t large = huge_pages_ ? kTargetChunks : 1;
  while (FillWanted(large)) {
  }
  // The helper takes no signal meant for the program: it inherits a full mask.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  try {
    helper_ = std::make_unique<std::thread>([this] { Run(); });
  } catch (const std::system_error&) {
    // No thread to be had: the chunks made ready above are all the reserve has.
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (helper_) pthread_setname_np(helper_->native_handle(), "opscope-chunks");
}

// getpid() is a system call, made once per chunk taken (65,536 records).
bool ChunkReserve::InForkedChild() const { return ::getpid() != owner_pid_; }

ChunkReserve::~ChunkReserve() { Stop(); }

size_t ChunkReserve::ReadyBytes() const {
  return ready_.size() * kLargeBytes + ready_small_.size() * ChunkBudgetBytes(Chunk::kSmallRecords);
}

bool ChunkReserve::FillWanted(size_t large_target) {
  bool large = false, small = false;
  {
    std::lock_guard lock(mutex_);
    large = ready_.size() < large_target;
    small = ready_small_.size() < kTargetSmallChunks;
  }
  // Large first: a small budget is better spent on a busy thread's next chunk;
  // where a large one has no room, a small one may still fit.
  if (large && FillOne(Chunk::kLargeRecords)) return true;
  return small && FillOne(Chunk::kSmallRecords);
}

bool ChunkReserve::FillOne(uint32_t capacity) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    const size_t used = budget_->used_bytes();
    const size_t room = budget_->limit_bytes() > used ? budget_->limit_bytes() - used : 0;
    if (ReadyBytes() + ChunkBudgetBytes(capacity) > room) return false;
  }
  // Small chunks come populated (MAP_POPULATE); large ones are touched here.
  Chunk* chunk = Chunk::Allocate(capacity, huge_pages_);
  if (chunk == nullptr) return false;
  if (capacity >= Chunk::kLargeRecords) FaultIn(*chunk);
  std::lock_guard lock(mutex_);
  if (stopping_) {
    delete chunk;
    return false;
  }
  ReadyOf(capacity).push_back(chunk);
  return true;
}

void ChunkReserve::Run() {
  // Idle priority: the helper's page zeroing runs on a core nothing else wants
  // and never preempts the program it profiles. (At normal priority a refill
  // woken on a recording thread's core could take that thread's time slice: a
  // 4 ms stall within a fresh process's first 300,000 scopes, 2 of 30 runs.)
  // On a machine with no idle core the reserve runs dry and threads map their
  // own chunks, which costs them what the helper would have.
  sched_param idle{};
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);  // advice: fine if refused
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const uint64_t taken = taken_;
    lock.unlock();
    const bool filled = FillWanted();
    lock.lock();
    if (filled) continue;
    // Until a chunk is taken (the budget's room may have changed) or Stop().
    wake_.wait(lock, [&] { return stopping_ || taken_ != taken; });
  }
}

Chunk* ChunkReserve::Take(uint32_t capacity) {
  if (InForkedChild()) return nullptr;
  Chunk* chunk = nullptr;
  {
    // Never waits: the helper runs at idle priority (see Run), and a recording
    // thread blocked on a lock it holds could wait as long as the machine is
    // busy. Then the caller maps its chunk itself, as it would without a reserve.
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return nullptr;
    std::vector<Chunk*>& ready = ReadyOf(capacity);
    if (ready.empty()) return nullptr;
    if (!budget_->Reserve(ChunkBudgetBytes(capacity))) {
      // The budget has no room for this chunk any more: nor for the others of
      // its size, which are given back (the smaller ones may still fit).
      for (Chunk* c : ready) delete c;
      ready.clear();
      return nullptr;
    }
    chunk = ready.back();
    ready.pop_back();
    ++taken_;
  }
  wake_.notify_one();
  return chunk;
}

void ChunkReserve::Stop() {
  if (InForkedChild()) {
    static_cast<void>(helper_.release());  // the parent's thread, not this process's
    return;
  }
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (helper_ && helper_->joinable()) helper_->join();
  std::lock_guard lock(mutex_);
  for (std::vector<Chunk*>* ready : {&ready_, &ready_small_}) {
    for (Chunk* c : *ready) delete c;
    ready->clear();
  }
}

}  // namespace opscope::collect
