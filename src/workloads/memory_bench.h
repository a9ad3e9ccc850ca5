// Memory benchmarks written against Device: the bandwidth sweep (`opscope bw`)
// and the measured ceilings (`opscope bench roofline`).
#ifndef OPSCOPE_WORKLOADS_MEMORY_BENCH_H_
#define OPSCOPE_WORKLOADS_MEMORY_BENCH_H_

#include <string>
#include <vector>

#include "core/ceilings.h"
#include "workloads/operators.h"

namespace opscope::workloads {

struct BandwidthResult {
  std::string key;          // "d2d_memcpy_1G"
  std::string type;         // "d2d", "h2d", "d2h"
  std::string kernel;       // "memcpy", "copy", "scale", "add", "triad"
  uint64_t size_bytes = 0;  // of one array
  Status status = Status::kOk;
  std::string reason;
  Stats stats;
  uint64_t bytes_moved = 0;  // per run, read + write
  double bytes_per_second = 0;
  std::string level;  // where the working set fits: "L1d", "L2", "L3", "DRAM"
  int repeat = 1;
};

// Sizes: "4K..1G" (powers of four from the first to the last) or "4K,1M,1G".
// Throws Error(kInvalidArgument) naming the bad part.
std::vector<uint64_t> ParseSizes(const std::string& text);
std::string FormatBytes(uint64_t bytes);  // "4K", "1M", "1.5G"

std::vector<BandwidthResult> RunBandwidth(devices::Device& device,
                                          const std::vector<std::string>& types,
                                          const std::vector<uint64_t>& sizes,
                                          const RunnerOptions& runner, Progress& progress,
                                          const std::vector<std::string>& only_kernels = {});

struct RooflineResult {
  std::string ceiling;  // "fp32_flops", "bf16_flops", "memory_bandwidth"
  double measured = 0;
  double theoretical = 0;  // 0 when unknown
  std::string unit;        // "FLOP/s", "B/s"
  std::string method;
  Stats stats;
};

// Measures the FLOP/s ceiling of one dtype with the device's peak loop.
RooflineResult MeasureFlopsCeiling(devices::Device& device, devices::DType dtype,
                                   const RunnerOptions& runner);
// All ceilings; fills `ceilings` for ceilings.json.
std::vector<RooflineResult> RunRoofline(devices::Device& device, const RunnerOptions& runner,
                                        Progress& progress, core::Ceilings& ceilings);

}  // namespace opscope::workloads

#endif  // OPSCOPE_WORKLOADS_MEMORY_BENCH_H_
