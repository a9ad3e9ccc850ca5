// Decides part of issue "CPU device and operator benchmarks": the measured FP32
// (and BF16) FLOP/s ceiling against the theoretical peak, same machine, same run.
#include <cstdio>

#include "devices/registry.h"
#include "workloads/memory_bench.h"

int main() {
  auto device = opscope::devices::OpenDevice("cpu");
  const auto& p = device->properties();
  std::printf("%s (%s), %d threads, clock %.2f GHz (%s)\n", p.name.c_str(),
              p.microarchitecture.c_str(), p.compute_units, p.clock_ghz, p.clock_source.c_str());
  opscope::workloads::RunnerOptions runner;
  runner.min_time_ms = 1000;
  for (const auto dtype : {opscope::devices::DType::kF32, opscope::devices::DType::kBF16}) {
    const auto r = opscope::workloads::MeasureFlopsCeiling(*device, dtype, runner);
    std::printf("  %s: measured %.1f GFLOP/s (%s) vs theoretical %.1f GFLOP/s: ratio %.3f\n",
                opscope::devices::Name(dtype), r.measured / 1e9, r.method.c_str(),
                r.theoretical / 1e9, r.measured / r.theoretical);
  }
  for (const auto& peak : p.peaks) {
    std::printf("  theoretical %s: %s\n", opscope::devices::Name(peak.dtype), peak.formula.c_str());
  }
  return 0;
}
