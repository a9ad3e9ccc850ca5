#include "workloads/data.h"

#include <fmt/format.h>

#include <cmath>
#include <random>

namespace opscope::workloads {
namespace {

uint64_t Seed() {
  static std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

// xoshiro256** : fast enough to fill gigabytes.
struct Rng {
  uint64_t s[4];
  explicit Rng(uint64_t seed) {
    for (auto& v : s) {
      seed += 0x9E3779B97F4A7C15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      v = z ^ (z >> 31);
    }
  }
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t Next() {
    const uint64_t result = Rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = Rotl(s[3], 45);
    return result;
  }
  // Uniform in [-1, 1), never exactly zero.
  float Uniform() {
    const float v = static_cast<float>(Next() >> 40) * (2.0f / 16777216.0f) - 1.0f;
    return v == 0.0f ? 0.5f : v;
  }
};

}  // namespace

void FillRandom(void* data, size_t count, devices::DType dtype) {
  Rng rng(Seed());
  if (dtype == devices::DType::kF32 || dtype == devices::DType::kTF32) {
    auto* f = static_cast<float*>(data);
    for (size_t i = 0; i < count; ++i) f[i] = rng.Uniform();
  } else if (dtype == devices::DType::kF16) {
    auto* h = static_cast<uint16_t*>(data);
    for (size_t i = 0; i < count; ++i) {
      uint16_t v = devices::FloatToF16(rng.Uniform());
      if ((v & 0x7FFF) == 0) v = 0x3800;  // fp16 0.5: never a zero after rounding
      h[i] = v;
    }
  } else {
    auto* h = static_cast<uint16_t*>(data);
    for (size_t i = 0; i < count; ++i) {
      uint16_t v = devices::FloatToBf16(rng.Uniform());
      if ((v & 0x7FFF) == 0) v = 0x3F00;  // bf16 0.5: never a zero after rounding
      h[i] = v;
    }
  }
}

void FillRandom(double* data, size_t count) {
  Rng rng(Seed());
  for (size_t i = 0; i < count; ++i) data[i] = rng.Uniform();
}

double ErrorBound(devices::DType dtype, int64_t k, devices::DType output) {
  const double u = std::ldexp(1.0, -24);
  const double factor = dtype == devices::DType::kF32 ? 8.0 : 32.0;
  const double accumulation = factor * std::sqrt(static_cast<double>(std::max<int64_t>(k, 1))) * u;
  // tf32 rounds both fp32 inputs to 10-bit mantissas before multiplying.
  const double inputs = dtype == devices::DType::kTF32 ? std::ldexp(1.0, -9) : 0.0;
  // A result stored in bf16 (8 significant bits) or fp16 (11) is rounded once more.
  const double stored = output == devices::DType::kBF16  ? std::ldexp(1.0, -8)
                        : output == devices::DType::kF16 ? std::ldexp(1.0, -11)
                                                         : 0.0;
  return accumulation + inputs + stored;
}

void FillRandomOn(devices::Device& device, void* device_dst, size_t count, devices::DType dtype,
                  std::vector<char>* keep) {
  std::vector<char> local;
  std::vector<char>& host = keep != nullptr ? *keep : local;
  host.resize(count * devices::SizeOf(dtype));
  FillRandom(host.data(), count, dtype);
  device.Upload(device_dst, host.data(), host.size());
}

namespace {

void Check(Verification& v, double got, double want, double magnitude, double bound,
           const std::string& where) {
  ++v.checked;
  const double error = std::abs(got - want) / std::max(magnitude, 1e-30);
  if (!(error <= bound)) {  // NaN fails too
    if (v.passed) {
      v.detail =
          fmt::format("{}: got {:.9g}, expected {:.9g} (relative error {:.3g} > bound {:.3g})",
                      where, got, want, error, bound);
    }
    v.passed = false;
  }
  if (std::isfinite(error)) v.max_relative_error = std::max(v.max_relative_error, error);
}

// The absolute error a result stored in `output` may carry below the type's
// normal range: half fp16's smallest subnormal step (2^-24); bf16 keeps fp32's
// exponent range, where it does not matter.
double SubnormalFloor(devices::DType output) {
  return output == devices::DType::kF16 ? std::ldexp(1.0, -25) : 0.0;
}

}  // namespace

Verification VerifyMatmul(const devices::MatmulSpec& spec, const void* a, const void* b,
                          const float* c, int samples, devices::DType output) {
  Verification v;
  const double bound = ErrorBound(spec.dtype, spec.k, output);
  const double floor = SubnormalFloor(output);
  std::mt19937_64 rng(Seed());
  const int64_t total = spec.m * spec.n;
  const bool all = total <= 4096;
  const int64_t count = all ? total : samples;
  for (int64_t s = 0; s < count; ++s) {
    const int64_t index = all ? s : static_cast<int64_t>(rng() % static_cast<uint64_t>(total));
    const int64_t i = index / spec.n, j = index % spec.n;
    double sum = 0, magnitude = 0;
    for (int64_t k = 0; k < spec.k; ++k) {
      const double product = devices::LoadAsDouble(a, spec.dtype, i * spec.k + k) *
                             devices::LoadAsDouble(b, spec.dtype, k * spec.n + j);
      sum += product;
      magnitude += std::abs(product);
    }
    Check(v, c[index], sum, magnitude, bound + floor / std::max(magnitude, 1e-30),
          fmt::format("C[{},{}]", i, j));
  }
  return v;
}

Verification VerifyConv2d(const devices::Conv2dSpec& s, const void* src, const void* weights,
                          const float* dst, int samples, devices::DType output) {
  Verification v;
  const int64_t cin_g = s.in_channels / s.groups, cout_g = s.out_channels / s.groups;
  const double bound = ErrorBound(s.dtype, cin_g * s.kernel_h * s.kernel_w, output);
  const double floor = SubnormalFloor(output);
  std::mt19937_64 rng(Seed());
  const int64_t oh = s.out_h(), ow = s.out_w();
  const int64_t total = s.batch * s.out_channels * oh * ow;
  for (int sample = 0; sample < samples; ++sample) {
    const int64_t index = static_cast<int64_t>(rng() % static_cast<uint64_t>(total));
    const int64_t x = index % ow, y = index / ow % oh, co = index / (ow * oh) % s.out_channels,
                  n = index / (ow * oh * s.out_channels);
    const int64_t g = co / cout_g;
    double sum = 0, magnitude = 0;
    for (int64_t ci = 0; ci < cin_g; ++ci) {
      for (int64_t ky = 0; ky < s.kernel_h; ++ky) {
        const int64_t iy = y * s.stride_h - s.pad_h + ky;
        if (iy < 0 || iy >= s.in_h) continue;
        for (int64_t kx = 0; kx < s.kernel_w; ++kx) {
          const int64_t ix = x * s.stride_w - s.pad_w + kx;
          if (ix < 0 || ix >= s.in_w) continue;
          const int64_t src_index =
              ((n * s.in_channels + g * cin_g + ci) * s.in_h + iy) * s.in_w + ix;
          const int64_t w_index = ((co * cin_g + ci) * s.kernel_h + ky) * s.kernel_w + kx;
          const double product = devices::LoadAsDouble(src, s.dtype, src_index) *
                                 devices::LoadAsDouble(weights, s.dtype, w_index);
          sum += product;
          magnitude += std::abs(product);
        }
      }
    }
    Check(v, dst[index], sum, magnitude, bound + floor / std::max(magnitude, 1e-30),
          fmt::format("out[{},{},{},{}]", n, co, y, x));
  }
  return v;
}

}  // namespace opscope::workloads
