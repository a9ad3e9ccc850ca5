// The Device interface: what every backend (cpu/, cuda/) provides to the
// benchmarks, and nothing more. Benchmarks are written once against it.
//
// Contract: Allocate() throws Error(kResourceExhausted) stating how much was asked
// and how much is available; Copy() of a kind the device does not have throws
// Error(kUnsupported) saying why; kernels run on the device's queue and
// Synchronize() waits for them (a no-op on the CPU, still always called).
#ifndef OPSCOPE_DEVICES_DEVICE_H_
#define OPSCOPE_DEVICES_DEVICE_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "devices/dtype.h"
#include "devices/network.h"
#include "opscope/opscope.h"

namespace opscope::devices {

// A theoretical peak, with the formula it comes from.
struct Peak {
  DType dtype;
  double flops_per_second = 0;
  std::string formula;
};

struct CacheLevel {
  std::string name;  // "L1d", "L2", "L3"
  uint64_t bytes = 0;
  int shared_by = 1;  // logical CPUs sharing one instance
};

// Why a case cannot run on a device: a code for programs, a text for people
// (reports show it as WAIVED, never as failed).
enum class NotApplicableReason : uint8_t {
  kApplicable,             // it can run
  kUnknownImplementation,  // the implementation named is not one this device has
  kUnsupportedDtype,       // the data type is not one this implementation takes here
  kNoSuchCopy,             // the copy kind does not exist on this device
  kMissingFeature,         // the hardware or library lacks what the case needs
  kTooLarge,               // a dimension or size beyond what the implementation takes
};

struct Applicability {
  NotApplicableReason reason = NotApplicableReason::kApplicable;
  std::string text;  // empty when applicable
  bool applicable() const { return reason == NotApplicableReason::kApplicable; }
  static Applicability Yes() { return {}; }
  static Applicability No(NotApplicableReason reason, std::string text) {
    return {reason, std::move(text)};
  }
};

// What a backend's devices can do, asked of the device instead of comparing
// kind strings.
struct DeviceCapabilities {
  Layout network_layout = Layout::kNchw;   // the layout networks run in unless told
  std::vector<Activity> trace_activities;  // what a Profiler enables to trace work on it
  std::vector<DType> peak_loop_dtypes;     // the dtypes CreatePeakLoop measures
  bool has_networks = false;               // CreateNetwork builds networks (ResNet-50)
  // How copies and STREAM kernels are implemented, for reports.
  std::string copy_method;
};

struct DeviceProperties {
  std::string id;    // "cpu", "cuda:0"
  std::string kind;  // "cpu", "cuda"
  std::string name;  // model name
  std::string microarchitecture;
  int compute_units = 0;  // cores used: CPU threads, CUDA SMs, NPU AI Cores
  int compute_units_available = 0;
  double clock_ghz = 0;
  std::string clock_source;
  std::vector<std::string> features;
  std::vector<Peak> peaks;
  std::vector<CacheLevel> caches;
  // Where `caches` came from ("sysfs", "CPUID leaf 4", ...), or, when it is
  // empty, why no cache could be read: reports print it instead of a size.
  std::string caches_source;
  uint64_t memory_bytes = 0;
  std::string runtime;  // library versions the kernels use
  DeviceCapabilities capabilities;
};

// The compute units by their name on the device: "2 threads" (CPU), "132
// SMs" (CUDA), "20 AI Cores" (NPU), else "N compute units".
std::string ComputeUnitsText(const DeviceProperties& p);

// kBidirectional: a host-to-device and a device-to-host copy at once (CopyBidirectional).
enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice, kBidirectional };
const char* Name(CopyKind kind);  // "h2d", "d2h", "d2d", "bidir"

// Host memory for transfers: pageable (malloc) or page-locked (pinned).
enum class HostMemory { kPageable, kPinned };
const char* Name(HostMemory memory);  // "pageable", "pinned"

struct MemoryStats {
  uint64_t current_bytes = 0;
  uint64_t peak_bytes = 0;
  uint64_t allocations = 0;
};

// A device's record of its live allocations: current and peak bytes. Safe to
// use from several threads.
class AllocationLedger {
 public:
  void Add(void* pointer, size_t bytes) {
    std::lock_guard lock(mutex_);
    sizes_[pointer] = bytes;
    stats_.current_bytes += bytes;
    stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.current_bytes);
    ++stats_.allocations;
  }
  // False for a pointer that was never added (or already removed).
  bool Remove(void* pointer) {
    std::lock_guard lock(mutex_);
    const auto it = sizes_.find(pointer);
    if (it == sizes_.end()) return false;
    stats_.current_bytes -= it->second;
    sizes_.erase(it);
    return true;
  }
  MemoryStats stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
  }
  void ResetPeak() {
    std::lock_guard lock(mutex_);
    stats_.peak_bytes = stats_.current_bytes;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<void*, size_t> sizes_;
  MemoryStats stats_;
};

// One prepared operator: buffers bound, primitive created. Run() launches it.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void Run() = 0;
  // For kernels that compute in an internal layout: writes the result in the
  // plain layout of the spec (row-major, NCHW) to `out`. Others copy their output.
  virtual void ReadOutput(void* out) = 0;
  // The implementation actually chosen (e.g. oneDNN's "brg:avx512_core").
  virtual std::string Implementation() const = 0;
  // The type the device wrote its result in before ReadOutput widened it to
  // fp32: kBF16 or kF16 where the library writes the inputs' type (aclnn), so
  // that the check allows that rounding as well; kF32 for the others.
  virtual DType OutputType() const { return DType::kF32; }
};

// C[m,n] = A[m,k] * B[k,n], row-major; A and B in `dtype`, C in fp32.
struct MatmulSpec {
  int64_t m = 0, n = 0, k = 0;
  DType dtype = DType::kF32;
  std::string impl;  // "onednn", "openblas"
};

// Forward convolution, NCHW input, OIHW weights, NCHW fp32 output, no bias.
struct Conv2dSpec {
  int64_t batch = 1, in_channels = 1, in_h = 1, in_w = 1;
  int64_t out_channels = 1, kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, groups = 1;
  DType dtype = DType::kF32;
  int64_t out_h() const { return (in_h + 2 * pad_h - kernel_h) / stride_h + 1; }
  int64_t out_w() const { return (in_w + 2 * pad_w - kernel_w) / stride_w + 1; }
  // Multiply-accumulates: N * Cout * Hout * Wout * (Cin / groups) * kh * kw.
  int64_t Macs() const {
    return batch * out_channels * out_h() * out_w() * (in_channels / groups) * kernel_h * kernel_w;
  }
};

// STREAM kernels over n doubles: copy c=a, scale b=s*c, add c=a+b, triad a=b+s*c.
enum class StreamOp { kCopy, kScale, kAdd, kTriad };
const char* Name(StreamOp op);
// Arrays read plus arrays written per element: copy and scale 2, add and triad 3.
int ArraysTouched(StreamOp op);

class Timer {
 public:
  virtual ~Timer() = default;
  virtual void Start() = 0;
  // Milliseconds of device time since Start(); synchronizes first.
  virtual double StopMs() = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceProperties& properties() const = 0;

  virtual void* Allocate(size_t bytes) = 0;
  virtual void Free(void* pointer) = 0;
  virtual MemoryStats memory_stats() const = 0;
  virtual void ResetPeakMemory() = 0;

  // Host memory to stage transfers from; the CPU device hands out plain memory.
  virtual void* AllocateHost(size_t bytes, HostMemory memory);
  virtual void FreeHost(void* pointer, HostMemory memory);
  // Synchronous moves between host memory and this device's memory, for setting
  // up inputs and reading results (not timed): memcpy on the CPU.
  virtual void Upload(void* device_dst, const void* host_src, size_t bytes);
  virtual void Download(void* host_dst, const void* device_src, size_t bytes);

  virtual Applicability CopyApplicability(CopyKind kind) const = 0;
  // Enqueues a copy on the device's queue; host pointers come from AllocateHost.
  virtual void Copy(void* dst, const void* src, size_t bytes, CopyKind kind) = 0;
  // Enqueues host->device and device->host copies of `bytes` each that run at once.
  virtual void CopyBidirectional(void* device_dst, const void* host_src, void* host_dst,
                                 const void* device_src, size_t bytes);
  virtual void Synchronize() = 0;
  virtual std::unique_ptr<Timer> CreateTimer() = 0;

  virtual std::vector<std::string> MatmulImpls() const = 0;
  virtual Applicability MatmulApplicability(const MatmulSpec& spec) const = 0;
  virtual std::unique_ptr<Kernel> CreateMatmul(const MatmulSpec& spec, const void* a, const void* b,
                                               float* c) = 0;
  virtual std::unique_ptr<Kernel> CreateConv2d(const Conv2dSpec& spec, const void* src,
                                               const void* weights, float* dst) = 0;

  // A STREAM kernel; each worker repeats its share `repeat` times per Run(), so
  // arrays that fit in a cache measure the cache, not the launch cost.
  virtual std::unique_ptr<Kernel> CreateStream(StreamOp op, double* a, double* b, double* c,
                                               size_t n, int repeat) = 0;
  // An arithmetic-bound loop on every compute unit: the measured FLOP/s ceiling.
  // Sets *flops_per_run; Implementation() names the instructions.
  virtual std::unique_ptr<Kernel> CreatePeakLoop(DType dtype, double* flops_per_run) = 0;

  // Bytes of memory a workload may still allocate here.
  virtual uint64_t AvailableMemory() const = 0;

  // A network compiled for this device; throws Error(kUnsupported) where the
  // backend has no network layers.
  virtual std::unique_ptr<Network> CreateNetwork(const NetworkSpec& spec,
                                                 const NetworkOptions& options);
};

// Host memory from Device::AllocateHost that frees itself.
class HostBuffer {
 public:
  HostBuffer(Device& device, size_t bytes, HostMemory memory)
      : device_(&device), data_(device.AllocateHost(bytes, memory)), memory_(memory) {}
  ~HostBuffer() { device_->FreeHost(data_, memory_); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  void* data() const { return data_; }

 private:
  Device* device_;
  void* data_;
  HostMemory memory_;
};

// A device allocation that frees itself.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Device& device, size_t bytes)
      : device_(&device), data_(device.Allocate(bytes)), bytes_(bytes) {}
  ~Buffer() { Reset(); }
  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      Reset();
      device_ = other.device_;
      data_ = other.data_;
      bytes_ = other.bytes_;
      other.data_ = nullptr;
    }
    return *this;
  }
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void Reset() {
    if (data_ != nullptr) device_->Free(data_);
    data_ = nullptr;
  }
  Device* device_ = nullptr;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace opscope::devices

#endif  // OPSCOPE_DEVICES_DEVICE_H_
