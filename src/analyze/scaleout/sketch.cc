#include "analyze/scaleout/sketch.h"

#include <algorithm>
#include <cmath>

namespace opscope::analyze {
namespace {

constexpr double kGamma =
    (1 + QuantileSketch::kRelativeError) / (1 - QuantileSketch::kRelativeError);
const double kLogGamma = std::log(kGamma);
// ceil(log(2^63) / log(gamma)) is 2183: no int64 lies above this bucket.
constexpr int32_t kMaxBucket = 2200;

}  // namespace

int32_t QuantileSketch::BucketOf(int64_t value) {
  if (value <= 0) return kZeroBucket;
  return static_cast<int32_t>(std::ceil(std::log(static_cast<double>(value)) / kLogGamma));
}

int64_t QuantileSketch::ValueOf(int32_t bucket) {
  if (bucket <= kZeroBucket) return 0;
  const double v = 2 * std::exp(bucket * kLogGamma) / (kGamma + 1);
  return std::max<int64_t>(1, std::llround(std::min(v, 9.2e18)));
}

void QuantileSketch::AddToBucket(int32_t bucket, int64_t n, int64_t value) {
  if (value < 0) value = 0;
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ += n;
  if (!buckets_.empty() && buckets_.back().first == bucket) {
    buckets_.back().second += n;
    return;
  }
  const auto at = std::lower_bound(buckets_.begin(), buckets_.end(), bucket,
                                   [](const auto& b, int32_t i) { return b.first < i; });
  if (at != buckets_.end() && at->first == bucket) {
    at->second += n;
  } else {
    buckets_.insert(at, {bucket, n});
  }
}

void QuantileSketch::Merge(const QuantileSketch& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    *this = other;
    return;
  }
  std::vector<std::pair<int32_t, int64_t>> merged;
  merged.reserve(buckets_.size() + other.buckets_.size());
  size_t a = 0, b = 0;
  while (a < buckets_.size() || b < other.buckets_.size()) {
    if (b == other.buckets_.size() ||
        (a < buckets_.size() && buckets_[a].first < other.buckets_[b].first)) {
      merged.push_back(buckets_[a++]);
    } else if (a == buckets_.size() || other.buckets_[b].first < buckets_[a].first) {
      merged.push_back(other.buckets_[b++]);
    } else {
      merged.push_back({buckets_[a].first, buckets_[a].second + other.buckets_[b].second});
      ++a, ++b;
    }
  }
  buckets_ = std::move(merged);
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

int64_t QuantileSketch::Quantile(double q) const {
  if (count_ == 0) return -1;
  const auto rank = std::clamp<int64_t>(
      static_cast<int64_t>(std::ceil(q * static_cast<double>(count_))), 1, count_);
  int64_t seen = 0;
  for (const auto& [bucket, n] : buckets_) {
    seen += n;
    if (seen >= rank) return std::clamp(ValueOf(bucket), min_, max_);
  }
  return max_;
}

bool QuantileSketch::FromParts(std::vector<std::pair<int32_t, int64_t>> buckets, int64_t min,
                               int64_t max, QuantileSketch& out) {
  out = QuantileSketch();
  if (buckets.empty()) return min == -1 && max == -1;
  int64_t count = 0;
  for (size_t i = 0; i < buckets.size(); ++i) {
    const auto& [bucket, n] = buckets[i];
    if (bucket < kZeroBucket || bucket > kMaxBucket || n <= 0) return false;
    if (i > 0 && buckets[i - 1].first >= bucket) return false;
    if (count > INT64_MAX - n) return false;
    count += n;
  }
  if (min < 0 || max < min) return false;
  if (BucketOf(min) != buckets.front().first || BucketOf(max) != buckets.back().first) return false;
  out.buckets_ = std::move(buckets);
  out.count_ = count;
  out.min_ = min;
  out.max_ = max;
  return true;
}

}  // namespace opscope::analyze
