// Element types the benchmarks and kernels speak of.
#ifndef OPSCOPE_DEVICES_DTYPE_H_
#define OPSCOPE_DEVICES_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace opscope::devices {

// kTF32: fp32 storage, multiplied on tensor cores with 10-bit mantissas (CUDA).
enum class DType { kF32, kBF16, kTF32, kF16 };

const char* Name(DType dtype);  // "fp32", "bf16", "tf32", "fp16"
size_t SizeOf(DType dtype);
// Throws Error(kInvalidArgument) naming the accepted values.
DType ParseDType(std::string_view text);

// bfloat16 conversions (round to nearest even; NaN stays NaN).
inline uint16_t FloatToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0) {
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  }
  const uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

inline float Bf16ToFloat(uint16_t value) {
  const uint32_t bits = static_cast<uint32_t>(value) << 16;
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// IEEE binary16 conversions (round to nearest even; overflow to infinity).
uint16_t FloatToF16(float value);
float F16ToFloat(uint16_t value);

// Reads element i of a buffer of `dtype` as a double.
inline double LoadAsDouble(const void* data, DType dtype, size_t i) {
  if (dtype == DType::kF32 || dtype == DType::kTF32) return static_cast<const float*>(data)[i];
  if (dtype == DType::kF16) return F16ToFloat(static_cast<const uint16_t*>(data)[i]);
  return Bf16ToFloat(static_cast<const uint16_t*>(data)[i]);
}

}  // namespace opscope::devices

#endif  // OPSCOPE_DEVICES_DTYPE_H_
