// Analysis pass "first_calls" (first_calls.cc): first calls of a framework
// operator that cost far more than its later calls, one-off first-use work
// inside the diagnosed window. Its result, for the findings that name an
// operator's time (the step-time diagnosis says which part of it was first
// calls).
#ifndef OPSCOPE_ANALYZE_PASSES_FIRST_CALLS_H_
#define OPSCOPE_ANALYZE_PASSES_FIRST_CALLS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::analyze {

inline constexpr std::string_view kFirstCallsPass = "first_calls";

struct FirstCall {
  std::string name, shapes;
  int64_t calls = 0;
  int64_t first_ns = 0, later_median_ns = 0;
  int64_t start_ns = 0;
};

struct FirstCalls {
  std::vector<FirstCall> calls;  // innermost first calls, the largest excess first
  int64_t ns = 0;                // the union of every qualifying first call
  int64_t window_ns = 0;
  int64_t complete_steps = 0;  // 0: the window is the trace's span
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_FIRST_CALLS_H_
