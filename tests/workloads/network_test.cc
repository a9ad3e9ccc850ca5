// The CPU network layers against an independent double-precision reference:
// forward outputs, backward gradients against finite differences of the
// reference, a whole reduced ResNet, learning, and memory accounting.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "analyze/importer.h"
#include "devices/network_plan.h"
#include "devices/registry.h"
#include "opscope/opscope.h"
#include "test_util.h"
#include "workloads/reference_net.h"
#include "workloads/resnet50.h"

namespace opscope::devices {
namespace {

using testing::ReferenceForward;
using testing::RefParams;

// The device the network tests run on: the CPU, or $OPSCOPE_NETWORK_TEST_DEVICE
// (ctest runs the device-independent ones again with cuda:0).
std::unique_ptr<Device> TestDevice() {
  const char* name = std::getenv("OPSCOPE_NETWORK_TEST_DEVICE");
  if (name == nullptr || *name == 0) return OpenDevice("cpu", DeviceOptions{2});
  return OpenDevice(name);
}

// Declares `device`, or skips the test where the asked-for device is absent.
#define TEST_DEVICE_OR_SKIP(device)                                      \
  std::unique_ptr<Device> device;                                        \
  try {                                                                  \
    device = TestDevice();                                               \
  } catch (const opscope::Error& e) {                                    \
    if (e.code() != ErrorCode::kUnsupported) throw;                      \
    GTEST_SKIP() << "the network test device is not here: " << e.what(); \
  }

std::vector<ParamKind> KindsOf(LayerKind kind) {
  switch (kind) {
    case LayerKind::kConv: return {ParamKind::kWeight};
    case LayerKind::kBatchNorm:
      return {ParamKind::kScale, ParamKind::kShift, ParamKind::kRunningMean,
              ParamKind::kRunningVar};
    case LayerKind::kLinear: return {ParamKind::kWeight, ParamKind::kBias};
    default: return {};
  }
}

bool Trainable(ParamKind kind) {
  return kind != ParamKind::kRunningMean && kind != ParamKind::kRunningVar;
}

RefParams ReadParams(const Network& net, const NetworkSpec& spec) {
  RefParams params;
  for (int i = 0; i < static_cast<int>(spec.layers.size()); ++i) {
    for (const ParamKind kind : KindsOf(spec.layers[i].kind)) {
      std::vector<float> v(static_cast<size_t>(net.ParameterSize(i, kind)));
      net.ReadParameter(i, kind, v.data());
      params[{i, kind}] = std::vector<double>(v.begin(), v.end());
    }
  }
  return params;
}

// Random parameters, so that no layer sits at its initial values (scale 1, shift 0).
void Randomize(Network& net, const NetworkSpec& spec, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.f, 0.5f);
  std::uniform_real_distribution<float> positive(0.5f, 1.5f);
  for (int i = 0; i < static_cast<int>(spec.layers.size()); ++i) {
    for (const ParamKind kind : KindsOf(spec.layers[i].kind)) {
      std::vector<float> v(static_cast<size_t>(net.ParameterSize(i, kind)));
      for (auto& x : v) {
        x = kind == ParamKind::kScale || kind == ParamKind::kRunningVar ? positive(rng)
                                                                        : normal(rng);
      }
      net.WriteParameter(i, kind, v.data());
    }
  }
}

std::vector<float> RandomVector(size_t n, std::mt19937_64& rng, float stddev = 1.f) {
  std::normal_distribution<float> normal(0.f, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

void ExpectNear(double got, double want, double atol, double rtol, const std::string& what) {
  EXPECT_LE(std::abs(got - want), atol + rtol * std::abs(want))
      << what << ": " << got << " vs " << want;
}

// One layer (or a few): forward against the reference, then every input and
// parameter gradient against central differences of the reference in double.
void CheckGradients(const NetworkSpec& spec, const std::string& what) {
  SCOPED_TRACE(what);
  TEST_DEVICE_OR_SKIP(device);
  NetworkOptions options;
  options.input_gradient = true;
  auto net = device->CreateNetwork(spec, options);
  std::mt19937_64 rng(11);
  Randomize(*net, spec, rng);
  const size_t in_n = static_cast<size_t>(spec.batch * spec.channels * spec.height * spec.width);
  const std::vector<float> input = RandomVector(in_n, rng);
  const bool loss = spec.layers.back().kind == LayerKind::kSoftmaxCrossEntropy;
  const int last = static_cast<int>(spec.layers.size()) - 1;
  std::vector<int32_t> labels(static_cast<size_t>(spec.batch));
  for (auto& l : labels) l = static_cast<int32_t>(rng() % 5);
  net->SetInput(input.data(), labels.data());
  net->Forward();

  const RefParams params = ReadParams(*net, spec);
  std::vector<double> x(input.begin(), input.end());
  const auto ref = ReferenceForward(spec, params, x, labels, true);
  std::vector<float> out(ref.outputs.back().v.size());
  net->ReadOutput(last, out.data());
  for (size_t k = 0; k < out.size(); ++k) {
    ExpectNear(out[k], ref.outputs.back().v[k], 1e-4, 1e-4, "output " + std::to_string(k));
  }
  if (loss) ExpectNear(net->Loss(), ref.loss, 1e-5, 1e-5, "loss");

  // L = loss, or sum(output * R) for a random R.
  const std::vector<float> r = loss ? std::vector<float>{} : RandomVector(out.size(), rng);
  net->Backward(loss ? nullptr : r.data());
  const auto objective = [&](const RefParams& p, const std::vector<double>& in) {
    const auto result = ReferenceForward(spec, p, in, labels, true);
    if (loss) return result.loss;
    double sum = 0;
    for (size_t k = 0; k < r.size(); ++k) sum += result.outputs.back().v[k] * r[k];
    return sum;
  };
  const double h = 1e-5;
  std::vector<float> dx(in_n);
  net->ReadInputGradient(dx.data());
  int checked = 0;
  for (size_t k = 0; k < in_n; ++k) {
    std::vector<double> plus = x, minus = x;
    plus[k] += h, minus[k] -= h;
    const double numeric = (objective(params, plus) - objective(params, minus)) / (2 * h);
    ExpectNear(dx[k], numeric, 2e-4, 2e-3, "d/d input " + std::to_string(k));
    ++checked;
  }
  for (const auto& [key, values] : params) {
    if (!Trainable(key.second)) continue;
    std::vector<float> grad(values.size());
    net->ReadGradient(key.first, key.second, grad.data());
    for (size_t k = 0; k < values.size(); ++k) {
      RefParams plus = params, minus = params;
      plus[key][k] += h, minus[key][k] -= h;
      const double numeric = (objective(plus, x) - objective(minus, x)) / (2 * h);
      ExpectNear(grad[k], numeric, 2e-4, 2e-3,
                 spec.layers[key.first].name + " parameter " +
                     std::to_string(static_cast<int>(key.second)) + " element " +
                     std::to_string(k));
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

NetworkSpec Input(int64_t n, int64_t c, int64_t h, int64_t w) {
  NetworkSpec spec;
  spec.batch = n, spec.channels = c, spec.height = h, spec.width = w;
  return spec;
}

TEST(NetworkGradients, Conv2D) {
  NetworkSpec spec = Input(2, 3, 7, 7);
  spec.layers = {{LayerKind::kConv, "conv", {-1}, 5, 3, 2, 1}};
  CheckGradients(spec, "3x3 stride 2 pad 1");
  spec = Input(2, 4, 5, 5);
  spec.layers = {{LayerKind::kConv, "conv", {-1}, 6, 1, 1, 0}};
  CheckGradients(spec, "1x1");
}

TEST(NetworkGradients, BatchNormTrainingWithAndWithoutReLU) {
  NetworkSpec spec = Input(3, 4, 3, 3);
  spec.layers = {{LayerKind::kBatchNorm, "bn", {-1}}};
  CheckGradients(spec, "batch norm");
  spec.layers[0].relu = true;
  CheckGradients(spec, "batch norm + relu");
}

// torch.nn.BatchNorm2d: running = 0.9 running + 0.1 batch, with the unbiased
// batch variance; inference then normalizes with the running statistics.
TEST(NetworkGradients, BatchNormRunningStatisticsFollowTorch) {
  NetworkSpec spec = Input(4, 3, 5, 5);
  spec.layers = {{LayerKind::kBatchNorm, "bn", {-1}}};
  TEST_DEVICE_OR_SKIP(device);
  auto net = device->CreateNetwork(spec, NetworkOptions{});
  const std::vector<float> mean0{0.5f, -1.f, 2.f}, var0{1.5f, 0.25f, 3.f};
  net->WriteParameter(0, ParamKind::kRunningMean, mean0.data());
  net->WriteParameter(0, ParamKind::kRunningVar, var0.data());
  std::mt19937_64 rng(4);
  const std::vector<float> input = RandomVector(4 * 3 * 5 * 5, rng, 2.f);
  net->SetInput(input.data(), nullptr);
  net->Forward();
  std::vector<float> mean(3), var(3);
  net->ReadParameter(0, ParamKind::kRunningMean, mean.data());
  net->ReadParameter(0, ParamKind::kRunningVar, var.data());
  for (int c = 0; c < 3; ++c) {
    double sum = 0, squares = 0;
    for (int b = 0; b < 4; ++b)
      for (int k = 0; k < 25; ++k) sum += input[(b * 3 + c) * 25 + k];
    const double m = sum / 100;
    for (int b = 0; b < 4; ++b)
      for (int k = 0; k < 25; ++k) squares += std::pow(input[(b * 3 + c) * 25 + k] - m, 2);
    ExpectNear(mean[c], 0.9 * mean0[c] + 0.1 * m, 1e-5, 1e-5, "running mean");
    ExpectNear(var[c], 0.9 * var0[c] + 0.1 * squares / 99, 1e-5, 1e-5, "running variance");
  }
}

TEST(NetworkGradients, ReLU) {
  NetworkSpec spec = Input(2, 3, 4, 4);
  spec.layers = {{LayerKind::kRelu, "relu", {-1}}};
  CheckGradients(spec, "relu");
}

TEST(NetworkGradients, MaxPoolAndGlobalAveragePool) {
  NetworkSpec spec = Input(2, 3, 6, 6);
  spec.layers = {{LayerKind::kMaxPool, "maxpool", {-1}, 0, 3, 2, 1}};
  CheckGradients(spec, "max pool 3x3 stride 2 pad 1");
  spec = Input(2, 3, 4, 4);
  spec.layers = {{LayerKind::kGlobalAvgPool, "avgpool", {-1}}};
  CheckGradients(spec, "global average pool");
}

TEST(NetworkGradients, Linear) {
  NetworkSpec spec = Input(3, 5, 1, 1);
  spec.layers = {{LayerKind::kLinear, "fc", {-1}, 4}};
  CheckGradients(spec, "linear");
}

TEST(NetworkGradients, ResidualAddWithAndWithoutReLU) {
  // relu(x) + x: the input's gradient arrives by two paths and is accumulated.
  NetworkSpec spec = Input(2, 3, 4, 4);
  spec.layers = {{LayerKind::kRelu, "relu", {-1}}, {LayerKind::kAdd, "add", {0, -1}}};
  CheckGradients(spec, "add");
  spec.layers[1].relu = true;
  CheckGradients(spec, "add + relu");
}

TEST(NetworkGradients, SoftmaxCrossEntropy) {
  NetworkSpec spec = Input(4, 6, 1, 1);
  spec.layers = {{LayerKind::kLinear, "fc", {-1}, 5},
                 {LayerKind::kSoftmaxCrossEntropy, "loss", {0}}};
  CheckGradients(spec, "linear + softmax cross-entropy");
}

workloads::ResNetShape Tiny() {
  workloads::ResNetShape shape;
  shape.batch = 2;
  shape.image_size = 64;
  shape.classes = 10;
  shape.blocks = {1, 1, 1, 1};
  shape.width = 8;
  return shape;
}

// Every layer of a reduced ResNet (the real topology: bottlenecks, strides on
// the 3x3, downsample branches) in training and in inference mode.
TEST(ResNet, ReducedNetworkForwardMatchesTheNaiveReference) {
  for (const bool training : {true, false}) {
    SCOPED_TRACE(training ? "training" : "inference");
    const NetworkSpec spec = workloads::ResNet50Spec(Tiny());
    TEST_DEVICE_OR_SKIP(device);
    NetworkOptions options;
    options.training = training;
    options.keep_outputs = true;
    auto net = device->CreateNetwork(spec, options);
    std::mt19937_64 rng(5);
    Randomize(*net, spec, rng);
    const std::vector<float> input = RandomVector(
        static_cast<size_t>(spec.batch * spec.channels * spec.height * spec.width), rng);
    const std::vector<int32_t> labels{3, 7};
    net->SetInput(input.data(), labels.data());
    net->Forward();
    const RefParams params = ReadParams(*net, spec);  // (running statistics before this step)
    const auto ref = ReferenceForward(spec, params, std::vector<double>(input.begin(), input.end()),
                                      labels, training);
    for (int i = 0; i < static_cast<int>(spec.layers.size()); ++i) {
      const auto& want = ref.outputs[i].v;
      std::vector<float> got(want.size());
      net->ReadOutput(i, got.data());
      double scale = 1e-6;
      for (const double v : want) scale = std::max(scale, std::abs(v));
      double worst = 0;
      for (size_t k = 0; k < want.size(); ++k) worst = std::max(worst, std::abs(got[k] - want[k]));
      EXPECT_LE(worst / scale, 2e-4)
          << spec.layers[i].name << ": max error " << worst << " at scale " << scale;
    }
    EXPECT_NEAR(net->Loss(), ref.loss, 1e-3 * std::max(1.0, ref.loss));
  }
}

TEST(ResNet, Resnet50HasTorchvisionsParameterCount) {
  workloads::ResNetShape shape;
  shape.batch = 1;
  shape.image_size = 64;  // the count does not depend on the image
  TEST_DEVICE_OR_SKIP(device);
  NetworkOptions options;
  options.training = false;
  auto net = device->CreateNetwork(workloads::ResNet50Spec(shape), options);
  EXPECT_EQ(net->ParameterCount(), 25557032);
}

TEST(ResNet, LossFallsOnAFixedBatch) {
  workloads::ResNetShape shape = Tiny();
  shape.batch = 4;
  shape.image_size = 32;
  shape.width = 64;  // torchvision's widths
  const NetworkSpec spec = workloads::ResNet50Spec(shape);
  TEST_DEVICE_OR_SKIP(device);
  auto net = device->CreateNetwork(spec, NetworkOptions{});
  std::mt19937_64 rng(9);
  const std::vector<float> input =
      RandomVector(static_cast<size_t>(spec.batch * spec.channels * spec.height * spec.width), rng);
  const std::vector<int32_t> labels{1, 4, 7, 9};
  net->SetInput(input.data(), labels.data());
  std::vector<float> losses;
  for (int step = 0; step < 30; ++step) {
    net->Forward();
    losses.push_back(net->Loss());
    net->Backward();
    net->Update();
  }
  ASSERT_TRUE(std::isfinite(losses.back()));
  EXPECT_NEAR(losses.front(), std::log(10.0), 1.0) << "a fresh network guesses";
  // torchvision's ResNet(Bottleneck, [1, 1, 1, 1]) under torch.optim.SGD(lr 0.01,
  // momentum 0.9) goes from 2.02 to 0.0001 in 10 steps on such a batch.
  EXPECT_LT(losses.back(), 0.01 * losses.front())
      << "first " << losses.front() << ", after 10 " << losses[10] << ", last " << losses.back();
}

double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t k = 0; k < a.size(); ++k) dot += a[k] * b[k], na += a[k] * a[k], nb += b[k] * b[k];
  return dot / std::sqrt(na * nb);
}

// bf16 activations and weights (fp32 masters, gradients and statistics): the
// same layers and data give nearly the outputs and gradients of fp32.
TEST(ResNet, Bf16LayersTrackFp32) {
  NetworkSpec spec = Input(4, 3, 32, 32);
  spec.layers = {{LayerKind::kConv, "conv1", {-1}, 16, 7, 2, 3},
                 {LayerKind::kBatchNorm, "bn1", {0}},
                 {LayerKind::kConv, "conv2", {1}, 16, 3, 1, 1}};
  spec.layers[1].relu = true;
  TEST_DEVICE_OR_SKIP(device);
  NetworkOptions bf16_options;
  bf16_options.dtype = DType::kBF16;
  std::unique_ptr<Network> fp32 = device->CreateNetwork(spec, NetworkOptions{}), bf16;
  try {
    bf16 = device->CreateNetwork(spec, bf16_options);
  } catch (const opscope::Error& e) {
    GTEST_SKIP() << "bf16 networks are not available on this CPU: " << e.what();
  }
  for (const auto& [key, values] : ReadParams(*fp32, spec)) {
    const std::vector<float> v(values.begin(), values.end());
    bf16->WriteParameter(key.first, key.second, v.data());
  }
  std::mt19937_64 rng(8);
  const std::vector<float> input = RandomVector(4 * 3 * 32 * 32, rng);
  fp32->SetInput(input.data(), nullptr);
  bf16->SetInput(input.data(), nullptr);
  fp32->Forward();
  bf16->Forward();
  std::vector<float> out32(4 * 16 * 16 * 16), out16(out32.size());
  fp32->ReadOutput(2, out32.data());
  bf16->ReadOutput(2, out16.data());
  EXPECT_GT(Cosine(out32, out16), 0.999);
  const std::vector<float> r = RandomVector(out32.size(), rng);
  fp32->Backward(r.data());
  bf16->Backward(r.data());
  for (const int layer : {0, 2}) {
    std::vector<float> a(static_cast<size_t>(fp32->ParameterSize(layer, ParamKind::kWeight)));
    std::vector<float> b(a.size());
    fp32->ReadGradient(layer, ParamKind::kWeight, a.data());
    bf16->ReadGradient(layer, ParamKind::kWeight, b.data());
    EXPECT_GT(Cosine(a, b), 0.995) << spec.layers[layer].name;
  }
}

TEST(ResNet, Bf16NetworkLearns) {
  workloads::ResNetShape shape = Tiny();
  shape.batch = 4;
  shape.image_size = 32;
  shape.width = 64;
  NetworkOptions options;
  options.dtype = DType::kBF16;
  TEST_DEVICE_OR_SKIP(device);
  std::unique_ptr<Network> net;
  try {
    net = device->CreateNetwork(workloads::ResNet50Spec(shape), options);
  } catch (const opscope::Error& e) {
    GTEST_SKIP() << "bf16 networks are not available on this CPU: " << e.what();
  }
  std::mt19937_64 rng(9);
  const std::vector<float> input = RandomVector(4 * 3 * 32 * 32, rng);
  const std::vector<int32_t> labels{1, 4, 7, 9};
  net->SetInput(input.data(), labels.data());
  std::vector<float> losses;
  for (int step = 0; step < 10; ++step) {
    net->Forward();
    losses.push_back(net->Loss());
    net->Backward();
    net->Update();
  }
  EXPECT_NEAR(losses.front(), std::log(10.0), 1.0);
  EXPECT_LT(losses.back(), 0.1 * losses.front())
      << "first " << losses.front() << ", last " << losses.back();
}

// Between iterations a training network holds its weights (and BN running
// statistics), their gradients and the momentum: nothing else, to the byte.
TEST(ResNet, SteadyMemoryIsWeightsGradientsAndMomentum) {
  workloads::ResNetShape shape;
  shape.batch = 2;
  shape.image_size = 64;
  TEST_DEVICE_OR_SKIP(device);
  const uint64_t before = device->memory_stats().current_bytes;
  {
    auto net = device->CreateNetwork(workloads::ResNet50Spec(shape), NetworkOptions{});
    const int64_t params = net->ParameterCount();
    std::mt19937_64 rng(3);
    const std::vector<float> input = RandomVector(2 * 3 * 64 * 64, rng);
    const std::vector<int32_t> labels{10, 999};
    net->SetInput(input.data(), labels.data());
    for (int step = 0; step < 2; ++step) {
      net->Forward();
      const uint64_t after_forward = device->memory_stats().current_bytes - before;
      net->Backward();
      net->Update();
      const NetworkMemory m = net->Memory();
      const uint64_t steady = device->memory_stats().current_bytes - before;
      const uint64_t bn_channels = 26560;  // ResNet-50's batch-norm channels
      EXPECT_EQ(m.parameters, static_cast<uint64_t>(params) * 4);
      EXPECT_EQ(m.gradients, m.parameters);
      EXPECT_EQ(m.optimizer_state, m.parameters);
      EXPECT_EQ(m.buffers, bn_channels * 2 * 4) << "running mean and variance";
      EXPECT_EQ(m.activations, 0u);
      EXPECT_EQ(m.workspace, 0u);
      EXPECT_EQ(steady, m.parameters + m.gradients + m.optimizer_state + m.buffers);
      EXPECT_GT(after_forward, steady) << "activations are held from forward to backward";
      EXPECT_GT(m.activations_peak, 0u);
    }
  }
  EXPECT_EQ(device->memory_stats().current_bytes, before) << "everything is freed";
}

// --trace: every layer call is an operator with its module, shapes, dtype,
// layout, FLOPs and bytes, inside ProfilerStep spans, and the analyzer reads it.
TEST(ResNet, TraceHasEveryLayerCallAsAnOperator) {
  opscope::testing::TempDir dir;
  workloads::ResNetOptions options;
  options.shape = Tiny();
  options.warmup = 0;
  options.iters = 2;
  options.trace_path = (dir.path() / "resnet.json").string();
  TEST_DEVICE_OR_SKIP(device);
  const workloads::ResNetResult result = workloads::RunResNet50(*device, options);
  ASSERT_EQ(result.trace_file, options.trace_path);
  std::ifstream in(options.trace_path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"module\":\"layer1.0.conv2\""), std::string::npos);
  EXPECT_NE(text.find("\"layout\":\"nChw"), std::string::npos) << "blocked activations";
  const analyze::TraceModel model = analyze::ImportTrace(options.trace_path);
  std::map<std::string, int> calls;
  int steps = 0;
  for (size_t e = 0; e < model.size(); ++e) {
    const std::string name(model.String(model.name[e]));
    if (model.cls[e] == analyze::EventClass::kStep) {
      steps += model.duration_ns[e] > 1000000;  // the measured iterations (not the empty tail)
      continue;
    }
    ++calls[name];
    if (name == "Conv2D") {
      EXPECT_GT(model.flops[e], 0);
    }
  }
  const int convs = 1 + 3 * 4 + 4;  // stem, three per bottleneck, four downsamples
  EXPECT_EQ(steps, 2);
  EXPECT_EQ(calls["Conv2D"], 2 * convs);
  EXPECT_EQ(calls["Conv2DBackwardWeights"], 2 * convs);
  EXPECT_EQ(calls["Conv2DBackwardData"], 2 * (convs - 1)) << "not for the network's input";
  EXPECT_EQ(calls["BatchNorm+ReLU"], 2 * (1 + 2 * 4));
  EXPECT_EQ(calls["Add+ReLU"], 2 * 4);
  EXPECT_EQ(calls["SGD"], 2);
  EXPECT_EQ(calls["SoftmaxCrossEntropy"], 2);
  EXPECT_EQ(calls["Reorder"], 2 * result.layout_conversions);
}

// Every traced layer operator carries the plan's name, shapes, dtype, module,
// FLOPs and bytes (devices/network_plan.h): the same on every backend. Run with
// OPSCOPE_NETWORK_TEST_DEVICE=cuda:0, this checks the CUDA backend too.
TEST(ResNet, TracedOperatorsCarryThePlansFigures) {
  opscope::testing::TempDir dir;
  workloads::ResNetOptions options;
  options.shape = Tiny();
  options.warmup = 0;
  options.iters = 1;
  options.trace_path = (dir.path() / "resnet.json").string();
  TEST_DEVICE_OR_SKIP(device);
  options.layout = device->properties().capabilities.network_layout;
  workloads::RunResNet50(*device, options);
  NetworkOptions network;
  network.dtype = options.dtype;
  const NetworkPlan plan = PlanNetwork(workloads::ResNet50Spec(options.shape), network);
  std::map<std::pair<std::string, std::string>, const TracedOp*> planned;  // (module, name)
  for (const LayerPlan& l : plan.layers) {
    for (const TracedOp* op : {&l.forward, &l.backward, &l.backward_data}) {
      if (!op->empty()) planned[{op->module, op->name}] = op;
    }
  }
  planned[{plan.optimizer.module, plan.optimizer.name}] = &plan.optimizer;
  const analyze::TraceModel model = analyze::ImportTrace(options.trace_path);
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.module[e] == 0) continue;
    const std::pair<std::string, std::string> key{std::string(model.String(model.module[e])),
                                                  std::string(model.String(model.name[e]))};
    const auto it = planned.find(key);
    if (it == planned.end()) continue;  // the backend's own work: reorders, accumulation
    const TracedOp& op = *it->second;
    seen.insert(key);
    const std::string what = key.first + " " + key.second;
    EXPECT_EQ(model.flops[e], op.flops) << what;
    EXPECT_EQ(model.bytes[e], op.bytes) << what;
    EXPECT_EQ(model.String(model.dtype[e]), op.dtype) << what;
    EXPECT_EQ(model.shapes[e] == 0 ? "" : model.String(model.shapes[e]), op.shapes) << what;
  }
  for (const auto& [key, op] : planned) {
    EXPECT_TRUE(seen.count(key)) << "not traced: " << key.first << " " << key.second;
  }
  EXPECT_GT(seen.size(), 100u);
}

TEST(ResNet, BadSpecificationsAreRefused) {
  TEST_DEVICE_OR_SKIP(device);
  NetworkSpec spec = Input(1, 3, 8, 8);
  spec.layers = {{LayerKind::kAdd, "add", {-1}}};
  EXPECT_THROW(device->CreateNetwork(spec, {}), opscope::Error);
  spec.layers = {{LayerKind::kConv, "conv", {3}, 4, 3, 1, 1}};
  EXPECT_THROW(device->CreateNetwork(spec, {}), opscope::Error);
  spec.layers = {{LayerKind::kConv, "conv", {-1}, 4, 9, 1, 0}};  // kernel past the image
  EXPECT_THROW(device->CreateNetwork(spec, {}), opscope::Error);
  spec.layers = {{LayerKind::kSoftmaxCrossEntropy, "loss", {-1}}};
  EXPECT_THROW(device->CreateNetwork(spec, {}), opscope::Error);
}

}  // namespace
}  // namespace opscope::devices
