#include "analyze/intervals.h"

#include <algorithm>

namespace opscope::analyze {

std::vector<Interval> Union(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<Interval> merged;
  for (const Interval& i : intervals) {
    if (i.end <= i.begin) continue;
    if (!merged.empty() && i.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, i.end);
    } else {
      merged.push_back(i);
    }
  }
  return merged;
}

int64_t Covered(const std::vector<Interval>& merged, int64_t begin, int64_t end) {
  int64_t total = 0;
  auto it = std::lower_bound(merged.begin(), merged.end(), begin,
                             [](const Interval& i, int64_t t) { return i.end <= t; });
  for (; it != merged.end() && it->begin < end; ++it) {
    total += std::min(end, it->end) - std::max(begin, it->begin);
  }
  return total;
}

}  // namespace opscope::analyze
