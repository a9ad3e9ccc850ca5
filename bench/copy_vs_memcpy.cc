// Decides part of issue "CPU device and operator benchmarks": our 1 GiB
// device-to-device copy (Device::Copy) against glibc memcpy on one thread and
// against the best multi-threaded copies we can write, same machine, same run.
// Every copy is checked against its source.
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "devices/cpu/cpu_device.h"
#include "devices/cpu/memory_kernels.h"
#include "devices/registry.h"
#include "workloads/data.h"
#include "workloads/runner.h"

int main(int argc, char** argv) {
  const size_t bytes = (argc > 1 ? std::stoul(argv[1]) : 1024) << 20;
  auto device = opscope::devices::OpenDevice("cpu");
  auto& pool = opscope::devices::cpu::PoolOf(*device);
  opscope::devices::Buffer src(*device, bytes), dst(*device, bytes);
  opscope::workloads::FillRandom(src.as<double>(), bytes / 8);
  std::memset(dst.data(), 0, bytes);
  opscope::workloads::RunnerOptions runner;
  runner.min_reps = 10;
  runner.min_time_ms = 1000;
  auto stream_copy = device->CreateStream(opscope::devices::StreamOp::kCopy, src.as<double>(),
                                          nullptr, dst.as<double>(), bytes / 8, 1);
  struct Variant {
    std::string name;
    std::function<void()> run;
  };
  const int threads = pool.size();
  const std::vector<Variant> variants = {
      {"opscope Device::Copy (d2d)",
       [&] {
         device->Copy(dst.data(), src.data(), bytes, opscope::devices::CopyKind::kDeviceToDevice);
       }},
      {"glibc memcpy, 1 thread", [&] { std::memcpy(dst.data(), src.data(), bytes); }},
      {"memcpy slices, " + std::to_string(threads) + " threads",
       [&] { opscope::devices::cpu::ParallelMemcpy(pool, dst.data(), src.data(), bytes); }},
      {"AVX-512 streaming stores, " + std::to_string(threads) + " threads",
       [&] { opscope::devices::cpu::ParallelStreamingCopy(pool, dst.data(), src.data(), bytes); }},
      {"AVX-512 regular stores (STREAM copy), " + std::to_string(threads) + " threads",
       [&] { stream_copy->Run(); }},
  };
  std::printf(
      "%zu MiB copy, bandwidth = (bytes read + bytes written) / median time, same machine, one "
      "run\n",
      bytes >> 20);
  double ours = 0, best_mt = 0, single = 0;
  std::string best_name;
  for (size_t i = 0; i < variants.size(); ++i) {
    std::memset(dst.data(), 0, bytes);
    const auto stats = opscope::workloads::Measure(
        *device, [&](int) { variants[i].run(); }, runner);
    const bool ok = std::memcmp(src.data(), dst.data(), bytes) == 0;
    const double gbps = 2.0 * bytes / (stats.median_ms / 1e3) / 1e9;
    std::printf("  %-48s median %8.2f ms  %6.1f GB/s  (p10 %.2f, p90 %.2f ms)  data %s\n",
                variants[i].name.c_str(), stats.median_ms, gbps, stats.p10_ms, stats.p90_ms,
                ok ? "verified" : "WRONG");
    if (!ok) return 1;
    if (i == 0) ours = gbps;
    if (i == 1) single = gbps;
    if (i >= 2 && gbps > best_mt) best_mt = gbps, best_name = variants[i].name;
  }
  std::printf("ours vs glibc memcpy on one thread: ratio %.2f\n", ours / single);
  std::printf("ours vs the best multi-threaded copy (%s): ratio %.2f\n", best_name.c_str(),
              ours / best_mt);
  return 0;
}
