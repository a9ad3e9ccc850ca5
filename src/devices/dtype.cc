#include "devices/dtype.h"

#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::devices {

const char* Name(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "fp32";
    case DType::kBF16: return "bf16";
  }
  return "?";
}

size_t SizeOf(DType dtype) { return dtype == DType::kF32 ? 4 : 2; }

DType ParseDType(std::string_view text) {
  if (text == "fp32" || text == "f32" || text == "float32") return DType::kF32;
  if (text == "bf16" || text == "bfloat16") return DType::kBF16;
  throw Error(ErrorCode::kInvalidArgument,
              "unknown data type '" + core::EscapeForTerminal(text) + "': use fp32 or bf16");
}

}  // namespace opscope::devices
