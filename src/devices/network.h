// A neural network described once, independently of any device, and compiled
// by a backend into its own primitives (oneDNN on the CPU). The benchmarks build
// the description (bench/resnet50.cc); the backend owns layouts, fusion and
// memory. Every tensor a network holds is allocated through its Device, so the
// device's accounting (current and peak bytes) is the memory figure.
#ifndef OPSCOPE_DEVICES_NETWORK_H_
#define OPSCOPE_DEVICES_NETWORK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "devices/dtype.h"

namespace opscope::devices {

enum class LayerKind : uint8_t {
  kConv,       // 2-D convolution, no bias
  kBatchNorm,  // batch statistics when training, running statistics otherwise
  kRelu,
  kMaxPool,
  kGlobalAvgPool,        // N x C x H x W -> N x C x 1 x 1
  kLinear,               // fully connected, with bias
  kAdd,                  // two inputs of one shape
  kSoftmaxCrossEntropy,  // the loss: mean over the batch of -log softmax(x)[label]
};
const char* Name(LayerKind kind);  // the traced operator name: "Conv2D", "BatchNorm", ...

struct LayerSpec {
  LayerKind kind;
  std::string name;                         // "layer1.0.conv1", as torchvision names the module
  std::vector<int> inputs;                  // producing layers by index; -1: the network's input
  int64_t channels = 0;                     // conv: output channels; linear: output features
  int64_t kernel = 1, stride = 1, pad = 0;  // conv and max pool
  bool relu = false;  // batch norm or add followed by a ReLU (fused where the backend can)
};

struct NetworkSpec {
  int64_t batch = 1, channels = 3, height = 224, width = 224;  // the input, NCHW
  std::vector<LayerSpec> layers;  // in execution order; a loss, if any, last
};

// Throws Error(kInvalidArgument) for an input without positive dimensions, no
// layers, a layer with the wrong number of inputs or reading a later layer, and
// a loss that is not last. Every backend checks a spec with it first.
void ValidateNetworkSpec(const NetworkSpec& spec);

enum class Layout : uint8_t { kBlocked, kNchw, kNhwc };
const char* Name(Layout layout);  // "blocked", "nchw", "nhwc"

struct NetworkOptions {
  bool training = true;
  DType dtype = DType::kF32;  // of activations and the weights the layers read
  Layout layout = Layout::kBlocked;
  float learning_rate = 0.01f, momentum = 0.9f;  // SGD with momentum, as torch.optim.SGD
  float bn_momentum = 0.1f, bn_epsilon = 1e-5f;  // as torch.nn.BatchNorm2d
  uint64_t seed = 1;                             // of the initial weights
  bool input_gradient = false;                   // also compute d(loss)/d(input) (tests)
  bool keep_outputs = false;  // hold every layer's output after Forward() (tests)
};

// Bytes held, by what they hold, from the network's own allocations.
struct NetworkMemory {
  uint64_t parameters = 0;  // weights, BN scale and shift, biases (fp32 masters)
  uint64_t buffers = 0;     // BN running statistics; working copies in a lower precision
  uint64_t gradients = 0;
  uint64_t optimizer_state = 0;  // SGD momentum
  uint64_t activations = 0;      // outputs and what the backward pass keeps (now)
  uint64_t activations_peak = 0;
  uint64_t workspace = 0;  // the backend's scratch space (now)
  uint64_t workspace_peak = 0;
};

// The parameters of a layer, in plain layouts: conv OIHW, linear [out][in].
enum class ParamKind : uint8_t { kWeight, kBias, kScale, kShift, kRunningMean, kRunningVar };

class Network {
 public:
  virtual ~Network() = default;

  // Images in NCHW fp32; labels in [0, classes) when the network ends in a loss.
  virtual void SetInput(const float* images, const int32_t* labels) = 0;
  virtual void Forward() = 0;
  // From d(loss)/d(output) = `output_gradient` (plain layout of the last layer's
  // output) or, for a network ending in a loss, from the loss (pass nullptr).
  virtual void Backward(const float* output_gradient = nullptr) = 0;
  virtual void Update() = 0;  // one SGD step with the gradients of the last Backward()

  virtual float Loss() const = 0;  // of the last Forward(), when the network ends in a loss
  virtual int64_t ParameterCount() const = 0;
  virtual NetworkMemory Memory() const = 0;
  virtual void ResetPeakMemory() = 0;

  // Shapes (NCHW, or N x features) of a layer's output and of the input.
  virtual std::vector<int64_t> OutputShape(int layer) const = 0;
  // The output of a layer after Forward(), in plain NCHW (or N x features) fp32.
  virtual void ReadOutput(int layer, float* out) const = 0;
  // d(loss)/d(input) after Backward() with options.input_gradient, NCHW fp32.
  virtual void ReadInputGradient(float* out) const = 0;
  // Element counts are those of the plain layouts; throws for a kind the layer lacks.
  virtual int64_t ParameterSize(int layer, ParamKind kind) const = 0;
  virtual void ReadParameter(int layer, ParamKind kind, float* out) const = 0;
  virtual void WriteParameter(int layer, ParamKind kind, const float* values) = 0;
  virtual void ReadGradient(int layer, ParamKind kind, float* out) const = 0;

  // Layout conversions (reorders of activations or gradients) run so far.
  virtual int64_t LayoutConversions() const = 0;

  // The implementation each layer runs ("brgconv:avx512_core", ...), for reports.
  virtual std::vector<std::string> Implementations() const = 0;
};

}  // namespace opscope::devices

#endif  // OPSCOPE_DEVICES_NETWORK_H_
