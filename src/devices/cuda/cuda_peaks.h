// Theoretical peaks of NVIDIA GPUs: from the vendor's datasheet for chips in
// opscope's one table (core/datasheet.h: dense figures, no sparsity), else
// from the SM count and clock.
#ifndef OPSCOPE_DEVICES_CUDA_CUDA_PEAKS_H_
#define OPSCOPE_DEVICES_CUDA_CUDA_PEAKS_H_

#include <string>
#include <vector>

#include "devices/device.h"

namespace opscope::cuda {

struct GpuFacts {
  std::string name;  // as the driver reports it: "NVIDIA H200"
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  double clock_ghz = 0;  // the SM clock the driver reports as its peak
  double memory_clock_ghz = 0;
  int bus_width_bits = 0;
};

struct GpuPeaks {
  std::vector<devices::Peak> peaks;  // fp32, tf32, bf16, fp16 where known
  double memory_bytes_per_second = 0;
  std::string memory_formula;
  std::string source;  // "datasheet: NVIDIA H200 SXM" or "from the clock"
};

GpuPeaks PeaksFor(const GpuFacts& facts);
// FP32 lanes per SM by compute capability (0 when unknown).
int Fp32LanesPerSm(int cc_major, int cc_minor);

}  // namespace opscope::cuda

#endif  // OPSCOPE_DEVICES_CUDA_CUDA_PEAKS_H_
