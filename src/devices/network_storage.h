// Device memory of a network, counted by what it holds: the NetworkMemory
// breakdown every backend reports. Allocations go through the Device, so its
// own accounting (current and peak bytes) stays the memory figure.
#ifndef OPSCOPE_DEVICES_NETWORK_STORAGE_H_
#define OPSCOPE_DEVICES_NETWORK_STORAGE_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "devices/device.h"
#include "devices/network.h"

namespace opscope::devices {

enum class NetworkPool { kParameters, kBuffers, kGradients, kOptimizer, kActivations, kWorkspace };

class NetworkStorage {
 public:
  explicit NetworkStorage(Device& device) : device_(device) {}
  void* Allocate(NetworkPool pool, size_t bytes) {
    void* p = device_.Allocate(bytes);
    current_[Index(pool)] += bytes;
    peak_[Index(pool)] = std::max(peak_[Index(pool)], current_[Index(pool)]);
    return p;
  }
  void Free(NetworkPool pool, void* p, size_t bytes) {
    if (p == nullptr) return;
    device_.Free(p);
    current_[Index(pool)] -= bytes;
  }
  uint64_t current(NetworkPool pool) const { return current_[Index(pool)]; }
  uint64_t peak(NetworkPool pool) const { return peak_[Index(pool)]; }
  void ResetPeak() { peak_ = current_; }

  NetworkMemory Memory() const {
    using enum NetworkPool;
    NetworkMemory m;
    m.parameters = current(kParameters);
    m.buffers = current(kBuffers);
    m.gradients = current(kGradients);
    m.optimizer_state = current(kOptimizer);
    m.activations = current(kActivations);
    m.activations_peak = peak(kActivations);
    m.workspace = current(kWorkspace);
    m.workspace_peak = peak(kWorkspace);
    return m;
  }

 private:
  static size_t Index(NetworkPool pool) { return static_cast<size_t>(pool); }
  Device& device_;
  std::array<uint64_t, 6> current_{}, peak_{};
};

}  // namespace opscope::devices

#endif  // OPSCOPE_DEVICES_NETWORK_STORAGE_H_
