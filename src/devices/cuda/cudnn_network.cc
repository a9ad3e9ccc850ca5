// A network on cuDNN (convolution, batch norm, activation, pooling, tensor ops,
// softmax) and cuBLAS (the linear layer), NCHW fp32 throughout.
//
// Every buffer an iteration touches is allocated once, when the network is
// built: outputs, gradients, saved batch statistics, one shared workspace. An
// iteration then launches work on one stream and never synchronizes or
// allocates, so the host keeps ahead of the GPU. Gradients from several
// consumers accumulate through cuDNN's and cuBLAS's beta = 1; the parameters,
// their gradients and the momentum live in three flat arrays, so one kernel
// makes the SGD step.
//
// dtype fp32 runs every convolution on the FMA units (CUDNN_FMA_MATH); tf32
// lets cuDNN use the tensor cores (CUDNN_DEFAULT_MATH), which is what PyTorch
// does by default (torch.backends.cudnn.allow_tf32). The linear layer is strict
// fp32 in both, as PyTorch's matmul default is.
#include "devices/cuda/cudnn_network.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <random>

#include "devices/cuda/cuda_check.h"
#include "devices/cuda/cuda_kernels.h"
#include "devices/network_plan.h"
#include "devices/network_storage.h"
#include "opscope/opscope.h"

namespace opscope::cuda {
namespace {

using devices::LayerKind;
using devices::LayerSpec;
using devices::Network;
using devices::NetworkMemory;
using devices::NetworkOptions;
using devices::NetworkSpec;
using devices::ParamKind;

using Storage = devices::NetworkStorage;
using Pool = devices::NetworkPool;
using enum devices::NetworkPool;

// A device array of floats that frees itself.
class Array {
 public:
  Array() = default;
  Array(Storage& storage, Pool pool, int64_t elements)
      : storage_(&storage), pool_(pool), bytes_(static_cast<size_t>(elements) * sizeof(float)) {
    data_ = static_cast<float*>(storage.Allocate(pool, bytes_ == 0 ? sizeof(float) : bytes_));
  }
  ~Array() { Reset(); }
  Array(Array&& o) noexcept { *this = std::move(o); }
  Array& operator=(Array&& o) noexcept {
    if (this != &o) {
      Reset();
      storage_ = o.storage_, pool_ = o.pool_, data_ = o.data_, bytes_ = o.bytes_;
      o.data_ = nullptr;
    }
    return *this;
  }
  void Reset() {
    if (data_ != nullptr) storage_->Free(pool_, data_, bytes_ == 0 ? sizeof(float) : bytes_);
    data_ = nullptr;
  }
  float* get() const { return data_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  Storage* storage_ = nullptr;
  Pool pool_ = kActivations;
  float* data_ = nullptr;
  size_t bytes_ = 0;
};

struct TensorDesc {
  TensorDesc() { CheckDnn(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor"); }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  void Set(const std::vector<int64_t>& dims) {
    int n = 1, c = 1, h = 1, w = 1;
    n = static_cast<int>(dims[0]);
    if (dims.size() > 1) c = static_cast<int>(dims[1]);
    if (dims.size() > 2) h = static_cast<int>(dims[2]);
    if (dims.size() > 3) w = static_cast<int>(dims[3]);
    CheckDnn(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w),
             "cudnnSetTensor4dDescriptor");
  }
  cudnnTensorDescriptor_t d = nullptr;
};

using devices::Elements;

// The plan's traced operators (devices/network_plan.h): activations are NCHW here.
using Op = devices::TracedOp;

ScopeArgs ArgsOf(const Op& op) { return op.Args("nchw"); }

struct Param {
  ParamKind kind;
  std::vector<int64_t> dims;  // plain: conv OIHW, linear [out][in], batch norm [C]
  int64_t n = 0;
  bool trainable = true;
  size_t offset = 0;  // into the flat arrays (trainable) or `own`
  float* value = nullptr;
  float* grad = nullptr;
  Array own;  // running statistics
};

struct Layer {
  LayerSpec spec;
  std::vector<int> consumers;
  std::vector<int64_t> out_dims;
  TensorDesc out_desc;
  Array out, diff;
  bool diff_set = false;  // this backward pass has written diff
  bool needs_input_gradient = false;
  std::vector<Param> params;
  Op op_fwd, op_bwd, op_bwd_data;
  std::string impl;
  // Convolution.
  cudnnFilterDescriptor_t filter = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t fwd_algo{};
  cudnnConvolutionBwdDataAlgo_t bwd_data_algo{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter_algo{};
  // Batch norm.
  TensorDesc stats_desc;
  Array save_mean, save_inv_var, scratch;  // scratch: d(input) nobody reads
  // Pooling.
  cudnnPoolingDescriptor_t pool = nullptr;
  // Loss: log-probabilities.
  Array log_probs;

  ~Layer() {
    if (filter != nullptr) cudnnDestroyFilterDescriptor(filter);
    if (conv != nullptr) cudnnDestroyConvolutionDescriptor(conv);
    if (pool != nullptr) cudnnDestroyPoolingDescriptor(pool);
  }
};

constexpr size_t kMaxWorkspace = size_t{1} << 30;

class CudnnNetwork final : public Network {
 public:
  CudnnNetwork(devices::Device& device, cudnnHandle_t dnn, cublasHandle_t blas, cudaStream_t stream,
               const NetworkSpec& spec, const NetworkOptions& options)
      : device_(device),
        storage_(device),
        dnn_(dnn),
        blas_(blas),
        stream_(stream),
        spec_(spec),
        options_(options),
        plan_(devices::PlanNetwork(spec, options)),
        layers_(spec.layers.size()) {
    if (options.dtype != devices::DType::kF32 && options.dtype != devices::DType::kTF32) {
      throw Error(ErrorCode::kUnsupported, std::string("the CUDA network runs fp32 or tf32, not ") +
                                               devices::Name(options.dtype));
    }
    if (options.layout == devices::Layout::kNhwc) {
      throw Error(ErrorCode::kUnsupported, "the CUDA network keeps activations in NCHW");
    }
    CheckDnn(cudnnCreateActivationDescriptor(&relu_), "cudnnCreateActivationDescriptor");
    CheckDnn(cudnnSetActivationDescriptor(relu_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0),
             "cudnnSetActivationDescriptor");
    CheckDnn(cudnnCreateOpTensorDescriptor(&add_), "cudnnCreateOpTensorDescriptor");
    CheckDnn(cudnnSetOpTensorDescriptor(add_, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT,
                                        CUDNN_NOT_PROPAGATE_NAN),
             "cudnnSetOpTensorDescriptor");
    input_dims_ = {spec.batch, spec.channels, spec.height, spec.width};
    input_desc_.Set(input_dims_);
    input_ = Array(storage_, kActivations, Elements(input_dims_));
    labels_ = Array(storage_, kBuffers, spec.batch);  // int32, as many bytes as floats
    loss_value_ = Array(storage_, kBuffers, 1);
    ones_ = Array(storage_, kBuffers, spec.batch);
    const std::vector<float> ones(static_cast<size_t>(spec.batch), 1.f);
    Upload(ones_.get(), ones.data(), ones.size() * sizeof(float));

    for (size_t i = 0; i < spec.layers.size(); ++i) {
      layers_[i].spec = spec.layers[i];
      layers_[i].consumers = plan_.layers[i].consumers;
    }
    std::mt19937_64 rng(options.seed);
    std::vector<std::vector<float>> initial;  // of the trainable parameters, in order
    for (size_t i = 0; i < layers_.size(); ++i) Build(static_cast<int>(i), rng, initial);
    AllocateParameters(initial);
    if (workspace_bytes_ > 0) {
      workspace_ = Array(storage_, kWorkspace, static_cast<int64_t>(workspace_bytes_ / 4 + 1));
    }
    if (options_.input_gradient) input_grad_ = Array(storage_, kActivations, Elements(input_dims_));
    sgd_op_ = plan_.optimizer;
    Check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (network setup)");
  }

  ~CudnnNetwork() override {
    cudaStreamSynchronize(stream_);
    cudnnDestroyActivationDescriptor(relu_);
    cudnnDestroyOpTensorDescriptor(add_);
  }

  void SetInput(const float* images, const int32_t* labels) override {
    if (images == nullptr) throw Error(ErrorCode::kInvalidArgument, "SetInput: no images");
    // The batch is copied to the GPU once, here, as a training loop's data
    // loader would have put it there.
    Upload(input_.get(), images, static_cast<size_t>(Elements(input_dims_)) * sizeof(float));
    has_labels_ = labels != nullptr;
    if (has_labels_) {
      const Layer& last = layers_.back();
      if (last.spec.kind == LayerKind::kSoftmaxCrossEntropy) {
        const int64_t classes = last.out_dims[1];
        for (int64_t i = 0; i < spec_.batch; ++i) {
          if (labels[i] < 0 || labels[i] >= classes) {
            throw Error(
                ErrorCode::kInvalidArgument,
                fmt::format("label {} of image {} is outside [0, {})", labels[i], i, classes));
          }
        }
      }
      Upload(labels_.get(), labels, static_cast<size_t>(spec_.batch) * sizeof(int32_t));
    }
    has_input_ = true;
  }

  void Forward() override {
    if (!has_input_) throw Error(ErrorCode::kInvalidArgument, "Forward() before SetInput()");
    for (size_t i = 0; i < layers_.size(); ++i) RunForward(static_cast<int>(i));
    forward_done_ = true;
    backward_done_ = false;
  }

  void Backward(const float* output_gradient) override {
    if (!options_.training) {
      throw Error(ErrorCode::kInvalidArgument, "Backward() on a network built for inference");
    }
    if (!forward_done_) throw Error(ErrorCode::kInvalidArgument, "Backward() before Forward()");
    for (auto& l : layers_) l.diff_set = false;
    Layer& last = layers_.back();
    if (last.spec.kind != LayerKind::kSoftmaxCrossEntropy) {
      if (output_gradient == nullptr) {
        throw Error(ErrorCode::kInvalidArgument,
                    "Backward() of a network without a loss needs d(loss)/d(output)");
      }
      Upload(last.diff.get(), output_gradient,
             static_cast<size_t>(Elements(last.out_dims)) * sizeof(float));
      last.diff_set = true;
    }
    if (input_grad_) {
      Check(cudaMemsetAsync(input_grad_.get(), 0,
                            static_cast<size_t>(Elements(input_dims_)) * sizeof(float), stream_),
            "cudaMemsetAsync");
    }
    for (int i = static_cast<int>(layers_.size()) - 1; i >= 0; --i) RunBackward(i);
    backward_done_ = true;
  }

  void Update() override {
    if (!backward_done_) throw Error(ErrorCode::kInvalidArgument, "Update() before Backward()");
    {
      OPSCOPE_SCOPE_DYN(sgd_op_.name, ArgsOf(sgd_op_));
      Check(LaunchSgdMomentum(values_.get(), grads_.get(), momentum_.get(), trainable_elements_,
                              options_.learning_rate, options_.momentum, !momentum_set_, stream_),
            "SGD kernel launch");
    }
    momentum_set_ = true;
    backward_done_ = false;
  }

  float Loss() const override {
    if (layers_.back().spec.kind != LayerKind::kSoftmaxCrossEntropy || !forward_done_) return 0;
    float loss = 0;
    Check(cudaMemcpyAsync(&loss, loss_value_.get(), sizeof loss, cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync (loss)");
    Check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return loss;
  }

  int64_t ParameterCount() const override { return trainable_elements_; }

  NetworkMemory Memory() const override { return storage_.Memory(); }

  void ResetPeakMemory() override { storage_.ResetPeak(); }

  std::vector<int64_t> OutputShape(int layer) const override {
    devices::CheckLayerIndex(layers_, layer);
    return layers_[layer].out_dims;
  }

  void ReadOutput(int layer, float* out) const override {
    devices::CheckLayerIndex(layers_, layer);
    if (!forward_done_) throw Error(ErrorCode::kInvalidArgument, "ReadOutput() before Forward()");
    const Layer& l = layers_[layer];
    Download(out, l.out.get(), static_cast<size_t>(Elements(l.out_dims)) * sizeof(float));
  }

  void ReadInputGradient(float* out) const override {
    if (!input_grad_ || !backward_done_) {
      throw Error(ErrorCode::kInvalidArgument,
                  "no input gradient: build with input_gradient and run Backward()");
    }
    Download(out, input_grad_.get(), static_cast<size_t>(Elements(input_dims_)) * sizeof(float));
  }

  int64_t ParameterSize(int layer, ParamKind kind) const override {
    return devices::FindLayerParam(layers_, layer, kind).n;
  }

  void ReadParameter(int layer, ParamKind kind, float* out) const override {
    const Param& p = devices::FindLayerParam(layers_, layer, kind);
    Download(out, p.value, static_cast<size_t>(p.n) * sizeof(float));
  }

  void WriteParameter(int layer, ParamKind kind, const float* values) override {
    const Param& p = devices::FindLayerParam(layers_, layer, kind);
    Upload(p.value, values, static_cast<size_t>(p.n) * sizeof(float));
  }

  void ReadGradient(int layer, ParamKind kind, float* out) const override {
    const Param& p = devices::FindLayerParam(layers_, layer, kind);
    if (!p.trainable) {
      throw Error(ErrorCode::kInvalidArgument, "running statistics have no gradient");
    }
    Download(out, p.grad, static_cast<size_t>(p.n) * sizeof(float));
  }

  int64_t LayoutConversions() const override { return 0; }  // NCHW end to end

  std::vector<std::string> Implementations() const override {
    std::vector<std::string> out;
    for (const auto& l : layers_) out.push_back(l.spec.name + ": " + l.impl);
    return out;
  }

 private:
  bool Tf32() const { return options_.dtype == devices::DType::kTF32; }

  void Upload(void* dst, const void* src, size_t bytes) const {
    Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), "upload");
    Check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  void Download(void* dst, const void* src, size_t bytes) const {
    CopyToHost(dst, src, bytes, stream_);
  }

  const std::vector<int64_t>& InputDims(int layer, int which) const {
    const int p = layers_[layer].spec.inputs[which];
    return p < 0 ? input_dims_ : layers_[p].out_dims;
  }
  cudnnTensorDescriptor_t InputDesc(int layer, int which) const {
    const int p = layers_[layer].spec.inputs[which];
    return p < 0 ? input_desc_.d : layers_[p].out_desc.d;
  }
  const float* InputData(int layer, int which) const {
    const int p = layers_[layer].spec.inputs[which];
    return p < 0 ? input_.get() : layers_[p].out.get();
  }

  // Where d(loss)/d(input `which` of `layer`) goes, and the beta that adds to
  // what is there; nullptr when nobody reads it.
  float* GradTarget(int layer, int which, float* beta) {
    const int p = layers_[layer].spec.inputs[which];
    if (p < 0) {
      *beta = 1.f;  // zeroed at the start of Backward()
      return input_grad_ ? input_grad_.get() : nullptr;
    }
    Layer& producer = layers_[p];
    *beta = producer.diff_set ? 1.f : 0.f;
    producer.diff_set = true;
    return producer.diff.get();
  }

  void AddParam(Layer& l, ParamKind kind, std::vector<int64_t> dims, std::vector<float> init,
                bool trainable, std::vector<std::vector<float>>& initial) {
    Param p;
    p.kind = kind;
    p.dims = std::move(dims);
    p.n = Elements(p.dims);
    p.trainable = trainable;
    if (trainable) {
      p.offset = static_cast<size_t>(trainable_elements_);
      trainable_elements_ += p.n;
      initial.push_back(std::move(init));
    } else {
      p.own = Array(storage_, kBuffers, p.n);
      p.value = p.own.get();
      Upload(p.value, init.data(), init.size() * sizeof(float));
    }
    l.params.push_back(std::move(p));
  }

  void AllocateParameters(const std::vector<std::vector<float>>& initial) {
    values_ = Array(storage_, kParameters, trainable_elements_);
    if (options_.training) {
      grads_ = Array(storage_, kGradients, trainable_elements_);
      momentum_ = Array(storage_, kOptimizer, trainable_elements_);
    }
    std::vector<float> flat;
    flat.reserve(static_cast<size_t>(trainable_elements_));
    for (const auto& v : initial) flat.insert(flat.end(), v.begin(), v.end());
    Upload(values_.get(), flat.data(), flat.size() * sizeof(float));
    for (auto& l : layers_) {
      for (auto& p : l.params) {
        if (!p.trainable) continue;
        p.value = values_.get() + p.offset;
        if (grads_) p.grad = grads_.get() + p.offset;
      }
    }
  }

  void NeedWorkspace(size_t bytes) { workspace_bytes_ = std::max(workspace_bytes_, bytes); }

  void BuildConv(Layer& l, const std::vector<int64_t>& in, cudnnTensorDescriptor_t in_desc) {
    const LayerSpec& s = l.spec;
    const int64_t c = in[1], o = s.channels, k = s.kernel;
    CheckDnn(cudnnCreateFilterDescriptor(&l.filter), "cudnnCreateFilterDescriptor");
    CheckDnn(cudnnSetFilter4dDescriptor(l.filter, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                        static_cast<int>(o), static_cast<int>(c),
                                        static_cast<int>(k), static_cast<int>(k)),
             "cudnnSetFilter4dDescriptor");
    CheckDnn(cudnnCreateConvolutionDescriptor(&l.conv), "cudnnCreateConvolutionDescriptor");
    const int pad = static_cast<int>(s.pad), stride = static_cast<int>(s.stride);
    CheckDnn(cudnnSetConvolution2dDescriptor(l.conv, pad, pad, stride, stride, 1, 1,
                                             CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
             "cudnnSetConvolution2dDescriptor");
    CheckDnn(cudnnSetConvolutionMathType(l.conv, Tf32() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
             "cudnnSetConvolutionMathType");
    l.out_desc.Set(l.out_dims);
    // Like torch.backends.cudnn.benchmark: time every algorithm once, keep the fastest
    // whose workspace fits.
    const char* math = Tf32() ? "tf32" : "fp32 FMA";
    {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int found = 0;
      CheckDnn(cudnnFindConvolutionForwardAlgorithm(dnn_, in_desc, l.filter, l.conv, l.out_desc.d,
                                                    CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
               "cudnnFindConvolutionForwardAlgorithm");
      int best = -1;
      for (int i = 0; i < found && best < 0; ++i) {
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxWorkspace) best = i;
      }
      if (best < 0) throw Error(ErrorCode::kUnsupported, s.name + ": no cuDNN forward algorithm");
      l.fwd_algo = perf[best].algo;
      NeedWorkspace(perf[best].memory);
      l.impl = fmt::format("cuDNN forward algo {} ({})", static_cast<int>(l.fwd_algo), math);
    }
    if (!options_.training) return;
    {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      int found = 0;
      CheckDnn(cudnnFindConvolutionBackwardFilterAlgorithm(
                   dnn_, in_desc, l.out_desc.d, l.conv, l.filter,
                   CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &found, perf),
               "cudnnFindConvolutionBackwardFilterAlgorithm");
      int best = -1;
      for (int i = 0; i < found && best < 0; ++i) {
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxWorkspace) best = i;
      }
      if (best < 0) throw Error(ErrorCode::kUnsupported, s.name + ": no cuDNN filter algorithm");
      l.bwd_filter_algo = perf[best].algo;
      NeedWorkspace(perf[best].memory);
      l.impl += fmt::format(", filter algo {}", static_cast<int>(l.bwd_filter_algo));
    }
    if (!l.needs_input_gradient) return;
    {
      cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      int found = 0;
      CheckDnn(cudnnFindConvolutionBackwardDataAlgorithm(
                   dnn_, l.filter, l.out_desc.d, l.conv, in_desc,
                   CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, perf),
               "cudnnFindConvolutionBackwardDataAlgorithm");
      int best = -1;
      for (int i = 0; i < found && best < 0; ++i) {
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxWorkspace) best = i;
      }
      if (best < 0) throw Error(ErrorCode::kUnsupported, s.name + ": no cuDNN data algorithm");
      l.bwd_data_algo = perf[best].algo;
      NeedWorkspace(perf[best].memory);
      l.impl += fmt::format(", data algo {}", static_cast<int>(l.bwd_data_algo));
    }
  }

  void Build(int index, std::mt19937_64& rng, std::vector<std::vector<float>>& initial) {
    Layer& l = layers_[index];
    const LayerSpec& s = l.spec;
    const std::vector<int64_t> in = InputDims(index, 0);
    const cudnnTensorDescriptor_t in_desc = InputDesc(index, 0);
    const bool training = options_.training;
    // Shapes, parameters and the traced operators come from the plan.
    const devices::LayerPlan& plan = plan_.layers[index];
    l.needs_input_gradient = plan.needs_input_gradient;
    l.out_dims = plan.out_dims;
    l.op_fwd = plan.forward;
    l.op_bwd = plan.backward;
    l.op_bwd_data = plan.backward_data;
    // The plan's parameters, initialised in plan order (layer by layer).
    for (const devices::ParamPlan& p : plan.params) {
      AddParam(l, p.kind, p.dims, devices::InitialValues(p, rng), p.trainable, initial);
    }
    const int64_t e = Elements(in);
    switch (s.kind) {
      case LayerKind::kConv: BuildConv(l, in, in_desc); break;
      case LayerKind::kBatchNorm: {
        const int64_t c = in[1];
        l.out_desc.Set(l.out_dims);
        CheckDnn(cudnnDeriveBNTensorDescriptor(l.stats_desc.d, in_desc, CUDNN_BATCHNORM_SPATIAL),
                 "cudnnDeriveBNTensorDescriptor");
        if (training) {
          l.save_mean = Array(storage_, kActivations, c);
          l.save_inv_var = Array(storage_, kActivations, c);
          if (!l.needs_input_gradient) l.scratch = Array(storage_, kWorkspace, e);
        }
        l.impl = std::string("cuDNN batch norm (spatial)") + (s.relu ? " + cuDNN ReLU" : "");
        break;
      }
      case LayerKind::kRelu:
        l.out_desc.Set(l.out_dims);
        l.impl = "cuDNN activation (ReLU)";
        break;
      case LayerKind::kMaxPool:
      case LayerKind::kGlobalAvgPool: {
        const bool max = s.kind == LayerKind::kMaxPool;
        const int64_t kh = max ? s.kernel : in[2], kw = max ? s.kernel : in[3];
        const int64_t stride_h = max ? s.stride : in[2], stride_w = max ? s.stride : in[3];
        const int64_t pad = max ? s.pad : 0;
        CheckDnn(cudnnCreatePoolingDescriptor(&l.pool), "cudnnCreatePoolingDescriptor");
        CheckDnn(cudnnSetPooling2dDescriptor(
                     l.pool, max ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                     CUDNN_NOT_PROPAGATE_NAN, static_cast<int>(kh), static_cast<int>(kw),
                     static_cast<int>(pad), static_cast<int>(pad), static_cast<int>(stride_h),
                     static_cast<int>(stride_w)),
                 "cudnnSetPooling2dDescriptor");
        l.out_desc.Set(l.out_dims);
        l.impl = max ? "cuDNN max pooling" : "cuDNN average pooling";
        break;
      }
      case LayerKind::kLinear: {
        l.out_desc.Set(l.out_dims);
        l.impl = "cublasSgemm (fp32)";
        break;
      }
      case LayerKind::kAdd: {
        l.out_desc.Set(l.out_dims);
        l.impl = std::string("cuDNN op tensor (add)") + (s.relu ? " + cuDNN ReLU" : "");
        break;
      }
      case LayerKind::kSoftmaxCrossEntropy: {
        l.out_desc.Set(l.out_dims);
        l.log_probs = Array(storage_, kActivations, e);
        l.impl = "cuDNN softmax (log and accurate) + opscope loss kernel";
        break;
      }
    }
    l.out = Array(storage_, kActivations, Elements(l.out_dims));
    if (training) l.diff = Array(storage_, kActivations, Elements(l.out_dims));
  }

  void RunForward(int index) {
    Layer& l = layers_[index];
    const LayerSpec& s = l.spec;
    const float one = 1.f, zero = 0.f;
    const float* x = InputData(index, 0);
    const cudnnTensorDescriptor_t x_desc = InputDesc(index, 0);
    OPSCOPE_SCOPE_DYN(l.op_fwd.name, ArgsOf(l.op_fwd));
    switch (s.kind) {
      case LayerKind::kConv:
        CheckDnn(cudnnConvolutionForward(dnn_, &one, x_desc, x, l.filter, l.params[0].value, l.conv,
                                         l.fwd_algo, workspace_.get(), workspace_bytes_, &zero,
                                         l.out_desc.d, l.out.get()),
                 "cudnnConvolutionForward");
        break;
      case LayerKind::kBatchNorm: {
        const double eps = options_.bn_epsilon;
        if (options_.training) {
          CheckDnn(cudnnBatchNormalizationForwardTraining(
                       dnn_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x_desc, x, l.out_desc.d,
                       l.out.get(), l.stats_desc.d, l.params[0].value, l.params[1].value,
                       options_.bn_momentum, l.params[2].value, l.params[3].value, eps,
                       l.save_mean.get(), l.save_inv_var.get()),
                   "cudnnBatchNormalizationForwardTraining");
        } else {
          CheckDnn(cudnnBatchNormalizationForwardInference(
                       dnn_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x_desc, x, l.out_desc.d,
                       l.out.get(), l.stats_desc.d, l.params[0].value, l.params[1].value,
                       l.params[2].value, l.params[3].value, eps),
                   "cudnnBatchNormalizationForwardInference");
        }
        if (s.relu) Relu(l);
        break;
      }
      case LayerKind::kRelu:
        CheckDnn(
            cudnnActivationForward(dnn_, relu_, &one, x_desc, x, &zero, l.out_desc.d, l.out.get()),
            "cudnnActivationForward");
        break;
      case LayerKind::kMaxPool:
      case LayerKind::kGlobalAvgPool:
        CheckDnn(
            cudnnPoolingForward(dnn_, l.pool, &one, x_desc, x, &zero, l.out_desc.d, l.out.get()),
            "cudnnPoolingForward");
        break;
      case LayerKind::kLinear: {
        const int n = static_cast<int>(l.out_dims[0]), o = static_cast<int>(l.out_dims[1]);
        const int f = static_cast<int>(l.params[0].dims[1]);
        // Row-major y[n][o] = x[n][f] W^T + b is, column-major, y (o x n) = W^T x + b 1^T.
        CheckBlas(cublasSgemm(blas_, CUBLAS_OP_T, CUBLAS_OP_N, o, n, f, &one, l.params[0].value, f,
                              x, f, &zero, l.out.get(), o),
                  "cublasSgemm (linear)");
        CheckBlas(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_N, o, n, 1, &one, l.params[1].value, o,
                              ones_.get(), 1, &one, l.out.get(), o),
                  "cublasSgemm (bias)");
        break;
      }
      case LayerKind::kAdd:
        CheckDnn(cudnnOpTensor(dnn_, add_, &one, x_desc, x, &one, InputDesc(index, 1),
                               InputData(index, 1), &zero, l.out_desc.d, l.out.get()),
                 "cudnnOpTensor (add)");
        if (s.relu) Relu(l);
        break;
      case LayerKind::kSoftmaxCrossEntropy: {
        if (!has_labels_)
          throw Error(ErrorCode::kInvalidArgument, "a network with a loss needs labels");
        CheckDnn(cudnnSoftmaxForward(dnn_, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_INSTANCE, &one,
                                     x_desc, x, &zero, l.out_desc.d, l.log_probs.get()),
                 "cudnnSoftmaxForward (log)");
        CheckDnn(cudnnSoftmaxForward(dnn_, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE,
                                     &one, x_desc, x, &zero, l.out_desc.d, l.out.get()),
                 "cudnnSoftmaxForward");
        Check(LaunchXentLoss(l.log_probs.get(), reinterpret_cast<const int32_t*>(labels_.get()),
                             l.out_dims[0], l.out_dims[1], loss_value_.get(), stream_),
              "loss kernel launch");
        break;
      }
    }
  }

  // The ReLU fused after batch norm or add: in place on the output.
  void Relu(Layer& l) {
    const float one = 1.f, zero = 0.f;
    CheckDnn(cudnnActivationForward(dnn_, relu_, &one, l.out_desc.d, l.out.get(), &zero,
                                    l.out_desc.d, l.out.get()),
             "cudnnActivationForward");
  }
  // Its backward, in place on the layer's gradient: d *= (out > 0).
  void ReluBackwardInPlace(Layer& l) {
    const float one = 1.f, zero = 0.f;
    CheckDnn(cudnnActivationBackward(dnn_, relu_, &one, l.out_desc.d, l.out.get(), l.out_desc.d,
                                     l.diff.get(), l.out_desc.d, l.out.get(), &zero, l.out_desc.d,
                                     l.diff.get()),
             "cudnnActivationBackward");
  }

  void RunBackward(int index) {
    Layer& l = layers_[index];
    const LayerSpec& s = l.spec;
    const float one = 1.f, zero = 0.f;
    const float* x = InputData(index, 0);
    const cudnnTensorDescriptor_t x_desc = InputDesc(index, 0);
    if (s.kind == LayerKind::kSoftmaxCrossEntropy) {
      OPSCOPE_SCOPE_DYN(l.op_bwd.name, ArgsOf(l.op_bwd));
      float beta = 0;
      float* dx = GradTarget(index, 0, &beta);
      if (dx == nullptr) return;
      Check(LaunchSoftmaxXentBackward(
                l.log_probs.get(), reinterpret_cast<const int32_t*>(labels_.get()), l.out_dims[0],
                l.out_dims[1], 1.f / static_cast<float>(l.out_dims[0]), dx, beta != 0, stream_),
            "loss backward kernel launch");
      return;
    }
    if (!l.diff_set) return;  // nothing downstream depends on this layer
    switch (s.kind) {
      case LayerKind::kConv: {
        {
          OPSCOPE_SCOPE_DYN(l.op_bwd.name, ArgsOf(l.op_bwd));
          CheckDnn(cudnnConvolutionBackwardFilter(
                       dnn_, &one, x_desc, x, l.out_desc.d, l.diff.get(), l.conv, l.bwd_filter_algo,
                       workspace_.get(), workspace_bytes_, &zero, l.filter, l.params[0].grad),
                   "cudnnConvolutionBackwardFilter");
        }
        if (!l.needs_input_gradient) break;
        float beta = 0;
        float* dx = GradTarget(index, 0, &beta);
        if (dx == nullptr) break;
        OPSCOPE_SCOPE_DYN(l.op_bwd_data.name, ArgsOf(l.op_bwd_data));
        CheckDnn(cudnnConvolutionBackwardData(
                     dnn_, &one, l.filter, l.params[0].value, l.out_desc.d, l.diff.get(), l.conv,
                     l.bwd_data_algo, workspace_.get(), workspace_bytes_, &beta, x_desc, dx),
                 "cudnnConvolutionBackwardData");
        break;
      }
      case LayerKind::kBatchNorm: {
        OPSCOPE_SCOPE_DYN(l.op_bwd.name, ArgsOf(l.op_bwd));
        if (s.relu) ReluBackwardInPlace(l);
        float beta = 0;
        float* dx = l.needs_input_gradient ? GradTarget(index, 0, &beta) : nullptr;
        if (dx == nullptr) dx = l.scratch ? l.scratch.get() : nullptr;
        if (dx == nullptr) break;
        CheckDnn(
            cudnnBatchNormalizationBackward(
                dnn_, CUDNN_BATCHNORM_SPATIAL, &one, &beta, &one, &zero, x_desc, x, l.out_desc.d,
                l.diff.get(), x_desc, dx, l.stats_desc.d, l.params[0].value, l.params[0].grad,
                l.params[1].grad, options_.bn_epsilon, l.save_mean.get(), l.save_inv_var.get()),
            "cudnnBatchNormalizationBackward");
        break;
      }
      case LayerKind::kRelu: {
        if (!l.needs_input_gradient) break;
        float beta = 0;
        float* dx = GradTarget(index, 0, &beta);
        if (dx == nullptr) break;
        OPSCOPE_SCOPE_DYN(l.op_bwd.name, ArgsOf(l.op_bwd));
        CheckDnn(cudnnActivationBackward(dnn_, relu_, &one, l.out_desc.d, l.out.get(), l.out_desc.d,
                                         l.diff.get(), x_desc, x, &beta, x_desc, dx),
                 "cudnnActivationBackward");
        break;
      }
      case LayerKind::kMaxPool:
      case LayerKind::kGlobalAvgPool: {
        if (!l.needs_input_gradient) break;
        float beta = 0;
        float* dx = GradTarget(index, 0, &beta);
        if (dx == nullptr) break;
        OPSCOPE_SCOPE_DYN(l.op_bwd.name, ArgsOf(l.op_bwd));
        CheckDnn(cudnnPoolingBackward(dnn_, l.pool, &one, l.out_desc.d, l.out.get(), l.out_desc.d,
                                      l.diff.get(), x_desc, x, &beta, x_desc, dx),
                 "cudnnPoolingBackward");
        break;
      }
      case LayerKind::kLinear: {
        const int n = static_cast<int>(l.out_dims[0]), o = static_cast<int>(l.out_dims[1]);
        const int f = static_cast<int>(l.params[0].dims[1]);
        {
          OPSCOPE_SCOPE_DYN(l.op_bwd.name, ArgsOf(l.op_bwd));
          // dW[o][f] = dy^T x: column-major dW (f x o) = x (f x n) dy^T (n x o).
          CheckBlas(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_T, f, o, n, &one, x, f, l.diff.get(),
                                o, &zero, l.params[0].grad, f),
                    "cublasSgemm (linear weight gradient)");
          // db[o] = sum over the batch of dy: dy (o x n) times ones.
          CheckBlas(cublasSgemv(blas_, CUBLAS_OP_N, o, n, &one, l.diff.get(), o, ones_.get(), 1,
                                &zero, l.params[1].grad, 1),
                    "cublasSgemv (bias gradient)");
        }
        if (!l.needs_input_gradient) break;
        float beta = 0;
        float* dx = GradTarget(index, 0, &beta);
        if (dx == nullptr) break;
        OPSCOPE_SCOPE_DYN(l.op_bwd_data.name, ArgsOf(l.op_bwd_data));
        // dx[n][f] = dy W: column-major dx (f x n) = W (f x o) dy (o x n).
        CheckBlas(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_N, f, n, o, &one, l.params[0].value, f,
                              l.diff.get(), o, &beta, dx, f),
                  "cublasSgemm (linear input gradient)");
        break;
      }
      case LayerKind::kAdd: {
        OPSCOPE_SCOPE_DYN(l.op_bwd.name, ArgsOf(l.op_bwd));
        if (s.relu) ReluBackwardInPlace(l);
        // Both inputs receive the layer's gradient.
        for (int which = 0; which < 2; ++which) {
          float beta = 0;
          float* dx = GradTarget(index, which, &beta);
          if (dx == nullptr) continue;
          CheckDnn(cudnnAddTensor(dnn_, &one, l.out_desc.d, l.diff.get(), &beta,
                                  InputDesc(index, which), dx),
                   "cudnnAddTensor");
        }
        break;
      }
      case LayerKind::kSoftmaxCrossEntropy: break;
    }
  }

  devices::Device& device_;
  Storage storage_;
  cudnnHandle_t dnn_;
  cublasHandle_t blas_;
  cudaStream_t stream_;
  NetworkSpec spec_;
  NetworkOptions options_;
  devices::NetworkPlan plan_;
  cudnnActivationDescriptor_t relu_ = nullptr;
  cudnnOpTensorDescriptor_t add_ = nullptr;
  std::vector<int64_t> input_dims_;
  TensorDesc input_desc_;
  Array input_, input_grad_, labels_, loss_value_, ones_;
  std::vector<Layer> layers_;
  int64_t trainable_elements_ = 0;
  Array values_, grads_, momentum_;
  size_t workspace_bytes_ = 0;
  Array workspace_;
  Op sgd_op_;
  bool has_input_ = false, has_labels_ = false;
  bool forward_done_ = false, backward_done_ = false, momentum_set_ = false;
};

}  // namespace

std::unique_ptr<devices::Network> CreateCudnnNetwork(devices::Device& device, cudnnHandle_t dnn,
                                                     cublasHandle_t blas, cudaStream_t stream,
                                                     const devices::NetworkSpec& spec,
                                                     const devices::NetworkOptions& options) {
  return std::make_unique<CudnnNetwork>(device, dnn, blas, stream, spec, options);
}

}  // namespace opscope::cuda
