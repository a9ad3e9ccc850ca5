// A fixed set of worker threads for the CPU device's own kernels (copies, STREAM,
// FMA ceilings). Run(fn) calls fn(i) for i in [0, size) with i = 0 on the caller,
// and returns when all have finished. Between runs, workers spin for a few
// microseconds (so back-to-back runs dispatch in about a microsecond) and then
// sleep (so they never compete with oneDNN's or OpenBLAS's threads for long).
#ifndef OPSCOPE_DEVICES_CPU_THREAD_POOL_H_
#define OPSCOPE_DEVICES_CPU_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace opscope::devices::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int size);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return size_; }
  void Run(const std::function<void(int)>& fn);

 private:
  void Work(int index);

  const int size_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  const std::function<void(int)>* task_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> sleepers_{0};
  bool stop_ = false;  // guarded by mutex_
};

}  // namespace opscope::devices::cpu

#endif  // OPSCOPE_DEVICES_CPU_THREAD_POOL_H_
