// Roofline: per operator, FLOPs and bytes (from the trace's arguments, or from
// the recorded input shapes of matrix multiplies), the time they took (the
// device kernels they launched when the trace links them, else the host
// duration), arithmetic intensity, achieved FLOP/s, and whether the operator is
// compute- or memory-bound against the device's ceilings.
#ifndef OPSCOPE_ANALYZE_PASSES_ROOFLINE_H_
#define OPSCOPE_ANALYZE_PASSES_ROOFLINE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/ceilings.h"
#include "analyze/passes/pass.h"
#include "analyze/reported.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

// `table` (the named variant's figures, or the assumed family's) with the
// peaks the run's chip gives (reported.h: its cores x clock x work per core
// cycle) in place of the table's for those data types; the others and the
// memory bandwidth stay the table's, and the source says which is which.
RooflineCeilings ChipCeilings(const ReportedChip& chip, const RooflineCeilings& table);

// Datasheet figures (dense, no sparsity) of devices we know by name: H200,
// H100 (SXM, PCIe), A100 (40/80 GB), V100, MI300X, MI250(X), Ascend 910B
// variants, each with its source. nullopt for others.
std::optional<RooflineCeilings> KnownDeviceCeilings(std::string_view device_name);

// Whether a kernel multiplies fp32 operands on tensor cores in TF32: "tf32" in
// its name, or cuBLAS/CUTLASS s1688/s16816/tensorop_s kernels on compute
// capability 8.0 or later.
bool IsTf32Kernel(std::string_view kernel, int compute_major);
// computeMajor of the first device in Kineto's deviceProperties; -1 unknown.
int ComputeCapabilityMajor(const TraceModel& model);

// FLOPs and bytes of a matrix multiply from Kineto's "Input Dims" and "Input
// type" (aten::mm, addmm, bmm, matmul, linear). False when unknown.
bool MatmulCost(std::string_view op, std::string_view dims_json, std::string_view types_json,
                int64_t& flops, int64_t& bytes, std::string& dtype);

// Convolutions (aten::conv2d, convolution, _convolution) from their input and
// weight shapes and the stride, padding, dilation and groups in "Concrete
// Inputs"; elementwise operators (add, mul, relu, ...) as one FLOP per output
// element, bytes of every tensor read and written. False when unknown.
bool ShapeCost(std::string_view op, std::string_view dims_json, std::string_view types_json,
               std::string_view concrete_json, int64_t& flops, int64_t& bytes, std::string& dtype);

// A data type as traces write it ("f32", "float32", "fp32", "bfloat16",
// "c10::BFloat16", "tf32", ...) in the spelling ceilings use: "fp32", "tf32",
// "bf16", "fp16", "fp64", "int8"; empty when unknown.
std::string_view CanonicalDtype(std::string_view written);

// True for the operators whose cost ShapeCost can compute: importers keep the
// shapes of these alone.
bool HasShapeCost(std::string_view op);

struct OpRoofline {
  std::string name;
  int64_t calls = 0;
  std::string dtype;
  double flops = 0, bytes = 0;
  int64_t time_ns = 0;
  std::string time_source;        // "device kernels" or "host"
  double intensity = 0;           // FLOP per byte
  double achieved = 0;            // FLOP/s
  std::string bound;              // "compute", "memory", or "" without ceilings
  double pct_of_attainable = -1;  // achieved / min(peak, intensity x bandwidth)
  bool inconsistent = false;      // above 100%: the ceilings or the counts are wrong
  std::string note;               // why it is not rated, or what to check
};

// Operators with known FLOPs, most FLOPs first.
std::vector<OpRoofline> ComputeRoofline(const TraceModel& model, const RooflineCeilings* ceilings);

// Its entry in the pass table; its result is its slot of Analysis::results.
inline constexpr std::string_view kRooflinePass = "roofline";
Pass RooflinePass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_ROOFLINE_H_
