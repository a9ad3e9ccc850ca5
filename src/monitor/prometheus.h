// Prometheus text exposition (format 0.0.4) of samples: HELP and TYPE lines, one
// group per metric name, names prefixed "opscope_", counters suffixed "_total",
// label values escaped. Metrics without a value are exported as
// opscope_metric_unavailable{metric=...,reason=...} 1, never as 0.
#ifndef OPSCOPE_MONITOR_PROMETHEUS_H_
#define OPSCOPE_MONITOR_PROMETHEUS_H_

#include <string>
#include <vector>

#include "monitor/sampler.h"

namespace opscope::monitor {

std::string ToPrometheusText(const std::vector<Metric>& metrics, double collect_seconds);

}  // namespace opscope::monitor

#endif  // OPSCOPE_MONITOR_PROMETHEUS_H_
