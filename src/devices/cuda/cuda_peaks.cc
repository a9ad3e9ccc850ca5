#include "devices/cuda/cuda_peaks.h"

#include <fmt/format.h>

#include "core/datasheet.h"

namespace opscope::cuda {
namespace {

using devices::DType;

}  // namespace

int Fp32LanesPerSm(int cc_major, int cc_minor) {
  if (cc_major == 7) return 64;                        // Volta, Turing
  if (cc_major == 8) return cc_minor == 0 ? 64 : 128;  // A100: 64; GA10x, Ada: 128
  if (cc_major >= 9) return 128;                       // Hopper, Blackwell
  return 0;
}

GpuPeaks PeaksFor(const GpuFacts& f) {
  GpuPeaks out;
  if (const core::Datasheet* d = core::FindDatasheet(f.name);
      d != nullptr && d->vendor == "NVIDIA") {
    const std::string part(d->part);
    out.source = "datasheet: NVIDIA " + part;
    static const std::pair<std::string_view, std::pair<DType, const char*>> kTypes[] = {
        {"fp32", {DType::kF32, "fp32 on the CUDA cores"}},
        {"tf32", {DType::kTF32, "tf32 tensor core"}},
        {"bf16", {DType::kBF16, "bf16 tensor core"}},
        {"fp16", {DType::kF16, "fp16 tensor core"}}};
    for (const auto& [key, type] : kTypes) {
      for (const auto& [dtype, tflops] : d->tflops) {
        if (dtype != key) continue;
        out.peaks.push_back(
            {type.first, tflops * 1e12,
             fmt::format("{} TFLOP/s dense {} (NVIDIA {} datasheet)", tflops, type.second, part)});
      }
    }
    out.memory_bytes_per_second = d->memory_tbps * 1e12;
    out.memory_formula = fmt::format("{} TB/s (NVIDIA {} datasheet)", d->memory_tbps, part);
    return out;
  }
  out.source = "from the SM count and clock (no datasheet entry for this chip)";
  const int lanes = Fp32LanesPerSm(f.cc_major, f.cc_minor);
  if (lanes > 0 && f.sms > 0 && f.clock_ghz > 0) {
    out.peaks.push_back(
        {DType::kF32, 2.0 * lanes * f.sms * f.clock_ghz * 1e9,
         fmt::format("{} SMs x {} FP32 lanes x 2 (FMA) x {:.3f} GHz", f.sms, lanes, f.clock_ghz)});
  }
  // Dense fp16/bf16 tensor-core FLOP per clock per SM, where the generation is known.
  const int tensor = f.cc_major == 8 && f.cc_minor == 0 ? 2048 : f.cc_major == 9 ? 4096 : 0;
  if (tensor > 0 && f.sms > 0 && f.clock_ghz > 0) {
    const double half = 1.0 * tensor * f.sms * f.clock_ghz * 1e9;
    const std::string formula =
        fmt::format("{} SMs x {} FLOP/clock x {:.3f} GHz", f.sms, tensor, f.clock_ghz);
    out.peaks.push_back({DType::kTF32, half / 2, formula + " / 2"});
    out.peaks.push_back({DType::kBF16, half, formula});
    out.peaks.push_back({DType::kF16, half, formula});
  }
  if (f.memory_clock_ghz > 0 && f.bus_width_bits > 0) {
    out.memory_bytes_per_second = 2.0 * f.memory_clock_ghz * 1e9 * f.bus_width_bits / 8;
    out.memory_formula =
        fmt::format("2 (DDR) x {:.3f} GHz x {} bits / 8", f.memory_clock_ghz, f.bus_width_bits);
  }
  return out;
}

}  // namespace opscope::cuda
