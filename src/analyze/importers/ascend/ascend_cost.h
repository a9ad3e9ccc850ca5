// FLOPs and bytes of an Ascend device task from what kernel_details.csv (and
// the SQLite export) records of it: its op type, Input/Output Shapes
// ("32,9216;4096,9216;4096->32,4096"), data types ("FLOAT;FLOAT->FLOAT") and
// formats ("FORMAT_ND;FORMAT_ND->FORMAT_ND"), as the importers store them
// (importers/ascend/kernel_details_importer.h).
//
// Counted only where the shapes say it without guessing:
// - MatMul, MatMulV2/V3, BatchMatMul(V2/V3): plain (ND) formats; M and N from
//   the output's last two dimensions, K the dimension the two inputs share
//   (either may be transposed); 2*batch*M*N*K. Fractal (NZ) shapes are not
//   counted: their dimensions are tiles.
// - Conv2D in plain formats (NCHW input, filter and output): 2 * output
//   elements * Cin/groups * kh * kw from the filter. Private formats (5HD
//   NC1HWC0, FRACTAL_Z) pad channels to 8 or 16: the useful FLOPs cannot be
//   told from them, so those tasks are not counted.
// - FlashAttentionScore: 4 * B * N1 * S1 * S2 * D, the layout told from
//   softmax_max's [B, N1, S1, 8] (ascend_cost.cc); FlashAttentionScoreGrad
//   2.5 times that. Dense counts (a causal mask may skip blocks); the varlen
//   TND layout is not counted.
// - Elementwise arithmetic (Add, Mul, Relu, ... by op type): one FLOP per
//   output element.
// Bytes are every input and output with a known shape and data type, read or
// written once (the roofline's minimum traffic).
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_ASCEND_COST_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_ASCEND_COST_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "analyze/trace_model.h"

namespace opscope::analyze {

struct AscendCost {
  int64_t flops = -1, bytes = -1;
  std::string dtype;  // of the first input: "fp32", "fp16", "bf16", "int8", ...
};

// flops < 0 when the task's work cannot be counted from what is recorded.
AscendCost AscendTaskCost(std::string_view op_type, std::string_view shapes,
                          std::string_view dtypes, std::string_view formats);

// Every device task of `model` with an operator type, shapes and a task kind
// whose FLOPs are not yet known gets them, with its bytes and the data type
// they are counted in (flops, bytes and compute_dtype columns), where
// AscendTaskCost counts them; worked out once per distinct (name, category,
// shapes, types, formats). The readers call it once the tasks have their
// shapes (CompleteAscendModel, and after shapes are copied from
// kernel_details.csv onto a trace_view.json timeline).
void CompleteAscendCosts(TraceModel& model);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_ASCEND_COST_H_
