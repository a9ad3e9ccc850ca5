#include "monitor/watch.h"

#include <chrono>
#include <cmath>
#include <thread>

#include "core/clock.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::monitor {

int64_t ParseDurationNs(const std::string& text, const std::string& option) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  const std::string number = text.substr(0, i), unit = text.substr(i);
  double value = -1;
  try {
    if (!number.empty()) value = std::stod(number);
  } catch (const std::exception&) {
    value = -1;
  }
  double scale = 0;
  if (unit == "ns") scale = 1;
  if (unit == "us") scale = 1e3;
  if (unit == "ms") scale = 1e6;
  if (unit == "s" || unit.empty()) scale = 1e9;
  if (unit == "m" || unit == "min") scale = 60e9;
  if (unit == "h") scale = 3600e9;
  if (unit == "d") scale = 86400e9;
  if (!(value > 0) || scale == 0 || value * scale > 1e9 * 86400 * 365) {
    throw Error(
        ErrorCode::kInvalidArgument,
        option + " '" + core::EscapeForTerminal(text) +
            "': expected a positive duration up to a year, in ns, us, ms, s (the default), m, h "
            "or d, such as 100ms, 1s, 2m or 1h");
  }
  return static_cast<int64_t>(std::llround(value * scale));
}

Reading ReadAll(std::vector<std::unique_ptr<Sampler>>& samplers, int64_t index) {
  Reading r;
  r.index = index;
  r.monotonic_ns = core::MonotonicNs();
  r.unix_ns = core::RealtimeNs();
  for (auto& sampler : samplers) {
    auto metrics = sampler->Sample();
    r.metrics.insert(r.metrics.end(), std::make_move_iterator(metrics.begin()),
                     std::make_move_iterator(metrics.end()));
  }
  r.cost_us = static_cast<double>(core::MonotonicNs() - r.monotonic_ns) / 1e3;
  return r;
}

void Watch(std::vector<std::unique_ptr<Sampler>>& samplers, int64_t interval_ns, int64_t count,
           const std::atomic<bool>& stop, const std::function<void(const Reading&)>& on_reading) {
  const int64_t start = core::MonotonicNs();
  for (int64_t k = 1; count == 0 || k <= count; ++k) {
    const int64_t due = start + k * interval_ns;
    // Sleep in short steps so that `stop` is noticed promptly.
    while (!stop.load()) {
      const int64_t left = due - core::MonotonicNs();
      if (left <= 0) break;
      std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(left, 50000000)));
    }
    if (stop.load()) return;
    on_reading(ReadAll(samplers, k));
  }
}

}  // namespace opscope::monitor
