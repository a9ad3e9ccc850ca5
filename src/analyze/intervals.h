// Time intervals: the union of many, and how much of a window it covers.
// Every pass that measures busy time uses these.
#ifndef OPSCOPE_ANALYZE_INTERVALS_H_
#define OPSCOPE_ANALYZE_INTERVALS_H_

#include <cstdint>
#include <vector>

#include "analyze/mapped.h"

namespace opscope::analyze {

struct Interval {
  int64_t begin, end;
};
// Lists of intervals can be as long as a trace: mapped (mapped.h).
using Intervals = MappedVector<Interval>;

// Sorted, non-overlapping union of intervals.
Intervals Union(Intervals intervals);
// The union of intervals added one at a time, kept in one buffer that is
// unioned in place whenever it fills (and doubled only when the union itself
// fills half of it): memory follows the union's size, not the number of
// intervals (millions of nested host events union to far fewer spans).
class UnionBuilder {
 public:
  void Add(Interval i) {
    if (items_.size() == items_.capacity()) MakeRoom();
    items_.push_back(i);
  }
  // The union; the builder is left empty.
  Intervals Take() {
    Intervals out = Union(std::move(items_));
    items_ = {};
    return out;
  }

 private:
  void MakeRoom();
  Intervals items_;
};

// Time the union covers within [begin, end).
int64_t Covered(const Intervals& merged, int64_t begin, int64_t end);
// The time a union covers.
int64_t Total(const Intervals& merged);
// The union of two lists sorted by begin (each may overlap itself), in one
// pass: no sort.
Intervals Join(const Intervals& a, const Intervals& b);
// Two unions (sorted, disjoint): their intersection, and a without b.
Intervals Intersect(const Intervals& a, const Intervals& b);
Intervals Subtract(const Intervals& a, const Intervals& b);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_INTERVALS_H_
