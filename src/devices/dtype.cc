#include "devices/dtype.h"

#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::devices {

const char* Name(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "fp32";
    case DType::kBF16: return "bf16";
    case DType::kTF32: return "tf32";
    case DType::kF16: return "fp16";
  }
  return "?";
}

size_t SizeOf(DType dtype) { return dtype == DType::kF32 || dtype == DType::kTF32 ? 4 : 2; }

uint16_t FloatToF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u)
    return static_cast<uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0));
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // a subnormal half (or zero)
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t shift = 126 - (abs >> 23);  // 14..24
    const uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((abs - 0x38000000u) >> 13);
  const uint32_t rest = abs & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float F16ToFloat(uint16_t value) {
  const uint32_t sign = static_cast<uint32_t>(value & 0x8000u) << 16;
  const uint32_t exponent = (value >> 10) & 0x1Fu;
  uint32_t mantissa = value & 0x3FFu;
  uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalize
    int e = -1;
    do {
      mantissa <<= 1;
      ++e;
    } while ((mantissa & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mantissa & 0x3FFu) << 13);
  }
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

DType ParseDType(std::string_view text) {
  if (text == "fp32" || text == "f32" || text == "float32") return DType::kF32;
  if (text == "bf16" || text == "bfloat16") return DType::kBF16;
  if (text == "tf32") return DType::kTF32;
  if (text == "fp16" || text == "f16" || text == "float16" || text == "half") return DType::kF16;
  throw Error(ErrorCode::kInvalidArgument, "unknown data type '" + core::EscapeForTerminal(text) +
                                               "': use fp32, tf32, bf16 or fp16");
}

}  // namespace opscope::devices
