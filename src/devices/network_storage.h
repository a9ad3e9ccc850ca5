// What every backend's network shares: device memory counted by what it holds
// (the NetworkMemory breakdown; allocations go through the Device, so its own
// accounting stays the memory figure), and the lookups behind the parameter
// accessors.
#ifndef OPSCOPE_DEVICES_NETWORK_STORAGE_H_
#define OPSCOPE_DEVICES_NETWORK_STORAGE_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "devices/device.h"
#include "devices/network.h"
#include "opscope/opscope.h"

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

// Throws Error(kInvalidArgument) unless `layer` indexes `layers`.
template <typename Layers>
void CheckLayerIndex(const Layers& layers, int layer) {
  if (layer < 0 || layer >= static_cast<int>(layers.size())) {
    throw Error(ErrorCode::kInvalidArgument, "no layer " + std::to_string(layer));
  }
}

// The parameter of `kind` of a layer (layers hold `params` with a `kind`, and a
// `spec`); throws Error(kInvalidArgument) naming the layer when it has none.
template <typename Layers>
const auto& FindLayerParam(const Layers& layers, int layer, ParamKind kind) {
  CheckLayerIndex(layers, layer);
  for (const auto& p : layers[layer].params) {
    if (p.kind == kind) return p;
  }
  throw Error(ErrorCode::kInvalidArgument, "layer " + std::to_string(layer) + " (" +
                                               layers[layer].spec.name + ") has no such parameter");
}

}  // namespace opscope::devices

#endif  // OPSCOPE_DEVICES_NETWORK_STORAGE_H_
