// Medians: of integers in integer arithmetic (the same on every machine), and
// of values as doubles.
#ifndef OPSCOPE_ANALYZE_MEDIAN_H_
#define OPSCOPE_ANALYZE_MEDIAN_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace opscope::analyze {

// The middle value; for an even count the mean of the middle two, rounded
// down (computed without overflow); 0 for none.
inline int64_t IntegerMedian(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

// The middle value; for an even count the mean of the middle two; 0 for none.
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
// The same of integers, each taken as a double.
inline double Median(const std::vector<int64_t>& v) {
  return Median(std::vector<double>(v.begin(), v.end()));
}

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_MEDIAN_H_
