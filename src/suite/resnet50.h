// `opscope bench resnet50` as a step: ResNet-50 training (or inference) on a
// device, per-phase time, images/s, memory from the device's accounting, the
// implementation of each layer; optionally over several thread counts.
#ifndef OPSCOPE_SUITE_RESNET50_H_
#define OPSCOPE_SUITE_RESNET50_H_

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "devices/device.h"
#include "suite/step.h"
#include "workloads/resnet50.h"

namespace opscope::suite {

struct ResNet50StepOptions {
  workloads::ResNetOptions network;       // its layout is replaced unless `layout` is set
  std::optional<devices::Layout> layout;  // empty: the device's own choice
  std::vector<int> thread_counts{0};      // one run per count (0: all CPUs)
};

// Opens the device for a thread count.
using DeviceOpener = std::function<std::unique_ptr<devices::Device>(int threads)>;

// Throws Error(kInvalidArgument) when a trace is asked for over several thread counts.
StepOutput ResNet50(const DeviceOpener& open, const ResNet50StepOptions& options);

}  // namespace opscope::suite

#endif  // OPSCOPE_SUITE_RESNET50_H_
