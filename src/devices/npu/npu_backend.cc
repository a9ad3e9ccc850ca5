// libopscope_backend_npu.so: Huawei Ascend NPUs through AscendCL's runtime,
// loaded at run time (acl_runtime.h). Properties, memory accounting, copies
// on streams timed by events, synchronisation: what `opscope bw` needs.
// Matmul and convolution through aclnn are not wired yet (issue 52, item 3):
// they are said not applicable, with that reason.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#include "core/datasheet.h"
#include "devices/backend.h"
#include "devices/npu/acl_runtime.h"

namespace opscope::npu {
namespace {

using devices::Applicability;
using devices::CopyKind;
using devices::NotApplicableReason;

constexpr const char* kNotYet =
    "aclnn operators are not wired into opscope yet: the NPU backend measures copies only";

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
    p.capabilities.copy_method = "aclrtMemcpyAsync on streams, timed by aclrtRecordEvent";
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
  ~NpuDevice() override {
    acl_->DestroyEvent(fork_);
    acl_->DestroyEvent(join_);
    acl_->DestroyStream(second_);
    acl_->DestroyStream(stream_);
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
  void Free(void* pointer) override {
    if (pointer == nullptr) return;
    ledger_.Remove(pointer);
    acl_->Check(acl_->Free(pointer), "aclrtFree");
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
    if (pointer != nullptr) acl_->Check(acl_->FreeHost(pointer), "aclrtFreeHost");
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

  std::vector<std::string> MatmulImpls() const override { return {}; }
  Applicability MatmulApplicability(const devices::MatmulSpec&) const override {
    return Applicability::No(NotApplicableReason::kMissingFeature, kNotYet);
  }
  std::unique_ptr<devices::Kernel> CreateMatmul(const devices::MatmulSpec&, const void*,
                                                const void*, float*) override {
    throw Error(ErrorCode::kUnsupported, properties_.id + ": " + kNotYet);
  }
  std::unique_ptr<devices::Kernel> CreateConv2d(const devices::Conv2dSpec&, const void*,
                                                const void*, float*) override {
    throw Error(ErrorCode::kUnsupported, properties_.id + ": " + kNotYet);
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
