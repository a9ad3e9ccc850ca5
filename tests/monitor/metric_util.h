// Helpers shared by the monitor tests.
#ifndef OPSCOPE_TESTS_MONITOR_METRIC_UTIL_H_
#define OPSCOPE_TESTS_MONITOR_METRIC_UTIL_H_

#include <map>
#include <string>
#include <vector>

#include "monitor/sampler.h"

namespace opscope::monitor {

// Metrics by "<device> <key>", e.g. "cpu cpu_utilization_percent{core=1}".
inline std::map<std::string, Metric> ByKey(const std::vector<Metric>& metrics) {
  std::map<std::string, Metric> out;
  for (const auto& m : metrics) out[m.labels[0].second + " " + m.Key()] = m;
  return out;
}

}  // namespace opscope::monitor

#endif  // OPSCOPE_TESTS_MONITOR_METRIC_UTIL_H_
