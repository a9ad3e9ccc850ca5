// Samplers read device load. Each Sample() reports gauges now and rates over the
// time since the previous call. A metric that cannot be read here carries the
// reason instead of a value: it is shown as n/a, never as 0.
#ifndef OPSCOPE_MONITOR_SAMPLER_H_
#define OPSCOPE_MONITOR_SAMPLER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace opscope::monitor {

enum class MetricKind { kGauge, kCounter };

struct Metric {
  std::string name;  // snake_case with its unit: "cpu_utilization_percent"
  std::string help;
  std::string unit;  // for display: "%", "bytes", "MHz", "W", "C", "J", "B/s"
  MetricKind kind = MetricKind::kGauge;
  std::vector<std::pair<std::string, std::string>> labels;  // "device" first
  std::optional<double> value;
  std::string unavailable;  // why there is no value
  std::string note;         // a caveat about the value, for display

  // What is measured: "cpu_utilization_percent{core=1}", without the labels
  // that say whose it is (the device, a process id), so one metric keeps one
  // key whichever process it is read for.
  std::string Key() const;
  // Those labels but the device: "pid=4242"; "" when there are none.
  std::string Owner() const;
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  virtual std::string device() const = 0;  // "cpu", "cuda:0"
  virtual std::string description() const = 0;
  virtual std::vector<Metric> Sample() = 0;
  // Which process per-process metrics describe (0: this one); others ignore it.
  virtual void TargetProcess(int) {}
};

// The samplers of the devices present ("all"), or of one device ("cpu",
// "cuda:0"). `notes` receives a line per backend that has no device here (e.g.
// "nvidia: no NVIDIA driver ..."). `pid` is the process whose memory the CPU
// sampler reports (0: this process).
std::vector<std::unique_ptr<Sampler>> OpenSamplers(const std::string& which, int pid,
                                                   std::vector<std::string>& notes);

}  // namespace opscope::monitor

#endif  // OPSCOPE_MONITOR_SAMPLER_H_
