// libopscope_backend_npu.so: Huawei Ascend NPUs through AscendCL's runtime,
// loaded at run time (acl_runtime.h). Properties, memory accounting, copies
// on streams timed by events, synchronisation: what `opscope bw` needs.
// Matmul and convolution through aclnn (libopapi.so, loaded at run time
// too), fp32, fp16 and bf16, a result aclnn writes in the inputs' type
// widened when read back (AclnnKernel); STREAM kernels and the FMA loop are
// not wired yet: they are said not applicable, with that reason.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "core/datasheet.h"
#include "devices/backend.h"
#include "devices/npu/acl_runtime.h"

namespace opscope::npu {
namespace {

using devices::Applicability;
using devices::CopyKind;
using devices::NotApplicableReason;

constexpr const char* kNotYet =
    "not wired into opscope's NPU backend yet (it has copies, aclnnMatmul and aclnnConvolution)";

class NpuTimer final : public devices::Timer {
 public:
  NpuTimer(std::shared_ptr<AclRuntime> acl, aclrtStream stream)
      : acl_(std::move(acl)), stream_(stream) {
    acl_->Check(acl_->CreateEvent(&start_), "aclrtCreateEvent");
    acl_->Check(acl_->CreateEvent(&stop_), "aclrtCreateEvent");
  }
  ~NpuTimer() override {
    acl_->DestroyEvent(start_);
    acl_->DestroyEvent(stop_);
  }
  void Start() override { acl_->Check(acl_->RecordEvent(start_, stream_), "aclrtRecordEvent"); }
  double StopMs() override {
    acl_->Check(acl_->RecordEvent(stop_, stream_), "aclrtRecordEvent");
    // The reference's order: record both events, synchronise the stream,
    // then read the time between them.
    acl_->Check(acl_->SynchronizeStream(stream_), "aclrtSynchronizeStream");
    float ms = 0;
    acl_->Check(acl_->EventElapsedTime(&ms, start_, stop_), "aclrtEventElapsedTime");
    return ms;
  }

 private:
  std::shared_ptr<AclRuntime> acl_;
  aclrtStream stream_;
  aclrtEvent start_ = nullptr, stop_ = nullptr;
};

// The aclDataType of a benchmark's element type (tf32 has none: fp32 storage).
int AclType(devices::DType dtype) {
  switch (dtype) {
    case devices::DType::kF16: return kAclFloat16;
    case devices::DType::kBF16: return kAclBf16;
    case devices::DType::kF32:
    case devices::DType::kTF32: return kAclFloat;
  }
  return kAclFloat;
}

// What an aclnn operator kernel shares: its contiguous tensors (destroyed
// with it), a workspace grown to what the operator asks, the two-stage launch
// (an executor serves one launch, so each Run asks for the workspace again,
// as the reference's two-stage calls go), and the output read back as fp32.
// `stored`: the type the operator writes its output in. A bf16 or fp16
// output lies in the first half of the fp32 buffer the benchmark gave and is
// widened on the host when read back (outside the timed runs).
class AclnnKernel : public devices::Kernel {
 public:
  AclnnKernel(std::shared_ptr<AclRuntime> acl, const AclnnApi* nn, aclrtStream stream,
              float* output, int64_t elements, devices::DType stored = devices::DType::kF32)
      : acl_(std::move(acl)),
        nn_(nn),
        stream_(stream),
        output_data_(output),
        elements_(elements),
        stored_(stored) {}
  ~AclnnKernel() override {
    for (aclTensor* t : tensors_) nn_->DestroyTensor(t);
    if (workspace_ != nullptr) acl_->Free(workspace_);
  }
  void ReadOutput(void* out) override {
    acl_->Check(acl_->SynchronizeStream(stream_), "aclrtSynchronizeStream");
    const auto n = static_cast<size_t>(elements_);
    if (stored_ == devices::DType::kF32) {
      const size_t bytes = n * sizeof(float);
      acl_->Check(acl_->Memcpy(out, bytes, output_data_, bytes, kMemcpyDeviceToHost),
                  "aclrtMemcpy");
      return;
    }
    std::vector<uint16_t> narrow(n);
    const size_t bytes = n * sizeof(uint16_t);
    acl_->Check(acl_->Memcpy(narrow.data(), bytes, output_data_, bytes, kMemcpyDeviceToHost),
                "aclrtMemcpy");
    auto* wide = static_cast<float*>(out);
    for (size_t i = 0; i < n; ++i) {
      wide[i] = static_cast<float>(devices::LoadAsDouble(narrow.data(), stored_, i));
    }
  }
  devices::DType OutputType() const override { return stored_; }

 protected:
  // A contiguous (row-major) tensor over device memory.
  aclTensor* Tensor(std::span<const int64_t> dims, int type, int format, const void* data) {
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
    aclTensor* t = nn_->CreateTensor(dims.data(), dims.size(), type, strides.data(), 0, format,
                                     dims.data(), dims.size(), const_cast<void*>(data));
    if (t == nullptr) {
      throw Error(
          ErrorCode::kInternal,
          fmt::format("aclnn: aclCreateTensor of a {} tensor returned null", fmt::join(dims, "x")));
    }
    tensors_.push_back(t);
    return t;
  }
  // The first stage (`prepare` fills the workspace size and the executor),
  // then the launch on the kernel's stream.
  template <typename Prepare>
  void Launch(const char* prepare_name, Prepare&& prepare, const char* launch_name,
              int (*launch)(void*, uint64_t, aclOpExecutor*, aclrtStream)) {
    uint64_t bytes = 0;
    aclOpExecutor* executor = nullptr;
    acl_->Check(prepare(&bytes, &executor), prepare_name);
    if (bytes > workspace_bytes_) {
      if (workspace_ != nullptr) acl_->Free(workspace_);
      workspace_ = nullptr, workspace_bytes_ = 0;
      acl_->Check(acl_->Malloc(&workspace_, bytes, kMallocHugeFirst), "aclrtMalloc");
      workspace_bytes_ = bytes;
    }
    acl_->Check(launch(bytes > 0 ? workspace_ : nullptr, bytes, executor, stream_), launch_name);
  }

  std::shared_ptr<AclRuntime> acl_;
  const AclnnApi* nn_;

 private:
  aclrtStream stream_;
  float* output_data_;
  int64_t elements_;
  devices::DType stored_;
  std::vector<aclTensor*> tensors_;
  void* workspace_ = nullptr;
  uint64_t workspace_bytes_ = 0;
};

// C[m,n] = A[m,k] * B[k,n] by aclnnMatmul (cubeMathType 0: the inputs' type
// kept): fp32 in and out; fp16 inputs with an fp32 output (the reference's
// one exception to "out has the inputs' type"); bf16 in and out (Atlas A2
// and later), widened when read back.
class NpuMatmul final : public AclnnKernel {
 public:
  NpuMatmul(std::shared_ptr<AclRuntime> acl, const AclnnApi* nn, aclrtStream stream,
            const devices::MatmulSpec& spec, const void* a, const void* b, float* c)
      : AclnnKernel(
            std::move(acl), nn, stream, c, spec.m * spec.n,
            spec.dtype == devices::DType::kBF16 ? devices::DType::kBF16 : devices::DType::kF32) {
    const int in_type = AclType(spec.dtype);
    a_ = Tensor(std::array{spec.m, spec.k}, in_type, kFormatNd, a);
    b_ = Tensor(std::array{spec.k, spec.n}, in_type, kFormatNd, b);
    c_ = Tensor(std::array{spec.m, spec.n}, AclType(OutputType()), kFormatNd, c);
  }
  void Run() override {
    Launch(
        "aclnnMatmulGetWorkspaceSize",
        [&](uint64_t* bytes, aclOpExecutor** executor) {
          return nn_->MatmulGetWorkspaceSize(a_, b_, c_, 0, bytes, executor);
        },
        "aclnnMatmul", nn_->Matmul);
  }
  std::string Implementation() const override {
    return "aclnnMatmul (cubeMathType 0: the inputs' type kept)";
  }

 private:
  aclTensor *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;
};

// Forward convolution by aclnnConvolution (cubeMathType 0): NCHW input, OIHW
// weights, no bias, an NCHW output in the inputs' type (fp32, fp16, or bf16
// on Atlas A2 and later), a narrower one widened when read back.
class NpuConv2d final : public AclnnKernel {
 public:
  NpuConv2d(std::shared_ptr<AclRuntime> acl, const AclnnApi* nn, aclrtStream stream,
            const devices::Conv2dSpec& s, const void* src, const void* weights, float* dst)
      : AclnnKernel(std::move(acl), nn, stream, dst,
                    s.batch * s.out_channels * s.out_h() * s.out_w(), s.dtype),
        groups_(s.groups) {
    const int type = AclType(s.dtype);
    input_ = Tensor(std::array{s.batch, s.in_channels, s.in_h, s.in_w}, type, kFormatNchw, src);
    weight_ = Tensor(std::array{s.out_channels, s.in_channels / s.groups, s.kernel_h, s.kernel_w},
                     type, kFormatNchw, weights);
    output_ =
        Tensor(std::array{s.batch, s.out_channels, s.out_h(), s.out_w()}, type, kFormatNchw, dst);
    const auto ints = [&](int64_t a, int64_t b) {
      const int64_t v[2] = {a, b};
      void* array = nn_->CreateIntArray(v, 2);
      if (array == nullptr)
        throw Error(ErrorCode::kInternal, "aclnn: aclCreateIntArray returned null");
      arrays_.push_back(array);
      return array;
    };
    stride_ = ints(s.stride_h, s.stride_w);
    padding_ = ints(s.pad_h, s.pad_w);
    dilation_ = ints(1, 1);
    output_padding_ = ints(0, 0);
  }
  ~NpuConv2d() override {
    for (void* a : arrays_) nn_->DestroyIntArray(a);
  }
  void Run() override {
    Launch(
        "aclnnConvolutionGetWorkspaceSize",
        [&](uint64_t* bytes, aclOpExecutor** executor) {
          return nn_->ConvolutionGetWorkspaceSize(input_, weight_, nullptr, stride_, padding_,
                                                  dilation_, false, output_padding_, groups_,
                                                  output_, 0, bytes, executor);
        },
        "aclnnConvolution", nn_->Convolution);
  }
  std::string Implementation() const override {
    return "aclnnConvolution (cubeMathType 0: the inputs' type kept)";
  }

 private:
  int64_t groups_;
  aclTensor *input_ = nullptr, *weight_ = nullptr, *output_ = nullptr;
  std::vector<void*> arrays_;
  void *stride_ = nullptr, *padding_ = nullptr, *dilation_ = nullptr, *output_padding_ = nullptr;
};

class NpuDevice final : public devices::Device {
 public:
  NpuDevice(std::shared_ptr<AclRuntime> acl, int ordinal)
      : acl_(std::move(acl)), ordinal_(ordinal) {
    acl_->Check(acl_->SetDevice(ordinal_), "aclrtSetDevice");
    acl_->Check(acl_->CreateStream(&stream_), "aclrtCreateStream");
    acl_->Check(acl_->CreateStream(&second_), "aclrtCreateStream");
    acl_->Check(acl_->CreateEvent(&fork_), "aclrtCreateEvent");
    acl_->Check(acl_->CreateEvent(&join_), "aclrtCreateEvent");
    auto& p = properties_;
    p.id = fmt::format("npu:{}", ordinal_);
    p.kind = "npu";
    const char* soc = acl_->GetSocName != nullptr ? acl_->GetSocName() : nullptr;
    p.name = soc != nullptr && *soc != 0 ? soc : "Ascend NPU";
    size_t free_bytes = 0, total = 0;
    if (acl_->GetMemInfo(kHbmMemory, &free_bytes, &total) == 0) p.memory_bytes = total;
    p.runtime = "AscendCL runtime (" + acl_->path + ")";
    p.clock_source = "not read (AscendCL gives no clock)";
    Cores(p);
    p.capabilities.copy_method = "aclrtMemcpyAsync on streams, timed by aclrtRecordEvent";
    nn_ = LoadAclnn(&nn_why_);
    // The chip's figures where the datasheet knows the part ("Ascend910B3").
    if (const core::Datasheet* d = core::FindDatasheet(p.name);
        d != nullptr && d->vendor == "Huawei") {
      static const std::pair<std::string_view, devices::DType> kTypes[] = {
          {"fp32", devices::DType::kF32},
          {"bf16", devices::DType::kBF16},
          {"fp16", devices::DType::kF16}};
      for (const auto& [key, type] : kTypes) {
        for (const auto& [dtype, tflops] : d->tflops) {
          if (dtype == key) {
            p.peaks.push_back(
                {type, tflops * 1e12, fmt::format("{} TFLOP/s {} ({})", tflops, key, d->source)});
          }
        }
      }
    }
  }
  // AI Cores (the compute units), Vector Cores and the L2 buffer, where this
  // AscendCL says: aclrtGetDeviceInfo, else aclGetDeviceCapability.
  void Cores(devices::DeviceProperties& p) const {
    const auto ask = [&](int attr, int capability) -> int64_t {
      int64_t v = 0;
      const auto device = static_cast<uint32_t>(ordinal_);
      if (acl_->GetDeviceInfo != nullptr && attr >= 0 &&
          acl_->GetDeviceInfo(device, attr, &v) == 0 && v > 0) {
        return v;
      }
      if (acl_->GetDeviceCapability != nullptr &&
          acl_->GetDeviceCapability(device, capability, &v) == 0 && v > 0) {
        return v;
      }
      return 0;
    };
    const int64_t ai_cores = ask(101, 0), vector_cores = ask(201, 1), l2 = ask(-1, 2);
    p.compute_units = p.compute_units_available = static_cast<int>(ai_cores);
    if (ai_cores > 0) p.features.push_back(fmt::format("{} AI Cores", ai_cores));
    if (vector_cores > 0) p.features.push_back(fmt::format("{} Vector Cores", vector_cores));
    if (l2 > 0) {
      p.caches.push_back(
          {"L2", static_cast<uint64_t>(l2), static_cast<int>(std::max<int64_t>(ai_cores, 1))});
      p.caches_source = "aclGetDeviceCapability";
    } else {
      p.caches_source = "not given by this AscendCL";
    }
  }

  ~NpuDevice() override {
    acl_->DestroyEvent(fork_);
    acl_->DestroyEvent(join_);
    acl_->DestroyStream(second_);
    acl_->DestroyStream(stream_);
    acl_->ResetDevice(ordinal_);  // pairs with aclrtSetDevice
  }

  const devices::DeviceProperties& properties() const override { return properties_; }

  void* Allocate(size_t bytes) override {
    void* p = nullptr;
    if (const aclError s = acl_->Malloc(&p, bytes, kMallocHugeFirst); s != 0 || p == nullptr) {
      throw Error(ErrorCode::kResourceExhausted,
                  fmt::format("{}: cannot allocate {} bytes ({}); {} bytes free", properties_.id,
                              bytes, acl_->Why("aclrtMalloc", s), AvailableMemory()));
    }
    ledger_.Add(p, bytes);
    return p;
  }
  // Called from destructors (Buffer's), also while an error unwinds: a free
  // that fails (a lost device) is not thrown on top of the error that
  // matters; the ledger forgets the block either way.
  void Free(void* pointer) override {
    if (pointer == nullptr) return;
    ledger_.Remove(pointer);
    acl_->Free(pointer);
  }
  devices::MemoryStats memory_stats() const override { return ledger_.stats(); }
  void ResetPeakMemory() override { ledger_.ResetPeak(); }

  void* AllocateHost(size_t bytes, devices::HostMemory memory) override {
    if (memory == devices::HostMemory::kPageable) return Device::AllocateHost(bytes, memory);
    void* p = nullptr;
    if (const aclError s = acl_->MallocHost(&p, bytes); s != 0 || p == nullptr) {
      throw Error(ErrorCode::kResourceExhausted,
                  fmt::format("{}: cannot allocate {} bytes of pinned host memory ({})",
                              properties_.id, bytes, acl_->Why("aclrtMallocHost", s)));
    }
    return p;
  }
  void FreeHost(void* pointer, devices::HostMemory memory) override {
    if (memory == devices::HostMemory::kPageable) return Device::FreeHost(pointer, memory);
    if (pointer != nullptr) acl_->FreeHost(pointer);  // as Free: never thrown from a destructor
  }
  void Upload(void* device_dst, const void* host_src, size_t bytes) override {
    if (bytes == 0) return;
    acl_->Check(acl_->Memcpy(device_dst, bytes, host_src, bytes, kMemcpyHostToDevice),
                "aclrtMemcpy");
  }
  void Download(void* host_dst, const void* device_src, size_t bytes) override {
    if (bytes == 0) return;
    acl_->Check(acl_->Memcpy(host_dst, bytes, device_src, bytes, kMemcpyDeviceToHost),
                "aclrtMemcpy");
  }

  Applicability CopyApplicability(CopyKind) const override { return Applicability::Yes(); }
  void Copy(void* dst, const void* src, size_t bytes, CopyKind kind) override {
    if (kind == CopyKind::kBidirectional) {
      throw Error(ErrorCode::kInvalidArgument, "Copy: use CopyBidirectional for bidir");
    }
    const int how = kind == CopyKind::kHostToDevice   ? kMemcpyHostToDevice
                    : kind == CopyKind::kDeviceToHost ? kMemcpyDeviceToHost
                                                      : kMemcpyDeviceToDevice;
    acl_->Check(acl_->MemcpyAsync(dst, bytes, src, bytes, how, stream_), "aclrtMemcpyAsync");
  }
  // The device-to-host copy on a second stream, forked from and joined back
  // into the main one, so that a timer on the main stream spans both.
  void CopyBidirectional(void* device_dst, const void* host_src, void* host_dst,
                         const void* device_src, size_t bytes) override {
    acl_->Check(acl_->RecordEvent(fork_, stream_), "aclrtRecordEvent");
    acl_->Check(acl_->StreamWaitEvent(second_, fork_), "aclrtStreamWaitEvent");
    acl_->Check(acl_->MemcpyAsync(device_dst, bytes, host_src, bytes, kMemcpyHostToDevice, stream_),
                "aclrtMemcpyAsync");
    acl_->Check(acl_->MemcpyAsync(host_dst, bytes, device_src, bytes, kMemcpyDeviceToHost, second_),
                "aclrtMemcpyAsync");
    acl_->Check(acl_->RecordEvent(join_, second_), "aclrtRecordEvent");
    acl_->Check(acl_->StreamWaitEvent(stream_, join_), "aclrtStreamWaitEvent");
  }
  void Synchronize() override {
    acl_->Check(acl_->SynchronizeStream(stream_), "aclrtSynchronizeStream");
  }
  std::unique_ptr<devices::Timer> CreateTimer() override {
    return std::make_unique<NpuTimer>(acl_, stream_);
  }

  // Listed also where aclnn cannot be loaded: its cases are then waived, saying why.
  std::vector<std::string> MatmulImpls() const override { return {"aclnn"}; }
  Applicability MatmulApplicability(const devices::MatmulSpec& spec) const override {
    if (nn_ == nullptr) return Applicability::No(NotApplicableReason::kMissingFeature, nn_why_);
    if (!spec.impl.empty() && spec.impl != "aclnn") {
      return Applicability::No(NotApplicableReason::kUnknownImplementation,
                               "the NPU's matmul is aclnn ('" + spec.impl + "' is not)");
    }
    if (spec.dtype == devices::DType::kTF32) {
      return Applicability::No(NotApplicableReason::kUnsupportedDtype,
                               "tf32 is CUDA's: the NPU's reduced-precision fp32 (HF32, "
                               "cubeMathType 1) is not measured by opscope");
    }
    return Applicability::Yes();
  }
  std::unique_ptr<devices::Kernel> CreateMatmul(const devices::MatmulSpec& spec, const void* a,
                                                const void* b, float* c) override {
    if (const Applicability x = MatmulApplicability(spec); !x.applicable()) {
      throw Error(ErrorCode::kUnsupported, properties_.id + ": " + x.text);
    }
    return std::make_unique<NpuMatmul>(acl_, nn_, stream_, spec, a, b, c);
  }
  std::unique_ptr<devices::Kernel> CreateConv2d(const devices::Conv2dSpec& spec, const void* src,
                                                const void* weights, float* dst) override {
    if (nn_ == nullptr) throw Error(ErrorCode::kUnsupported, properties_.id + ": " + nn_why_);
    if (nn_->Convolution == nullptr) {
      throw Error(ErrorCode::kUnsupported,
                  properties_.id + ": this aclnn has no aclnnConvolution or aclCreateIntArray");
    }
    if (spec.dtype == devices::DType::kTF32) {
      throw Error(ErrorCode::kUnsupported,
                  properties_.id +
                      ": tf32 is CUDA's: the NPU's reduced-precision fp32 (HF32, cubeMathType "
                      "1) is not measured by opscope");
    }
    return std::make_unique<NpuConv2d>(acl_, nn_, stream_, spec, src, weights, dst);
  }
  std::unique_ptr<devices::Kernel> CreateStream(devices::StreamOp, double*, double*, double*,
                                                size_t, int) override {
    throw Error(ErrorCode::kUnsupported, properties_.id + ": " + kNotYet);
  }
  std::unique_ptr<devices::Kernel> CreatePeakLoop(devices::DType, double*) override {
    throw Error(ErrorCode::kUnsupported, properties_.id + ": " + kNotYet);
  }
  uint64_t AvailableMemory() const override {
    size_t free_bytes = 0, total = 0;
    return acl_->GetMemInfo(kHbmMemory, &free_bytes, &total) == 0 ? free_bytes : 0;
  }

 private:
  std::shared_ptr<AclRuntime> acl_;
  int ordinal_;
  aclrtStream stream_ = nullptr, second_ = nullptr;
  aclrtEvent fork_ = nullptr, join_ = nullptr;
  devices::DeviceProperties properties_;
  devices::AllocationLedger ledger_;
  const AclnnApi* nn_ = nullptr;  // null: no aclnn here, nn_why_ says why
  std::string nn_why_;
};

int CountDevices(std::string* why) {
  const auto acl = LoadAclRuntime(why);
  if (!acl) return 0;
  uint32_t count = 0;
  if (const aclError s = acl->GetDeviceCount(&count); s != 0) {
    if (why != nullptr) *why = "AscendCL: " + acl->Why("aclrtGetDeviceCount", s);
    return 0;
  }
  if (count == 0 && why != nullptr) *why = "AscendCL sees no NPU";
  return static_cast<int>(count);
}

std::unique_ptr<devices::Device> Open(int ordinal, const devices::DeviceOptions&) {
  std::string why;
  const auto acl = LoadAclRuntime(&why);
  if (!acl) throw Error(ErrorCode::kUnsupported, why);
  const int count = CountDevices(&why);
  if (ordinal < 0 || ordinal >= count) {
    throw Error(ErrorCode::kUnsupported,
                count > 0 ? fmt::format("no device 'npu:{}': AscendCL sees {} NPU{} (npu:0 to "
                                        "npu:{})",
                                        ordinal, count, count == 1 ? "" : "s", count - 1)
                          : fmt::format("no device 'npu:{}': {}", ordinal, why));
  }
  return std::make_unique<NpuDevice>(acl, ordinal);
}

const devices::BackendApi kApi{devices::kBackendAbi, "npu", CountDevices, Open, nullptr, ""};

}  // namespace
}  // namespace opscope::npu

extern "C" __attribute__((visibility("default"))) const opscope::devices::BackendApi*
opscope_backend_v1() {
  return &opscope::npu::kApi;
}
