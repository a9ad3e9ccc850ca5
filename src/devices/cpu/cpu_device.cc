#include "devices/cpu/cpu_device.h"

#include <fmt/format.h>
#include <omp.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>

#include "core/machine.h"
#include "devices/cpu/cpu_info.h"
#include "devices/cpu/memory_kernels.h"
#include "devices/cpu/onednn_kernels.h"
#include "devices/cpu/onednn_network.h"
#include "devices/cpu/openblas_kernels.h"
#include "devices/cpu/thread_pool.h"
#include "opscope/opscope.h"

namespace opscope::devices::cpu {
namespace {

uint64_t MemAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

std::string Gib(uint64_t bytes) { return fmt::format("{:.1f} GiB", bytes / double(1 << 30)); }

class CpuTimer final : public Timer {
 public:
  explicit CpuTimer(Device& device) : device_(device) {}
  void Start() override {
    device_.Synchronize();
    start_ = std::chrono::steady_clock::now();
  }
  double StopMs() override {
    device_.Synchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  Device& device_;
  std::chrono::steady_clock::time_point start_;
};

class StreamKernel final : public Kernel {
 public:
  StreamKernel(ThreadPool& pool, StreamOp op, double* a, double* b, double* c, size_t n, int repeat)
      : pool_(pool), op_(op), a_(a), b_(b), c_(c), n_(n), repeat_(repeat) {}
  void Run() override { RunStream(pool_, op_, a_, b_, c_, kScalar, n_, repeat_); }
  void ReadOutput(void*) override {}
  std::string Implementation() const override {
    return fmt::format("STREAM {} on {} threads", Name(op_), pool_.size());
  }
  static constexpr double kScalar = 3.0;

 private:
  ThreadPool& pool_;
  StreamOp op_;
  double *a_, *b_, *c_;
  size_t n_;
  int repeat_;
};

// About 5 ms of FMAs per run: long enough to time, short enough to repeat.
class PeakLoopKernel final : public Kernel {
 public:
  PeakLoopKernel(ThreadPool& pool, DType dtype) : pool_(pool), dtype_(dtype) {}
  void Run() override {
    flops_ =
        dtype_ == DType::kF32 ? FmaLoopFp32(pool_, kIterations) : FmaLoopBf16(pool_, kIterations);
  }
  void ReadOutput(void*) override {}
  std::string Implementation() const override {
    return dtype_ == DType::kF32 ? FmaLoopIsaFp32() : FmaLoopIsaBf16();
  }
  double flops_per_run() {
    Run();
    return flops_;
  }

 private:
  static constexpr int64_t kIterations = 1000000;
  ThreadPool& pool_;
  DType dtype_;
  double flops_ = 0;
};

class CpuDevice final : public Device {
 public:
  explicit CpuDevice(int threads)
      : pool_(threads), engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    omp_set_num_threads(threads);
    SetOpenblasThreads(threads);
    properties_ =
        ProbeCpu(threads, KernelReportsMaxClock() ? MeasuredClock{} : MachineClock(threads, [&] {
                   return MeasureClockGhz(pool_);
                 }));
    properties_.runtime = OnednnVersion() + ", " + OpenblasVersion();
    bf16_missing_ = OnednnBf16Missing(engine_);
    properties_.capabilities = DeviceCapabilities{
        .network_layout = Layout::kBlocked,  // oneDNN's own blocked layouts, end to end
        .trace_activities = {},              // its work is the host's: CPU scopes trace it
        .peak_loop_dtypes = {DType::kF32, DType::kBF16},
        .has_networks = true,
        .copy_method =
            "memcpy is the device's copy: glibc memcpy (split over the threads above 1 MiB), "
            "and AVX-512 streaming stores over the threads for arrays larger than the "
            "last-level cache; copy/scale/add/triad are STREAM kernels, repeated in place until "
            "a run moves >= 16 MiB per array so cache-sized arrays measure the cache.",
    };
    for (const auto& cache : properties_.caches) {
      streaming_threshold_ = std::max<uint64_t>(streaming_threshold_, cache.bytes);
    }
  }

  const DeviceProperties& properties() const override { return properties_; }

  void* Allocate(size_t bytes) override {
    const uint64_t available = AvailableMemory();
    if (bytes > available) {
      throw Error(ErrorCode::kResourceExhausted,
                  fmt::format("cannot allocate {} ({} bytes): {} of memory is available",
                              Gib(bytes), bytes, Gib(available)));
    }
    const size_t alignment = bytes >= (size_t{1} << 20) ? 4096 : 64;
    void* p = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
    if (p == nullptr) {
      throw Error(ErrorCode::kResourceExhausted,
                  fmt::format("cannot allocate {} ({} bytes)", Gib(bytes), bytes));
    }
    ledger_.Add(p, bytes);
    return p;
  }

  void Free(void* pointer) override {
    if (pointer == nullptr) return;
    if (!ledger_.Remove(pointer)) {
      throw Error(ErrorCode::kInternal, "CpuDevice::Free of a pointer it did not allocate");
    }
    std::free(pointer);
  }

  MemoryStats memory_stats() const override { return ledger_.stats(); }

  void ResetPeakMemory() override { ledger_.ResetPeak(); }

  Applicability CopyApplicability(CopyKind kind) const override {
    if (kind == CopyKind::kDeviceToDevice) return Applicability::Yes();
    return Applicability::No(NotApplicableReason::kNoSuchCopy,
                             "not applicable: host memory is device memory");
  }

  void Copy(void* dst, const void* src, size_t bytes, CopyKind kind) override {
    const Applicability a = CopyApplicability(kind);
    if (!a.applicable()) {
      throw Error(ErrorCode::kUnsupported, std::string(Name(kind)) + ": " + a.text);
    }
    // Past the last-level cache, streaming stores skip the read-for-ownership of the
    // destination and win (bench/copy_vs_memcpy); below it, memcpy keeps data cached.
    if (bytes >= streaming_threshold_ && HasStreamingCopy()) {
      ParallelStreamingCopy(pool_, dst, src, bytes);
    } else {
      ParallelMemcpy(pool_, dst, src, bytes);
    }
  }

  void Synchronize() override { stream_.wait(); }

  std::unique_ptr<Timer> CreateTimer() override { return std::make_unique<CpuTimer>(*this); }

  std::vector<std::string> MatmulImpls() const override {
    return {"onednn", "onednn-matmul", "openblas"};
  }

  Applicability MatmulApplicability(const MatmulSpec& spec) const override {
    if (spec.impl != "onednn" && spec.impl != "onednn-matmul" && spec.impl != "openblas") {
      return Applicability::No(
          NotApplicableReason::kUnknownImplementation,
          "unknown implementation '" + spec.impl + "' (cpu has onednn, onednn-matmul, openblas)");
    }
    if (spec.dtype != DType::kF32 && spec.dtype != DType::kBF16) {
      return Applicability::No(NotApplicableReason::kUnsupportedDtype,
                               std::string(Name(spec.dtype)) +
                                   " is a GPU tensor-core type; the cpu backend multiplies fp32 "
                                   "and bf16");
    }
    if (spec.impl == "openblas") return OpenblasApplicability(spec.dtype);
    if (spec.dtype == DType::kBF16 && !bf16_missing_.empty()) {
      return Applicability::No(NotApplicableReason::kUnsupportedDtype, bf16_missing_);
    }
    return Applicability::Yes();
  }

  std::unique_ptr<Kernel> CreateMatmul(const MatmulSpec& spec, const void* a, const void* b,
                                       float* c) override {
    const Applicability applicability = MatmulApplicability(spec);
    if (!applicability.applicable()) throw Error(ErrorCode::kUnsupported, applicability.text);
    if (spec.impl == "openblas") return CreateOpenblasMatmul(spec, a, b, c);
    return CreateOnednnMatmul(engine_, stream_, spec, a, b, c);
  }

  std::unique_ptr<Kernel> CreateConv2d(const Conv2dSpec& spec, const void* src, const void* weights,
                                       float* dst) override {
    if (spec.dtype != DType::kF32 && spec.dtype != DType::kBF16) {
      throw Error(ErrorCode::kUnsupported, std::string("conv2d ") + Name(spec.dtype) +
                                               ": the cpu backend convolves fp32 and bf16");
    }
    if (spec.dtype == DType::kBF16 && !bf16_missing_.empty()) {
      throw Error(ErrorCode::kUnsupported, "conv2d bf16: " + bf16_missing_);
    }
    return CreateOnednnConv2d(engine_, stream_, spec, src, weights, dst);
  }

  std::unique_ptr<Kernel> CreateStream(StreamOp op, double* a, double* b, double* c, size_t n,
                                       int repeat) override {
    return std::make_unique<StreamKernel>(pool_, op, a, b, c, n, repeat);
  }

  std::unique_ptr<Kernel> CreatePeakLoop(DType dtype, double* flops_per_run) override {
    if (dtype != DType::kF32 && dtype != DType::kBF16) {
      throw Error(ErrorCode::kUnsupported,
                  std::string("no ") + Name(dtype) + " FMA loop on the cpu backend");
    }
    auto kernel = std::make_unique<PeakLoopKernel>(pool_, dtype);
    *flops_per_run = kernel->flops_per_run();
    return kernel;
  }

  uint64_t AvailableMemory() const override { return MemAvailable(); }

  std::unique_ptr<Network> CreateNetwork(const NetworkSpec& spec,
                                         const NetworkOptions& options) override {
    return CreateOnednnNetwork(*this, engine_, stream_, spec, options);
  }

  ThreadPool& pool() { return pool_; }

 private:
  ThreadPool pool_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  DeviceProperties properties_;
  std::string bf16_missing_;  // why oneDNN has no bf16 here; "" when it has
  uint64_t streaming_threshold_ = uint64_t{32} << 20;  // at least the largest cache
  AllocationLedger ledger_;
};

}  // namespace

std::unique_ptr<Device> CreateCpuDevice(const DeviceOptions& options) {
  const int available = core::GetMachineInfo().logical_cpus;
  if (options.threads < 0 || options.threads > 4096) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("--threads {}: use a count from 1 to 4096 (0 or none: all {} CPUs)",
                            options.threads, available));
  }
  // More workers than CPUs only queue for them: the ceilings' all-thread
  // measurements and OpenMP's spinning then take seconds for a 64^3 matmul, and a
  // signal waits for its thread to be scheduled. Capped (the CLI says so).
  const int threads =
      options.threads == 0 ? available : std::min(options.threads, std::max(available, 1));
  return std::make_unique<CpuDevice>(threads);
}

ThreadPool& PoolOf(Device& cpu_device) {
  auto* cpu = dynamic_cast<CpuDevice*>(&cpu_device);
  if (cpu == nullptr) throw Error(ErrorCode::kInternal, "PoolOf: not the CPU device");
  return cpu->pool();
}

}  // namespace opscope::devices::cpu
