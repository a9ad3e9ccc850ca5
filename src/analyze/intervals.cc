#include "analyze/intervals.h"

#include <algorithm>

namespace opscope::analyze {

Intervals Union(Intervals intervals) {
  const auto by_begin = [](const Interval& a, const Interval& b) { return a.begin < b.begin; };
  // Events mostly come in time order: a check costs one pass, a sort many.
  if (!std::is_sorted(intervals.begin(), intervals.end(), by_begin)) {
    std::sort(intervals.begin(), intervals.end(), by_begin);
  }
  // Merged in place: no second array of the input's size to fault in.
  size_t kept = 0;
  for (const Interval& i : intervals) {
    if (i.end <= i.begin) continue;
    if (kept > 0 && i.begin <= intervals[kept - 1].end) {
      intervals[kept - 1].end = std::max(intervals[kept - 1].end, i.end);
    } else {
      intervals[kept++] = i;
    }
  }
  intervals.resize(kept);
  return intervals;
}

void UnionBuilder::MakeRoom() {
  constexpr size_t kBatch = size_t{1} << 16;
  if (!items_.empty()) items_ = Union(std::move(items_));  // in place: the capacity stays
  if (items_.capacity() < kBatch || items_.size() * 2 > items_.capacity()) {
    items_.reserve(std::max(kBatch, 2 * items_.capacity()));
  }
}

int64_t Covered(const Intervals& merged, int64_t begin, int64_t end) {
  int64_t total = 0;
  auto it = std::lower_bound(merged.begin(), merged.end(), begin,
                             [](const Interval& i, int64_t t) { return i.end <= t; });
  for (; it != merged.end() && it->begin < end; ++it) {
    total += std::min(end, it->end) - std::max(begin, it->begin);
  }
  return total;
}

// Both sorted, disjoint: their intersection.
Intervals Intersect(const Intervals& a, const Intervals& b) {
  Intervals out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t lo = std::max(a[i].begin, b[j].begin), hi = std::min(a[i].end, b[j].end);
    if (lo < hi) out.push_back({lo, hi});
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

// Both sorted, disjoint: a without b.
Intervals Subtract(const Intervals& a, const Intervals& b) {
  Intervals out;
  size_t j = 0;
  for (const Interval& x : a) {
    int64_t at = x.begin;
    while (j < b.size() && b[j].end <= at) ++j;
    for (size_t k = j; k < b.size() && b[k].begin < x.end; ++k) {
      if (b[k].begin > at) out.push_back({at, b[k].begin});
      at = std::max(at, b[k].end);
      if (at >= x.end) break;
    }
    if (at < x.end) out.push_back({at, x.end});
  }
  return out;
}

int64_t Total(const Intervals& merged) {
  int64_t n = 0;
  for (const Interval& i : merged) n += i.end - i.begin;
  return n;
}

Intervals Join(const Intervals& a, const Intervals& b) {
  Intervals out;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const Interval x = j == b.size() || (i < a.size() && a[i].begin < b[j].begin) ? a[i++] : b[j++];
    if (!out.empty() && x.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, x.end);
    } else {
      out.push_back(x);
    }
  }
  return out;
}

}  // namespace opscope::analyze
