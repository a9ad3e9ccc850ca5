// The steps that describe a device and its load: `opscope info` (properties,
// theoretical peaks and how they were derived), `opscope smi` (a snapshot of
// the load of every device), `opscope bw` (bandwidth over a size sweep) and
// `opscope monitor` (idle vs under load).
#ifndef OPSCOPE_SUITE_DEVICE_STEPS_H_
#define OPSCOPE_SUITE_DEVICE_STEPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "devices/device.h"
#include "monitor/load_comparison.h"
#include "suite/step.h"
#include "workloads/runner.h"

namespace opscope::suite {

StepOutput DeviceInfo(const devices::Device& device);

struct SnapshotOptions {
  std::string devices = "all";  // "cpu", "cuda:N" or "all"
  int pid = 0;                  // whose resident memory to report (0: this process)
};
// Samples twice, 200 ms apart (rates need an interval).
StepOutput LoadSnapshot(const SnapshotOptions& options);

struct BandwidthOptions {
  std::vector<std::string> types{"d2d", "h2d", "d2h", "bidir"};
  std::string sizes = "4K..1G";  // 4K..1G (powers of four) or a list like 64K,1M
  int min_reps = 10;
  double min_time_ms = 100;
  double max_time_ms = -1;  // not given: the runner's 15 s
};
// Throws Error(kInvalidArgument) for an unknown transfer type or size.
StepOutput Bandwidth(devices::Device& device, const BandwidthOptions& options);

struct MonitorOptions {
  monitor::LoadComparisonOptions comparison;
  std::string workload = "matmul:2048";  // the built-in workload, when no command is given
  std::vector<std::string> command;      // a program to run and watch instead
};
// `device` runs the built-in workload; it may be null when a command is given.
StepOutput Monitor(devices::Device* device, const MonitorOptions& options);

}  // namespace opscope::suite

#endif  // OPSCOPE_SUITE_DEVICE_STEPS_H_
