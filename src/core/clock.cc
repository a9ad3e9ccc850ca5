#include "core/clock.h"

#include <time.h>

#include "opscope/opscope.h"

namespace opscope::core {
namespace {

struct Point {
  uint64_t ticks;
  int64_t ns;
};

// Reads ticks and nanoseconds as close together as the machine allows: the pair
// with the shortest tick window out of a few tries.
Point ReadPoint() {
  Point best{};
  uint64_t best_window = ~uint64_t{0};
  for (int i = 0; i < 5; ++i) {
    const uint64_t before = detail::Ticks();
    const int64_t ns = MonotonicNs();
    const uint64_t after = detail::Ticks();
    if (after - before < best_window) {
      best_window = after - before;
      best = Point{before + (after - before) / 2, ns};
    }
  }
  return best;
}

const Point& Anchor() {
  static const Point anchor = ReadPoint();
  return anchor;
}

}  // namespace

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void InitClockAnchor() { static_cast<void>(Anchor()); }

TickConverter TickConverter::Calibrate() {
  const Point& anchor = Anchor();
  TickConverter converter;
  converter.anchor_ticks_ = anchor.ticks;
  converter.anchor_ns_ = anchor.ns;
#if defined(__x86_64__) || defined(_M_X64)
  constexpr int64_t kMinSpanNs = 1000000;
  while (MonotonicNs() - anchor.ns < kMinSpanNs) {
  }
  const Point now = ReadPoint();
  converter.ns_per_tick_ =
      static_cast<double>(now.ns - anchor.ns) / static_cast<double>(now.ticks - anchor.ticks);
#else
  converter.ns_per_tick_ = 1.0;
#endif
  return converter;
}

}  // namespace opscope::core
