// Sampling on a fixed schedule: sample k is taken at start + k * interval (no
// drift), and the cost of each sample is measured.
#ifndef OPSCOPE_MONITOR_WATCH_H_
#define OPSCOPE_MONITOR_WATCH_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "monitor/sampler.h"

namespace opscope::monitor {

// "100ms", "1s", "1.5s", "500us", "2m"; throws Error(kInvalidArgument) naming `option`.
int64_t ParseDurationNs(const std::string& text, const std::string& option);

struct Reading {
  int64_t index = 0;
  int64_t monotonic_ns = 0;  // when the sample was taken
  int64_t unix_ns = 0;
  double cost_us = 0;  // how long reading every sampler took
  std::vector<Metric> metrics;
};

// Samples all samplers `count` times (0: until `stop`), every `interval_ns`,
// calling `on_reading` after each.
void Watch(std::vector<std::unique_ptr<Sampler>>& samplers, int64_t interval_ns, int64_t count,
           const std::atomic<bool>& stop, const std::function<void(const Reading&)>& on_reading);

// One reading of all samplers.
Reading ReadAll(std::vector<std::unique_ptr<Sampler>>& samplers, int64_t index = 0);

}  // namespace opscope::monitor

#endif  // OPSCOPE_MONITOR_WATCH_H_
