// Compiles a NetworkSpec into oneDNN primitives on the CPU: convolutions pick
// their preferred (blocked) layouts and every other layer works in the layout
// it receives, so activations stay blocked from the first convolution to the
// classifier with no reorders in between (--layout nchw|nhwc forces a plain
// layout instead, to measure the difference). Batch norm and residual adds fuse
// the ReLU that follows them. Tensors are allocated through the Device while
// they are alive: activations from the forward pass until the backward pass
// has used them, so the accounting shows steady memory (weights, gradients,
// momentum) against the peak of a training step.
#ifndef OPSCOPE_DEVICES_CPU_ONEDNN_NETWORK_H_
#define OPSCOPE_DEVICES_CPU_ONEDNN_NETWORK_H_

#include <memory>
#include <oneapi/dnnl/dnnl.hpp>

#include "devices/device.h"
#include "devices/network.h"

namespace opscope::devices::cpu {

std::unique_ptr<Network> CreateOnednnNetwork(Device& device, dnnl::engine& engine,
                                             dnnl::stream& stream, const NetworkSpec& spec,
                                             const NetworkOptions& options);

}  // namespace opscope::devices::cpu

#endif  // OPSCOPE_DEVICES_CPU_ONEDNN_NETWORK_H_
