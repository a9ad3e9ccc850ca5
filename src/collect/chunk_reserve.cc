#include "collect/chunk_reserve.h"

#include <pthread.h>
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
  for (size_t i = 0; i < kInitialChunks && FillOne(); ++i) {
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

bool ChunkReserve::FillOne() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    const size_t used = budget_->used_bytes();
    const size_t room = budget_->limit_bytes() > used ? budget_->limit_bytes() - used : 0;
    if ((ready_.size() + 1) * kLargeBytes > room) return false;
  }
  Chunk* chunk = Chunk::Allocate(Chunk::kLargeRecords, huge_pages_);
  if (chunk == nullptr) return false;
  FaultIn(*chunk);
  std::lock_guard lock(mutex_);
  if (stopping_) {
    delete chunk;
    return false;
  }
  ready_.push_back(chunk);
  return true;
}

void ChunkReserve::Run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const uint64_t taken = taken_;
    if (ready_.size() < kTargetChunks) {
      lock.unlock();
      const bool filled = FillOne();
      lock.lock();
      if (filled) continue;
    }
    // Until a chunk is taken (the budget's room may have changed) or Stop().
    wake_.wait(lock, [&] { return stopping_ || taken_ != taken; });
  }
}

Chunk* ChunkReserve::Take() {
  if (InForkedChild()) return nullptr;
  Chunk* chunk = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (ready_.empty()) return nullptr;
    if (!budget_->Reserve(kLargeBytes)) {
      // The budget has no room for a large chunk any more: none of these can be used.
      for (Chunk* c : ready_) delete c;
      ready_.clear();
      return nullptr;
    }
    chunk = ready_.back();
    ready_.pop_back();
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
  for (Chunk* c : ready_) delete c;
  ready_.clear();
}

}  // namespace opscope::collect
