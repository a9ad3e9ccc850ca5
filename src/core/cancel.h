// Cooperative cancellation of a long computation: the Python package's
// analyze() stops when Ctrl-C arrives instead of finishing a 10-million-event
// trace first. The caller owns a flag and installs it on its thread with a
// CancelScope; the work checks it at its cancellation points (each chunk an
// importer reads, each SQLite progress call, each analysis pass) and throws
// Cancelled there. Threads the work starts take the caller's flag with
// WithCallersCancel. Without a scope nothing is ever cancelled, and a check
// costs one thread-local load.
#ifndef OPSCOPE_CORE_CANCEL_H_
#define OPSCOPE_CORE_CANCEL_H_

#include <atomic>
#include <exception>
#include <utility>

namespace opscope::core {

// Thrown at a cancellation point once the flag is set. Not an opscope Error:
// nothing reports it; the caller that set the flag knows why.
class Cancelled : public std::exception {
 public:
  const char* what() const noexcept override { return "cancelled"; }
};

namespace detail {
inline thread_local const std::atomic<bool>* cancel_flag = nullptr;
}  // namespace detail

// Installs `flag` (null: none) on the calling thread for the scope's lifetime.
class CancelScope {
 public:
  explicit CancelScope(const std::atomic<bool>* flag)
      : previous_(std::exchange(detail::cancel_flag, flag)) {}
  ~CancelScope() { detail::cancel_flag = previous_; }
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

inline bool IsCancelled() {
  const std::atomic<bool>* flag = detail::cancel_flag;
  return flag != nullptr && flag->load(std::memory_order_relaxed);
}

inline void ThrowIfCancelled() {
  if (IsCancelled()) throw Cancelled();
}

// `work` wrapped to run under the calling thread's flag, for a thread it starts.
template <typename Work>
auto WithCallersCancel(Work work) {
  return [flag = detail::cancel_flag, work = std::move(work)]() mutable {
    CancelScope scope(flag);
    return work();
  };
}

}  // namespace opscope::core

#endif  // OPSCOPE_CORE_CANCEL_H_
