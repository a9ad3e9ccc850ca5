// ResNet-50 v1.5 exactly as torchvision defines it (the stride on the 3x3
// convolution of each bottleneck), described once as a NetworkSpec, and the
// `opscope bench resnet50` benchmark: forward, backward and optimizer time of
// a training iteration (or forward time for inference), images per second, and
// memory from the device allocator's accounting.
#ifndef OPSCOPE_WORKLOADS_RESNET50_H_
#define OPSCOPE_WORKLOADS_RESNET50_H_

#include <cstdint>
#include <string>
#include <vector>

#include "devices/device.h"
#include "devices/network.h"
#include "workloads/runner.h"

namespace opscope::workloads {

struct ResNetShape {
  int64_t batch = 8;
  int64_t image_size = 224;
  int64_t classes = 1000;
  // Bottlenecks per stage (3, 4, 6, 3 for ResNet-50) and the first stage's
  // width (64); tests shrink both.
  std::vector<int> blocks{3, 4, 6, 3};
  int64_t width = 64;
  bool loss = true;  // end in softmax cross-entropy
};

devices::NetworkSpec ResNet50Spec(const ResNetShape& shape = {});

struct ResNetOptions {
  ResNetShape shape;
  bool training = true;
  devices::DType dtype = devices::DType::kF32;
  devices::Layout layout = devices::Layout::kBlocked;
  int warmup = 2;
  int iters = 10;
  std::string trace_path;  // a Chrome trace of the measured iterations, when set
};

struct PhaseStats {
  double p10_ms = 0, p50_ms = 0, p90_ms = 0;
};

struct ResNetResult {
  int threads = 0;
  int64_t parameters = 0;
  double first_iteration_ms = 0;  // allocation, primitive JIT, page faults
  PhaseStats forward, backward, optimizer, iteration;
  PhaseStats images_per_second;  // p10 from the p90 iteration time, and so on
  float first_loss = 0, last_loss = 0;
  devices::NetworkMemory memory;
  uint64_t steady_bytes = 0;       // held between iterations (device accounting)
  uint64_t peak_bytes = 0;         // the device's peak during the measured iterations
  int64_t layout_conversions = 0;  // reorders per measured iteration
  std::vector<std::string> implementations;
  std::string trace_file;
};

// Runs warm-up then measured iterations on `device`, synchronizing before each
// clock read. Fresh random images and labels (never zeros), fixed per run.
ResNetResult RunResNet50(devices::Device& device, const ResNetOptions& options);

}  // namespace opscope::workloads

#endif  // OPSCOPE_WORKLOADS_RESNET50_H_
