// Analysis pass "layout": How much time goes into layout conversions, found by
// meaning (analyze/names.h): kernels that only convert a layout (cuDNN
// nchwToNhwc, MIOpen transposes, Ascend TransData/Transpose, oneDNN reorders),
// device work launched by a layout operator (aten::contiguous,
// npu_format_cast), and those operators' host time. It also says what each
// copying operator (copy_, clone, to, contiguous) actually did: a transfer of a
// direction, a copy kernel on the device, or host work.
#ifndef OPSCOPE_ANALYZE_PASSES_LAYOUT_H_
#define OPSCOPE_ANALYZE_PASSES_LAYOUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/links.h"
#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct LayoutItem {
  std::string name;    // the kernel (or kernel op type) or operator
  std::string family;  // "NCHW<->NHWC", "TransData", "oneDNN reorder", "contiguous", "format cast"
  std::string how;     // "layout kernel", "launched by <op>", "host operator"
  int64_t count = 0, total_ns = 0;
  // The conversions by format where the trace records them (Ascend's Input ->
  // Output Formats), most time first: "NCHW->NC1HWC0 x19 (0.512 ms), ...".
  std::string formats;
  // For layout kernels, the framework operators that needed them (the one that
  // launched them, or the first around it that is not itself a layout or copy
  // operator; where the trace links device work to operators), most time first: "aten::conv2d x19
  // (0.433 ms), ...", and "x3 not linked to an operator" for the rest.
  std::string caused_by;
};

struct CopyUse {
  std::string op;    // aten::copy_ ...
  std::string what;  // "memcpy HtoD", "memcpy DtoH", "copy kernel", "host only", ...
  int64_t calls = 0;
  int64_t host_ns = 0;    // the operators' own (inclusive) time
  int64_t device_ns = 0;  // the device work they launched
};

struct LayoutShare {
  int64_t host_ns = 0, device_ns = 0;   // time in layout conversions
  double host_pct = 0, device_pct = 0;  // of top-level host operator time / device time
  std::vector<LayoutItem> top;          // the largest first, at most 10
  std::vector<CopyUse> copies;          // the largest first
};

LayoutShare ComputeLayoutShare(const TraceModel& model);
LayoutShare ComputeLayoutShare(const TraceModel& model, const EventLinks& links);

// Its entry in the pass table (with its tables and rule); its result is its
// slot of Analysis::results.
inline constexpr std::string_view kLayoutPass = "layout";
Pass LayoutPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_LAYOUT_H_
