#include "suite/resnet50.h"

#include <fmt/format.h>

#include <map>

#include "core/text.h"

namespace opscope::suite {
namespace {

using report::Unit;
using report::Value;

}  // namespace

StepOutput ResNet50(const DeviceOpener& open, const ResNet50StepOptions& options) {
  if (!options.network.trace_path.empty() && options.thread_counts.size() > 1) {
    throw Error(ErrorCode::kInvalidArgument,
                "--trace records one run: give it without --threads-sweep");
  }
  std::vector<workloads::ResNetResult> results;
  std::string device_id, used_layout;
  workloads::ResNetOptions network = options.network;
  for (const int threads : options.thread_counts) {
    auto device = open(threads);
    device_id = device->properties().id;
    if (!device->properties().capabilities.has_networks) {
      throw Error(ErrorCode::kUnsupported, device_id + " has no network layers in this build");
    }
    network.layout = options.layout.value_or(device->properties().capabilities.network_layout);
    used_layout = devices::Name(network.layout);
    results.push_back(workloads::RunResNet50(*device, network));
  }
  const std::string what =
      fmt::format("ResNet-50 v1.5 {} on {}, batch {}, {}x{}, {}, {} layout",
                  network.training ? "training" : "inference", device_id, network.shape.batch,
                  network.shape.image_size, network.shape.image_size, devices::Name(network.dtype),
                  used_layout);

  report::ResultTable time;
  time.section = "resnet50";
  time.title = what + ": time per iteration";
  time.columns = {
      {"threads", "Threads"},
      {"parameters", "Parameters", 0, false},
      {.key = "forward_ns",
       .header = "Forward ms",
       .precision = 2,
       .unit = Unit::kTime,
       .scale = 1e6},
      {.key = "backward_ns",
       .header = "Backward ms",
       .precision = 2,
       .unit = Unit::kTime,
       .scale = 1e6},
      {.key = "optimizer_ns",
       .header = "Optimizer ms",
       .precision = 2,
       .unit = Unit::kTime,
       .scale = 1e6},
      {.key = "iteration_ns",
       .header = "Iteration ms",
       .precision = 2,
       .unit = Unit::kTime,
       .scale = 1e6},
      {.key = "iteration_p10_ns",
       .header = "p10 ms",
       .precision = 2,
       .unit = Unit::kTime,
       .scale = 1e6},
      {.key = "iteration_p90_ns",
       .header = "p90 ms",
       .precision = 2,
       .unit = Unit::kTime,
       .scale = 1e6},
      {"images_per_s", "Images/s", 1},
      {"images_per_s_p10", "Images/s p10", 1},
      {"images_per_s_p90", "Images/s p90", 1},
      {.key = "spread_pct", .header = "Spread %", .precision = 1, .unit = Unit::kPercent},
      {"flags", "Flags"},
      {.key = "first_iteration_ns",
       .header = "First ms",
       .precision = 1,
       .unit = Unit::kTime,
       .scale = 1e6},
      {"loss_first", "Loss first", 4, false},
      {"loss_last", "Loss last", 4, false},
      {"layout_conversions", "Reorders/iter"}};
  bool any_noisy = false;
  for (const auto& r : results) {
    // The iterations' p10-p90 spread over their median (workloads::kNoisySpread).
    const double spread =
        r.iteration.p50_ms > 0 ? (r.iteration.p90_ms - r.iteration.p10_ms) / r.iteration.p50_ms : 0;
    const bool noisy = spread > workloads::kNoisySpread;
    any_noisy |= noisy;
    time.AddRow({int64_t{r.threads}, r.parameters, r.forward.p50_ms,
                 network.training ? Value{r.backward.p50_ms} : Value{},
                 network.training ? Value{r.optimizer.p50_ms} : Value{}, r.iteration.p50_ms,
                 r.iteration.p10_ms, r.iteration.p90_ms, r.images_per_second.p50_ms,
                 r.images_per_second.p10_ms, r.images_per_second.p90_ms, 100 * spread,
                 noisy ? "noisy" : "", r.first_iteration_ms, static_cast<double>(r.first_loss),
                 static_cast<double>(r.last_loss), r.layout_conversions});
  }
  if (any_noisy) {
    time.notes.push_back(fmt::format(
        "noisy: the iterations' p10-p90 spread exceeds {:.0f}% of the median (the machine was "
        "busy, or too few iterations: raise --iters)",
        100 * workloads::kNoisySpread));
  }
  time.notes.push_back(fmt::format(
      "Medians of {} iterations after {} warm-up iterations (and the first, timed apart); "
      "the device is synchronized before every clock read. Images/s p10 comes from the p90 "
      "iteration time.",
      network.iters, network.warmup));
  if (!results.empty() && results[0].layout_conversions > 0 && used_layout == "blocked") {
    time.notes.push_back(
        "Reorders/iter counts layout conversions of activations and gradients; the network "
        "input (NCHW) is converted once to the first convolution's layout.");
  }

  const workloads::ResNetResult& r = results.back();
  report::ResultTable memory;
  memory.section = "resnet50_memory";
  memory.title = what + fmt::format(": memory ({} threads), from the device allocator's accounting",
                                    r.threads);
  memory.columns = {{"what", "What"}, {.key = "bytes", .header = "Size", .unit = Unit::kBytes}};
  const auto row = [&](const std::string& name, uint64_t bytes) {
    memory.AddRow({name, static_cast<int64_t>(bytes)});
  };
  row("parameters (fp32)", r.memory.parameters);
  row("buffers (BN running statistics, low-precision weight copies)", r.memory.buffers);
  row("gradients", r.memory.gradients);
  row("optimizer state (SGD momentum)", r.memory.optimizer_state);
  row("steady: held between iterations", r.steady_bytes);
  row("activations at peak", r.memory.activations_peak);
  row("workspace at peak", r.memory.workspace_peak);
  row("total peak", r.peak_bytes);
  if (r.steady_bytes > 0) {
    memory.notes.push_back(fmt::format(
        "Peak is {:.1f}x steady and {:.1f}x the weights alone. {}",
        static_cast<double>(r.peak_bytes) / static_cast<double>(r.steady_bytes),
        r.memory.parameters > 0
            ? static_cast<double>(r.peak_bytes) / static_cast<double>(r.memory.parameters)
            : 0.0,
        network.training
            ? "A training iteration keeps every layer's input (and the BN and pooling masks) "
              "from the forward pass until the backward pass has used it: activations grow "
              "with the batch and the image, weights do not."
            : "Inference frees each activation as soon as the next layers have read it."));
  }
  if (!r.trace_file.empty()) {
    memory.notes.push_back("Wrote the per-operator trace of the measured iterations to " +
                           core::EscapeForTerminal(r.trace_file) + " (opscope analyze reads it).");
  }
  report::ResultTable impls;
  impls.section = "resnet50_implementations";
  impls.title = "Implementation of each layer's forward primitive";
  impls.columns = {{"layer", "Layer"}, {"implementation", "Implementation"}};
  std::map<std::string, int> counts;
  for (const auto& line : r.implementations) {
    const auto colon = line.find(": ");
    ++counts[line.substr(colon + 2)];
  }
  for (const auto& [impl, n] : counts) impls.AddRow({fmt::format("{} layers", n), impl});
  return {{time, memory, impls}, ""};
}

}  // namespace opscope::suite
