#include "devices/cpu/thread_pool.h"

#include <immintrin.h>

#include <chrono>

namespace opscope::devices::cpu {
namespace {

constexpr auto kSpin = std::chrono::microseconds(50);

void Pause() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int size) : size_(size < 1 ? 1 : size) {
  for (int i = 1; i < size_; ++i) workers_.emplace_back([this, i] { Work(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::Run(const std::function<void(int)>& fn) {
  if (size_ == 1) {
    fn(0);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    task_ = &fn;
    pending_.store(size_ - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  if (sleepers_.load(std::memory_order_acquire) > 0) wake_.notify_all();
  fn(0);
  while (pending_.load(std::memory_order_acquire) != 0) Pause();
}

void ThreadPool::Work(int index) {
  uint64_t seen = 0;
  for (;;) {
    // Spin briefly for the next run, then sleep until woken.
    const auto spin_until = std::chrono::steady_clock::now() + kSpin;
    while (generation_.load(std::memory_order_acquire) == seen &&
           std::chrono::steady_clock::now() < spin_until) {
      for (int i = 0; i < 64; ++i) Pause();
    }
    const std::function<void(int)>* task;
    {
      std::unique_lock lock(mutex_);
      if (generation_.load(std::memory_order_acquire) == seen) {
        sleepers_.fetch_add(1, std::memory_order_acq_rel);
        wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
        sleepers_.fetch_sub(1, std::memory_order_acq_rel);
      }
      if (stop_) return;
      seen = generation_.load(std::memory_order_acquire);
      task = task_;
    }
    (*task)(index);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace opscope::devices::cpu
