#include "devices/cuda/cuda_device.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>
#include <unordered_map>

#include "devices/cuda/cuda_kernels.h"
#include "devices/cuda/cuda_peaks.h"
#include "devices/cuda/cudnn_network.h"
#include "opscope/opscope.h"

namespace opscope::cuda {

using devices::CopyKind;
using devices::DType;
using devices::HostMemory;
using devices::Kernel;

void Check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error(
        status == cudaErrorMemoryAllocation ? ErrorCode::kResourceExhausted : ErrorCode::kInternal,
        fmt::format("{}: {} ({})", what, cudaGetErrorString(status), cudaGetErrorName(status)));
  }
}

void CheckBlas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(
        status == CUBLAS_STATUS_NOT_SUPPORTED ? ErrorCode::kUnsupported : ErrorCode::kInternal,
        fmt::format("{}: {}", what, cublasGetStatusString(status)));
  }
}

void CheckDnn(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS) {
    throw Error(
        status == CUDNN_STATUS_NOT_SUPPORTED ? ErrorCode::kUnsupported : ErrorCode::kInternal,
        fmt::format("{}: {}", what, cudnnGetErrorString(status)));
  }
}

void CopyToHost(void* host, const void* device, size_t bytes, cudaStream_t stream) {
  Check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync (device to host)");
  Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

namespace {

cudaDataType_t CudaType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kTF32: return CUDA_R_32F;
    case DType::kBF16: return CUDA_R_16BF;
    case DType::kF16: return CUDA_R_16F;
  }
  return CUDA_R_32F;
}

cublasComputeType_t ComputeType(DType dtype) {
  return dtype == DType::kTF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

class EventTimer final : public devices::Timer {
 public:
  explicit EventTimer(cudaStream_t stream) : stream_(stream) {
    Check(cudaEventCreate(&start_), "cudaEventCreate");
    Check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~EventTimer() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void Start() override { Check(cudaEventRecord(start_, stream_), "cudaEventRecord"); }
  double StopMs() override {
    Check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    Check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    Check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_{}, stop_{};
};

// C[m,n] = A[m,k] B[k,n] row-major is C^T = B^T A^T column-major: cuBLAS multiplies
// B (n x k, ld n) by A (k x m, ld k) into C (n x m, ld n).
class GemmExKernel final : public Kernel {
 public:
  GemmExKernel(cublasHandle_t handle, cudaStream_t stream, const devices::MatmulSpec& s,
               const void* a, const void* b, float* c)
      : handle_(handle), stream_(stream), s_(s), a_(a), b_(b), c_(c) {}
  void Run() override {
    const float alpha = 1, beta = 0;
    CheckBlas(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(s_.n),
                           static_cast<int>(s_.m), static_cast<int>(s_.k), &alpha, b_,
                           CudaType(s_.dtype), static_cast<int>(s_.n), a_, CudaType(s_.dtype),
                           static_cast<int>(s_.k), &beta, c_, CUDA_R_32F, static_cast<int>(s_.n),
                           ComputeType(s_.dtype), CUBLAS_GEMM_DEFAULT),
              "cublasGemmEx");
  }
  void ReadOutput(void* out) override { CopyToHost(out, c_, s_.m * s_.n * sizeof(float), stream_); }
  std::string Implementation() const override {
    return fmt::format("cublasGemmEx ({})",
                       s_.dtype == DType::kTF32 ? "COMPUTE_32F_FAST_TF32" : "COMPUTE_32F");
  }

 private:
  cublasHandle_t handle_;
  cudaStream_t stream_;
  devices::MatmulSpec s_;
  const void* a_;
  const void* b_;
  float* c_;
};

class LtKernel final : public Kernel {
 public:
  LtKernel(cublasLtHandle_t handle, cudaStream_t stream, void* workspace, size_t workspace_bytes,
           const devices::MatmulSpec& s, const void* a, const void* b, float* c)
      : handle_(handle),
        stream_(stream),
        workspace_(workspace),
        workspace_bytes_(workspace_bytes),
        s_(s),
        a_(a),
        b_(b),
        c_(c) {
    CheckBlas(cublasLtMatmulDescCreate(&op_, ComputeType(s.dtype), CUDA_R_32F),
              "cublasLtMatmulDescCreate");
    const auto ab = CudaType(s.dtype);
    CheckBlas(cublasLtMatrixLayoutCreate(&b_layout_, ab, s.n, s.k, s.n), "layout B");
    CheckBlas(cublasLtMatrixLayoutCreate(&a_layout_, ab, s.k, s.m, s.k), "layout A");
    CheckBlas(cublasLtMatrixLayoutCreate(&c_layout_, CUDA_R_32F, s.n, s.m, s.n), "layout C");
    cublasLtMatmulPreference_t preference = nullptr;
    CheckBlas(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
    CheckBlas(
        cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace_bytes_, sizeof workspace_bytes_),
        "workspace preference");
    int found = 0;
    const cublasStatus_t status =
        cublasLtMatmulAlgoGetHeuristic(handle_, op_, b_layout_, a_layout_, c_layout_, c_layout_,
                                       preference, 1, &heuristic_, &found);
    cublasLtMatmulPreferenceDestroy(preference);
    CheckBlas(status, "cublasLtMatmulAlgoGetHeuristic");
    if (found == 0) {
      throw Error(ErrorCode::kUnsupported,
                  fmt::format("cublasLt has no algorithm for matmul {}x{}x{} {}", s.m, s.n, s.k,
                              devices::Name(s.dtype)));
    }
  }
  ~LtKernel() override {
    cublasLtMatrixLayoutDestroy(a_layout_);
    cublasLtMatrixLayoutDestroy(b_layout_);
    cublasLtMatrixLayoutDestroy(c_layout_);
    cublasLtMatmulDescDestroy(op_);
  }
  void Run() override {
    const float alpha = 1, beta = 0;
    CheckBlas(
        cublasLtMatmul(handle_, op_, &alpha, b_, b_layout_, a_, a_layout_, &beta, c_, c_layout_, c_,
                       c_layout_, &heuristic_.algo, workspace_, workspace_bytes_, stream_),
        "cublasLtMatmul");
  }
  void ReadOutput(void* out) override { CopyToHost(out, c_, s_.m * s_.n * sizeof(float), stream_); }
  std::string Implementation() const override {
    return fmt::format("cublasLtMatmul (heuristic's first algorithm, {} MiB workspace)",
                       workspace_bytes_ >> 20);
  }

 private:
  cublasLtHandle_t handle_;
  cudaStream_t stream_;
  void* workspace_;
  size_t workspace_bytes_;
  devices::MatmulSpec s_;
  const void* a_;
  const void* b_;
  float* c_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, c_layout_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

class ConvKernel final : public Kernel {
 public:
  ConvKernel(cudnnHandle_t handle, cudaStream_t stream, const devices::Conv2dSpec& s,
             const void* src, const void* weights, float* dst)
      : handle_(handle), stream_(stream), s_(s), src_(src), weights_(weights), dst_(dst) {
    CheckDnn(cudnnCreateTensorDescriptor(&x_), "cudnnCreateTensorDescriptor");
    CheckDnn(cudnnCreateTensorDescriptor(&y_), "cudnnCreateTensorDescriptor");
    CheckDnn(cudnnCreateFilterDescriptor(&w_), "cudnnCreateFilterDescriptor");
    CheckDnn(cudnnCreateConvolutionDescriptor(&conv_), "cudnnCreateConvolutionDescriptor");
    const auto i = [](int64_t v) { return static_cast<int>(v); };
    CheckDnn(cudnnSetTensor4dDescriptor(x_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(s.batch),
                                        i(s.in_channels), i(s.in_h), i(s.in_w)),
             "input descriptor");
    CheckDnn(cudnnSetFilter4dDescriptor(w_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, i(s.out_channels),
                                        i(s.in_channels / s.groups), i(s.kernel_h), i(s.kernel_w)),
             "filter descriptor");
    CheckDnn(
        cudnnSetConvolution2dDescriptor(conv_, i(s.pad_h), i(s.pad_w), i(s.stride_h), i(s.stride_w),
                                        1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        "convolution descriptor");
    CheckDnn(cudnnSetConvolutionGroupCount(conv_, i(s.groups)), "group count");
    // fp32 stays on the FMA units; tf32 lets cuDNN use the tensor cores.
    CheckDnn(cudnnSetConvolutionMathType(
                 conv_, s.dtype == DType::kTF32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
             "math type");
    CheckDnn(cudnnSetTensor4dDescriptor(y_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(s.batch),
                                        i(s.out_channels), i(s.out_h()), i(s.out_w())),
             "output descriptor");
    // Like torch.backends.cudnn.benchmark: time the algorithms once, keep the fastest.
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int found = 0;
    CheckDnn(cudnnFindConvolutionForwardAlgorithm(handle_, x_, w_, conv_, y_,
                                                  CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
             "cudnnFindConvolutionForwardAlgorithm");
    int chosen = -1;
    for (int k = 0; k < found; ++k) {
      if (perf[k].status == CUDNN_STATUS_SUCCESS &&
          (s.dtype == DType::kTF32 || perf[k].mathType == CUDNN_FMA_MATH ||
           perf[k].mathType == CUDNN_DEFAULT_MATH)) {
        chosen = k;
        break;
      }
    }
    if (chosen < 0) throw Error(ErrorCode::kUnsupported, "cuDNN found no forward algorithm");
    algo_ = perf[chosen].algo;
    workspace_bytes_ = perf[chosen].memory;
    if (workspace_bytes_ > 0)
      Check(cudaMalloc(&workspace_, workspace_bytes_), "cudaMalloc (cuDNN workspace)");
  }
  ~ConvKernel() override {
    if (workspace_ != nullptr) cudaFree(workspace_);
    cudnnDestroyTensorDescriptor(x_);
    cudnnDestroyTensorDescriptor(y_);
    cudnnDestroyFilterDescriptor(w_);
    cudnnDestroyConvolutionDescriptor(conv_);
  }
  void Run() override {
    const float alpha = 1, beta = 0;
    CheckDnn(cudnnConvolutionForward(handle_, &alpha, x_, src_, w_, weights_, conv_, algo_,
                                     workspace_, workspace_bytes_, &beta, y_, dst_),
             "cudnnConvolutionForward");
  }
  void ReadOutput(void* out) override {
    const size_t n = s_.batch * s_.out_channels * s_.out_h() * s_.out_w();
    CopyToHost(out, dst_, n * sizeof(float), stream_);
  }
  std::string Implementation() const override {
    return fmt::format("cudnnConvolutionForward algo {} ({} math, {} KiB workspace)",
                       static_cast<int>(algo_), s_.dtype == DType::kTF32 ? "tf32" : "fp32 FMA",
                       workspace_bytes_ >> 10);
  }

 private:
  cudnnHandle_t handle_;
  cudaStream_t stream_;
  devices::Conv2dSpec s_;
  const void* src_;
  const void* weights_;
  float* dst_;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_{};
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

class StreamKernelCuda final : public Kernel {
 public:
  StreamKernelCuda(cudaStream_t stream, int sms, devices::StreamOp op, double* a, double* b,
                   double* c, size_t n, int repeat)
      : stream_(stream), blocks_(sms * 8), op_(op), a_(a), b_(b), c_(c), n_(n), repeat_(repeat) {}
  void Run() override {
    for (int r = 0; r < repeat_; ++r) {
      Check(LaunchStream(static_cast<int>(op_), a_, b_, c_, n_, blocks_, stream_),
            "STREAM kernel launch");
    }
  }
  void ReadOutput(void*) override {}
  std::string Implementation() const override {
    return fmt::format("STREAM {} kernel, {} blocks x 256 threads, 16-byte accesses",
                       devices::Name(op_), blocks_);
  }

 private:
  cudaStream_t stream_;
  int blocks_;
  devices::StreamOp op_;
  double *a_, *b_, *c_;
  size_t n_;
  int repeat_;
};

class FmaLoopKernel final : public Kernel {
 public:
  FmaLoopKernel(cudaStream_t stream, int sms, DType dtype)
      : stream_(stream), blocks_(sms * 8), dtype_(dtype) {
    Check(cudaMalloc(&sink_, sizeof(float) * blocks_ * kFmaThreads), "cudaMalloc (FMA sink)");
  }
  ~FmaLoopKernel() override { cudaFree(sink_); }
  double flops_per_run() const {
    const double fmas = double(blocks_) * kFmaThreads * kFmaChains * kIterations;
    return fmas * 2 * (dtype_ == DType::kBF16 ? 2 : 1);
  }
  void Run() override {
    Check(dtype_ == DType::kBF16 ? LaunchFmaLoopBf16(sink_, blocks_, kIterations, stream_)
                                 : LaunchFmaLoopF32(sink_, blocks_, kIterations, stream_),
          "FMA loop launch");
  }
  void ReadOutput(void*) override {}
  std::string Implementation() const override {
    return fmt::format("{} ({} chains per thread, {} blocks x {} threads)",
                       dtype_ == DType::kBF16 ? "HFMA2.BF16 loop" : "FFMA loop", kFmaChains,
                       blocks_, kFmaThreads);
  }

 private:
  static constexpr int kIterations = 1 << 16;
  cudaStream_t stream_;
  int blocks_;
  DType dtype_;
  float* sink_ = nullptr;
};

class CudaDevice final : public devices::Device {
 public:
  explicit CudaDevice(int ordinal) : ordinal_(ordinal) {
    Check(cudaSetDevice(ordinal), "cudaSetDevice");
    Check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    Check(cudaStreamCreateWithFlags(&second_, cudaStreamNonBlocking), "cudaStreamCreate");
    Check(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming), "cudaEventCreate");
    Check(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming), "cudaEventCreate");
    LoadProperties();
  }
  ~CudaDevice() override {
    if (lt_workspace_ != nullptr) cudaFree(lt_workspace_);
    if (blas_ != nullptr) cublasDestroy(blas_);
    if (lt_ != nullptr) cublasLtDestroy(lt_);
    if (dnn_ != nullptr) cudnnDestroy(dnn_);
    cudaEventDestroy(fork_);
    cudaEventDestroy(join_);
    cudaStreamDestroy(stream_);
    cudaStreamDestroy(second_);
  }

  const devices::DeviceProperties& properties() const override { return properties_; }

  void* Allocate(size_t bytes) override {
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, bytes == 0 ? 1 : bytes);
    if (status != cudaSuccess) {
      cudaGetLastError();  // clear the sticky-free allocation error
      size_t free = 0, total = 0;
      cudaMemGetInfo(&free, &total);
      throw Error(ErrorCode::kResourceExhausted,
                  fmt::format("{}: cudaMalloc of {} bytes failed ({}); {} of {} bytes free",
                              properties_.id, bytes, cudaGetErrorString(status), free, total));
    }
    ledger_.Add(p, bytes);
    return p;
  }
  void Free(void* pointer) override {
    if (pointer == nullptr) return;
    if (!ledger_.Remove(pointer)) {
      throw Error(ErrorCode::kInternal, "CudaDevice::Free of a pointer it did not allocate");
    }
    Check(cudaFree(pointer), "cudaFree");
  }
  devices::MemoryStats memory_stats() const override { return ledger_.stats(); }
  void ResetPeakMemory() override { ledger_.ResetPeak(); }

  void* AllocateHost(size_t bytes, HostMemory memory) override {
    if (memory == HostMemory::kPageable) return Device::AllocateHost(bytes, memory);
    void* p = nullptr;
    Check(cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocDefault),
          "cudaHostAlloc (pinned host memory)");
    return p;
  }
  void FreeHost(void* pointer, HostMemory memory) override {
    if (memory == HostMemory::kPageable) return Device::FreeHost(pointer, memory);
    cudaFreeHost(pointer);
  }
  void Upload(void* device_dst, const void* host_src, size_t bytes) override {
    Check(cudaMemcpyAsync(device_dst, host_src, bytes, cudaMemcpyHostToDevice, stream_), "upload");
    Check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  void Download(void* host_dst, const void* device_src, size_t bytes) override {
    CopyToHost(host_dst, device_src, bytes, stream_);
  }

  devices::Applicability CopyApplicability(CopyKind) const override {
    return devices::Applicability::Yes();
  }
  void Copy(void* dst, const void* src, size_t bytes, CopyKind kind) override {
    const cudaMemcpyKind k = kind == CopyKind::kHostToDevice   ? cudaMemcpyHostToDevice
                             : kind == CopyKind::kDeviceToHost ? cudaMemcpyDeviceToHost
                                                               : cudaMemcpyDeviceToDevice;
    if (kind == CopyKind::kBidirectional) {
      throw Error(ErrorCode::kInvalidArgument, "Copy: use CopyBidirectional for bidir");
    }
    Check(cudaMemcpyAsync(dst, src, bytes, k, stream_), "cudaMemcpyAsync");
  }
  // h2d on the main stream, d2h on a second one, joined back so that the timer's
  // stop event waits for both.
  void CopyBidirectional(void* device_dst, const void* host_src, void* host_dst,
                         const void* device_src, size_t bytes) override {
    Check(cudaEventRecord(fork_, stream_), "cudaEventRecord");
    Check(cudaStreamWaitEvent(second_, fork_), "cudaStreamWaitEvent");
    Check(cudaMemcpyAsync(device_dst, host_src, bytes, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync h2d");
    Check(cudaMemcpyAsync(host_dst, device_src, bytes, cudaMemcpyDeviceToHost, second_),
          "cudaMemcpyAsync d2h");
    Check(cudaEventRecord(join_, second_), "cudaEventRecord");
    Check(cudaStreamWaitEvent(stream_, join_), "cudaStreamWaitEvent");
  }
  void Synchronize() override { Check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }
  std::unique_ptr<devices::Timer> CreateTimer() override {
    return std::make_unique<EventTimer>(stream_);
  }

  std::vector<std::string> MatmulImpls() const override { return {"cublas", "cublaslt"}; }
  devices::Applicability MatmulApplicability(const devices::MatmulSpec& spec) const override {
    using devices::Applicability;
    using devices::NotApplicableReason;
    if (spec.impl != "cublas" && spec.impl != "cublaslt") {
      return Applicability::No(
          NotApplicableReason::kUnknownImplementation,
          "unknown implementation '" + spec.impl + "' (cuda has cublas, cublaslt)");
    }
    constexpr int64_t kMax = 2147483647;
    if (spec.m > kMax || spec.n > kMax || spec.k > kMax) {
      return Applicability::No(NotApplicableReason::kTooLarge, "a dimension exceeds 2^31-1");
    }
    return Applicability::Yes();
  }
  std::unique_ptr<Kernel> CreateMatmul(const devices::MatmulSpec& spec, const void* a,
                                       const void* b, float* c) override {
    const devices::Applicability applicability = MatmulApplicability(spec);
    if (!applicability.applicable()) throw Error(ErrorCode::kUnsupported, applicability.text);
    if (spec.impl == "cublas")
      return std::make_unique<GemmExKernel>(Blas(), stream_, spec, a, b, c);
    Lt();
    return std::make_unique<LtKernel>(lt_, stream_, lt_workspace_, kLtWorkspace, spec, a, b, c);
  }
  std::unique_ptr<Kernel> CreateConv2d(const devices::Conv2dSpec& spec, const void* src,
                                       const void* weights, float* dst) override {
    if (spec.dtype != DType::kF32 && spec.dtype != DType::kTF32) {
      throw Error(ErrorCode::kUnsupported,
                  std::string("conv2d ") + devices::Name(spec.dtype) +
                      " on cuda: cuDNN writes outputs in the input type, and the conv2d "
                      "benchmark's output is fp32; use fp32 or tf32");
    }
    return std::make_unique<ConvKernel>(Dnn(), stream_, spec, src, weights, dst);
  }
  std::unique_ptr<Kernel> CreateStream(devices::StreamOp op, double* a, double* b, double* c,
                                       size_t n, int repeat) override {
    return std::make_unique<StreamKernelCuda>(stream_, properties_.compute_units, op, a, b, c, n,
                                              repeat);
  }
  std::unique_ptr<Kernel> CreatePeakLoop(DType dtype, double* flops_per_run) override {
    if (dtype != DType::kF32 && dtype != DType::kBF16) {
      throw Error(ErrorCode::kUnsupported,
                  std::string("no ") + devices::Name(dtype) + " FMA loop on the cuda backend");
    }
    auto kernel = std::make_unique<FmaLoopKernel>(stream_, properties_.compute_units, dtype);
    *flops_per_run = kernel->flops_per_run();
    return kernel;
  }
  std::unique_ptr<devices::Network> CreateNetwork(const devices::NetworkSpec& spec,
                                                  const devices::NetworkOptions& options) override {
    return CreateCudnnNetwork(*this, Dnn(), Blas(), stream_, spec, options);
  }

  uint64_t AvailableMemory() const override {
    size_t free = 0, total = 0;
    Check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return free;
  }

 private:
  static constexpr size_t kLtWorkspace = size_t{32} << 20;

  cublasHandle_t Blas() {
    if (blas_ == nullptr) {
      CheckBlas(cublasCreate(&blas_), "cublasCreate");
      CheckBlas(cublasSetStream(blas_, stream_), "cublasSetStream");
    }
    return blas_;
  }
  void Lt() {
    if (lt_ == nullptr) {
      CheckBlas(cublasLtCreate(&lt_), "cublasLtCreate");
      Check(cudaMalloc(&lt_workspace_, kLtWorkspace), "cudaMalloc (cublasLt workspace)");
    }
  }
  cudnnHandle_t Dnn() {
    if (dnn_ == nullptr) {
      CheckDnn(cudnnCreate(&dnn_), "cudnnCreate");
      CheckDnn(cudnnSetStream(dnn_, stream_), "cudnnSetStream");
    }
    return dnn_;
  }

  void LoadProperties() {
    cudaDeviceProp p{};
    Check(cudaGetDeviceProperties(&p, ordinal_), "cudaGetDeviceProperties");
    const auto attribute = [&](cudaDeviceAttr a) {
      int v = 0;
      Check(cudaDeviceGetAttribute(&v, a, ordinal_), "cudaDeviceGetAttribute");
      return v;
    };
    devices::DeviceProperties& d = properties_;
    d.id = "cuda:" + std::to_string(ordinal_);
    d.kind = "cuda";
    d.name = p.name;
    d.microarchitecture = fmt::format("sm_{}{}", p.major, p.minor);
    d.compute_units = p.multiProcessorCount;
    d.compute_units_available = p.multiProcessorCount;
    d.clock_ghz = attribute(cudaDevAttrClockRate) / 1e6;
    d.clock_source = "cudaDevAttrClockRate (the peak SM clock)";
    d.memory_bytes = p.totalGlobalMem;
    GpuFacts facts;
    facts.name = p.name;
    facts.cc_major = p.major;
    facts.cc_minor = p.minor;
    facts.sms = p.multiProcessorCount;
    facts.clock_ghz = d.clock_ghz;
    facts.memory_clock_ghz = attribute(cudaDevAttrMemoryClockRate) / 1e6;
    facts.bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth);
    GpuPeaks peaks = PeaksFor(facts);
    d.peaks = std::move(peaks.peaks);
    d.features.push_back("peaks: " + peaks.source);
    if (peaks.memory_bytes_per_second > 0) {
      d.features.push_back(fmt::format("memory bandwidth {:.2f} TB/s theoretical: {}",
                                       peaks.memory_bytes_per_second / 1e12, peaks.memory_formula));
    }
    d.caches.push_back({"L2", static_cast<uint64_t>(p.l2CacheSize), p.multiProcessorCount});
    d.caches_source = "cudaDeviceProp::l2CacheSize";
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    d.runtime = fmt::format("CUDA runtime {}.{}, driver API {}.{}, cuBLAS {}, cuDNN {}",
                            runtime / 1000, runtime % 1000 / 10, driver / 1000, driver % 1000 / 10,
                            cublasLtGetVersion(), cudnnGetVersion());
    d.capabilities = devices::DeviceCapabilities{
        .network_layout = devices::Layout::kNchw,
        .trace_activities = {Activity::kCuda},  // CUPTI: kernels, copies, linked to their scopes
        // The FMA loop runs on the CUDA cores; tensor-core types have no such ceiling.
        .peak_loop_dtypes = {devices::DType::kF32},
        .has_networks = true,
        .copy_method =
            "memcpy is the runtime's device-to-device copy (cudaMemcpyAsync); copy/scale/add/"
            "triad are STREAM kernels on the SMs (16-byte loads and stores), repeated until a "
            "run moves >= 16 MiB per array. Times are device-event times on one stream.",
    };
  }

  int ordinal_;
  cudaStream_t stream_{}, second_{};
  cudaEvent_t fork_{}, join_{};
  devices::DeviceProperties properties_;
  devices::AllocationLedger ledger_;
  cublasHandle_t blas_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  void* lt_workspace_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
};

}  // namespace

int CountDevices(std::string* why) {
  // Without the driver library there is no device to find, and the runtime is
  // not initialised for nothing: its initialisation leaves dynamic TLS that
  // LeakSanitizer (GCC 12) misreads at exit on GPU-less machines.
  if (::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) == nullptr) {
    if (why != nullptr) {
      const char* error = ::dlerror();
      *why = std::string("no NVIDIA driver: libcuda.so.1 cannot be loaded (") +
             (error != nullptr ? error : "dlopen failed") + ")";
    }
    return 0;
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    if (why != nullptr) {
      *why = fmt::format("cudaGetDeviceCount: {} ({})", cudaGetErrorString(status),
                         cudaGetErrorName(status));
    }
    return 0;
  }
  if (count == 0 && why != nullptr) *why = "the CUDA runtime sees no device";
  return count;
}

std::unique_ptr<devices::Device> OpenCudaDevice(int ordinal) {
  std::string why;
  const int count = CountDevices(&why);
  if (ordinal < 0 || ordinal >= count) {
    throw Error(ErrorCode::kUnsupported,
                count == 0 ? fmt::format("unavailable device 'cuda:{}': no CUDA device here ({}; "
                                         "is an NVIDIA GPU visible, with its driver?)",
                                         ordinal, why)
                           : fmt::format("unavailable device 'cuda:{}': this machine has {} CUDA "
                                         "device(s), cuda:0 to cuda:{}",
                                         ordinal, count, count - 1));
  }
  return std::make_unique<CudaDevice>(ordinal);
}

}  // namespace opscope::cuda
