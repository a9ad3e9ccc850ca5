// A mergeable quantile sketch of non-negative integers (durations in ns):
// logarithmic buckets of ratio gamma = (1 + a) / (1 - a), so any quantile it
// returns is within a relative error a (kRelativeError, 1%) of the true
// nearest-rank value, and two sketches merge by adding bucket counts. Merging
// is exact integer arithmetic: the same values give the same sketch whatever
// the order or grouping of the merges (ranks on threads, processes, files).
// The idea is DDSketch's (Masson, Rim, Lee, VLDB 2019).
#ifndef OPSCOPE_ANALYZE_SCALEOUT_SKETCH_H_
#define OPSCOPE_ANALYZE_SCALEOUT_SKETCH_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace opscope::analyze {

class QuantileSketch {
 public:
  static constexpr double kRelativeError = 0.01;
  // Index of the zero bucket; values >= 1 have indices >= 0.
  static constexpr int32_t kZeroBucket = -1;

  // The bucket of a value (>= 0; negatives count as 0).
  static int32_t BucketOf(int64_t value);
  // The value a bucket stands for: within kRelativeError of every value in it.
  static int64_t ValueOf(int32_t bucket);

  void Add(int64_t value) { AddToBucket(BucketOf(value), 1, value); }
  void Merge(const QuantileSketch& other);

  int64_t count() const { return count_; }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }
  // The nearest-rank quantile (rank ceil(q * n), 1-based), clamped to the
  // exact min and max; -1 when empty.
  int64_t Quantile(double q) const;

  // (bucket, count) in ascending bucket order, counts > 0.
  const std::vector<std::pair<int32_t, int64_t>>& buckets() const { return buckets_; }
  // Rebuilds a sketch from its parts (a summary file). Returns false when they
  // are inconsistent: buckets out of order or out of range, counts not
  // positive or not adding up, min and max not in their buckets.
  static bool FromParts(std::vector<std::pair<int32_t, int64_t>> buckets, int64_t min, int64_t max,
                        QuantileSketch& out);

  bool operator==(const QuantileSketch& o) const {
    return count_ == o.count_ && min_ == o.min_ && max_ == o.max_ && buckets_ == o.buckets_;
  }

 private:
  void AddToBucket(int32_t bucket, int64_t n, int64_t value);
  std::vector<std::pair<int32_t, int64_t>> buckets_;
  int64_t count_ = 0, min_ = -1, max_ = -1;
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_SCALEOUT_SKETCH_H_
