#include "workloads/resnet50.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "opscope/opscope.h"

namespace opscope::workloads {

using devices::LayerKind;
using devices::LayerSpec;
using devices::NetworkSpec;

NetworkSpec ResNet50Spec(const ResNetShape& shape) {
  NetworkSpec spec;
  spec.batch = shape.batch;
  spec.channels = 3;
  spec.height = spec.width = shape.image_size;
  auto& layers = spec.layers;
  const auto add = [&](LayerSpec layer) {
    layers.push_back(std::move(layer));
    return static_cast<int>(layers.size()) - 1;
  };
  const auto conv = [&](const std::string& name, int input, int64_t channels, int64_t kernel,
                        int64_t stride, int64_t pad) {
    return add({LayerKind::kConv, name, {input}, channels, kernel, stride, pad});
  };
  const auto bn = [&](const std::string& name, int input, bool relu) {
    LayerSpec l{LayerKind::kBatchNorm, name, {input}};
    l.relu = relu;
    return add(l);
  };
  int x = conv("conv1", -1, shape.width, 7, 2, 3);
  x = bn("bn1", x, true);
  x = add({LayerKind::kMaxPool, "maxpool", {x}, 0, 3, 2, 1});
  int64_t width = shape.width;
  for (size_t stage = 0; stage < shape.blocks.size(); ++stage) {
    for (int block = 0; block < shape.blocks[stage]; ++block) {
      const std::string prefix = fmt::format("layer{}.{}.", stage + 1, block);
      // torchvision's Bottleneck (v1.5): the stride sits on the 3x3 convolution.
      const int64_t stride = stage > 0 && block == 0 ? 2 : 1;
      const int identity_in = x;
      int y = conv(prefix + "conv1", x, width, 1, 1, 0);
      y = bn(prefix + "bn1", y, true);
      y = conv(prefix + "conv2", y, width, 3, stride, 1);
      y = bn(prefix + "bn2", y, true);
      y = conv(prefix + "conv3", y, 4 * width, 1, 1, 0);
      y = bn(prefix + "bn3", y, false);
      int identity = identity_in;
      if (block == 0) {
        identity = conv(prefix + "downsample.0", identity_in, 4 * width, 1, stride, 0);
        identity = bn(prefix + "downsample.1", identity, false);
      }
      LayerSpec sum{LayerKind::kAdd, prefix + "add", {y, identity}};
      sum.relu = true;
      x = add(sum);
    }
    width *= 2;
  }
  x = add({LayerKind::kGlobalAvgPool, "avgpool", {x}});
  x = add({LayerKind::kLinear, "fc", {x}, shape.classes});
  if (shape.loss) add({LayerKind::kSoftmaxCrossEntropy, "loss", {x}});
  return spec;
}

namespace {

PhaseStats Phase(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {Percentile(ms, 0.1), Percentile(ms, 0.5), Percentile(ms, 0.9)};
}

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

ResNetResult RunResNet50(devices::Device& device, const ResNetOptions& options) {
  if (options.iters < 1 || options.iters > 100000 || options.warmup < 0 ||
      options.warmup > 100000) {
    throw Error(ErrorCode::kInvalidArgument, "--iters must be 1..100000 and --warmup 0..100000");
  }
  const ResNetShape& shape = options.shape;
  if (shape.batch < 1 || shape.batch > 4096 || shape.image_size < 32 || shape.image_size > 4096) {
    throw Error(ErrorCode::kInvalidArgument,
                "--batch must be 1..4096 and --image-size 32..4096 (ResNet-50 divides it by 32)");
  }
  devices::NetworkOptions net_options;
  net_options.training = options.training;
  net_options.dtype = options.dtype;
  net_options.layout = options.layout;
  const uint64_t before = device.memory_stats().current_bytes;
  auto net = device.CreateNetwork(ResNet50Spec(shape), net_options);

  // Fresh random data: normalized images, labels spread over the classes.
  std::mt19937_64 rng(42);
  std::normal_distribution<float> pixel(0.f, 1.f);
  std::vector<float> images(
      static_cast<size_t>(shape.batch * 3 * shape.image_size * shape.image_size));
  for (auto& v : images) v = pixel(rng);
  std::vector<int32_t> labels(static_cast<size_t>(shape.batch));
  for (auto& l : labels) l = static_cast<int32_t>(rng() % static_cast<uint64_t>(shape.classes));
  net->SetInput(images.data(), labels.data());

  ResNetResult result;
  result.threads = device.properties().compute_units;
  result.parameters = net->ParameterCount();
  std::vector<double> forward, backward, optimizer, iteration;
  const auto run = [&](bool measured) {
    device.Synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    net->Forward();
    device.Synchronize();
    const double f = Since(t0);
    double b = 0, u = 0;
    if (options.training) {
      const auto t1 = std::chrono::steady_clock::now();
      net->Backward();
      device.Synchronize();
      b = Since(t1);
      const auto t2 = std::chrono::steady_clock::now();
      net->Update();
      device.Synchronize();
      u = Since(t2);
    }
    const double total = Since(t0);
    if (measured) {
      forward.push_back(f), backward.push_back(b), optimizer.push_back(u);
      iteration.push_back(total);
    }
    return total;
  };
  result.first_iteration_ms = run(false);
  result.first_loss = net->Loss();
  for (int i = 0; i < options.warmup; ++i) run(false);

  std::optional<Profiler> profiler;
  if (!options.trace_path.empty()) {
    ProfilerOptions p;
    p.record_shapes = true;
    p.process_name = "opscope bench resnet50";
    // Device work too, linked to the layer calls that launched it.
    for (const Activity a : device.properties().capabilities.trace_activities) {
      if (std::find(p.activities.begin(), p.activities.end(), a) == p.activities.end()) {
        p.activities.push_back(a);
      }
    }
    p.on_trace_ready = [&](TraceData& trace) {
      trace.Export(options.trace_path);
      result.trace_file = options.trace_path;
    };
    profiler.emplace(p);
    profiler->Start();
  }
  net->ResetPeakMemory();
  device.ResetPeakMemory();
  const uint64_t conversions_before = net->LayoutConversions();
  for (int i = 0; i < options.iters; ++i) {
    run(true);
    if (profiler) profiler->Step();
  }
  if (profiler) profiler->Stop();
  result.layout_conversions =
      (net->LayoutConversions() - static_cast<int64_t>(conversions_before)) / options.iters;
  result.last_loss = net->Loss();
  result.forward = Phase(forward);
  result.backward = Phase(backward);
  result.optimizer = Phase(optimizer);
  result.iteration = Phase(iteration);
  const double b = static_cast<double>(shape.batch) * 1e3;
  result.images_per_second = {b / result.iteration.p90_ms, b / result.iteration.p50_ms,
                              b / result.iteration.p10_ms};
  result.memory = net->Memory();
  const auto stats = device.memory_stats();
  result.steady_bytes = stats.current_bytes - before;
  result.peak_bytes = stats.peak_bytes - before;
  result.implementations = net->Implementations();
  return result;
}

}  // namespace opscope::workloads
