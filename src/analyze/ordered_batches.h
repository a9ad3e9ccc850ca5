// The parallel importers' loop: worker threads take batches of the input in
// order (one reader at a time), parse them at once, each into its own state,
// and merge them into the model in the order they were read, so the model is
// the same for any thread count. The first error in the input's order wins:
// it is rethrown once every thread has been joined; anything else a thread
// throws (out of memory while merging) ends the run the same way.
#ifndef OPSCOPE_ANALYZE_ORDERED_BATCHES_H_
#define OPSCOPE_ANALYZE_ORDERED_BATCHES_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "analyze/importer.h"
#include "core/cancel.h"

namespace opscope::analyze {

// The threads an importer uses for an input of `expected_bytes` (0: unknown):
// `requested` when above 0; else the import settings', else one per core (up
// to 8), and one per 32 MiB of input at most, since each holds a batch and a
// state of its own, which for a small input costs more than the speed is worth.
inline int ImportThreads(int requested, uint64_t expected_bytes) {
  if (requested > 0) return requested;
  const ImportSettings settings = GetImportSettings();
  int threads = settings.threads > 0
                    ? settings.threads
                    : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
  if (expected_bytes > 0) {
    threads = std::min<int>(
        threads, static_cast<int>(std::max<uint64_t>(1, expected_bytes / (uint64_t{32} << 20))));
  }
  return std::max(1, threads);
}

// The bytes of a batch: ImportOptions::chunk_bytes.
inline size_t ImportChunkBytes(size_t requested, uint64_t expected_bytes) {
  if (requested > 0) return requested;
  return expected_bytes > 0 ? static_cast<size_t>(std::clamp<uint64_t>(
                                  expected_bytes / 256, uint64_t{256} << 10, uint64_t{4} << 20))
                            : size_t{4} << 20;
}

// Each thread default-constructs a State and passes it to `init`; then, until
// the input ends or a thread fails: `read(state)` fills the state's batch
// under the reading lock (false: the input has ended; the batch is then empty
// and still goes through `merge`), `parse(state)` runs concurrently with the
// other threads, and `merge(state, sequence)` runs under the merging lock in
// the batches' order (sequence 0, 1, ...).
template <typename State, typename Init, typename Read, typename Parse, typename Merge>
void RunOrderedBatches(int threads, const Init& init, const Read& read, const Parse& parse,
                       const Merge& merge) {
  std::mutex read_mutex, merge_mutex;
  std::condition_variable merged_cv;
  uint64_t next_batch = 0, merged = 0;
  bool done = false;
  std::atomic<bool> failed{false};
  std::vector<std::pair<uint64_t, std::exception_ptr>> errors;  // (batch, error), under merge_mutex
  const auto fail = [&](uint64_t sequence, std::exception_ptr error) {
    std::lock_guard lock(merge_mutex);
    errors.emplace_back(sequence, std::move(error));
    failed = true;
    merged_cv.notify_all();
  };
  const auto work = [&] {
    State state;
    init(state);
    while (!failed.load(std::memory_order_relaxed)) {
      uint64_t sequence = 0;
      {
        std::lock_guard lock(read_mutex);
        if (done) break;
        sequence = next_batch++;
        try {
          done = !read(state);
        } catch (...) {
          done = true;
          fail(sequence, std::current_exception());
          break;
        }
      }
      try {
        parse(state);
      } catch (...) {
        fail(sequence, std::current_exception());
        break;
      }
      std::unique_lock lock(merge_mutex);
      merged_cv.wait(lock, [&] { return merged == sequence || failed.load(); });
      if (failed.load()) break;
      merge(state, sequence);
      ++merged;
      merged_cv.notify_all();
    }
  };
  const auto guarded = [&] {
    try {
      work();
    } catch (...) {
      fail(UINT64_MAX, std::current_exception());
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(core::WithCallersCancel(guarded));
  guarded();
  for (auto& t : pool) t.join();
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::rethrow_exception(errors.front().second);
  }
}

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_ORDERED_BATCHES_H_
