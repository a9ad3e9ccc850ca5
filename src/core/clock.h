// Clocks. Hot paths read raw ticks (the TSC on x86-64, monotonic nanoseconds
// elsewhere); TickConverter maps them onto CLOCK_MONOTONIC nanoseconds with a
// two-point calibration whose span grows over the life of the process.
#ifndef OPSCOPE_CORE_CLOCK_H_
#define OPSCOPE_CORE_CLOCK_H_

#include <cstdint>

namespace opscope::core {

int64_t MonotonicNs();
int64_t RealtimeNs();

class TickConverter {
 public:
  // Calibrates against the process-wide anchor taken on first use; waits until at
  // least a millisecond separates the two points so the rate is precise.
  static TickConverter Calibrate();

  int64_t ToMonotonicNs(uint64_t ticks) const {
    const double delta = static_cast<double>(static_cast<int64_t>(ticks - anchor_ticks_));
    return anchor_ns_ + static_cast<int64_t>(delta * ns_per_tick_);
  }
  double ns_per_tick() const { return ns_per_tick_; }

 private:
  uint64_t anchor_ticks_ = 0;
  int64_t anchor_ns_ = 0;
  double ns_per_tick_ = 1.0;
};

// Touches the anchor so that later calibrations span a longer interval.
void InitClockAnchor();

}  // namespace opscope::core

#endif  // OPSCOPE_CORE_CLOCK_H_
