// Time intervals: the union of many, and how much of a window it covers.
// Every pass that measures busy time uses these.
#ifndef OPSCOPE_ANALYZE_INTERVALS_H_
#define OPSCOPE_ANALYZE_INTERVALS_H_

#include <cstdint>
#include <vector>

namespace opscope::analyze {

struct Interval {
  int64_t begin, end;
};

// Sorted, non-overlapping union of intervals.
std::vector<Interval> Union(std::vector<Interval> intervals);
// Time the union covers within [begin, end).
int64_t Covered(const std::vector<Interval>& merged, int64_t begin, int64_t end);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_INTERVALS_H_
