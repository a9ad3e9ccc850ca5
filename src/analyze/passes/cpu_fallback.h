// Analysis pass "cpu_fallback": Work that fell back to a CPU: Ascend AI CPU tasks, and long host
// operators that launched no device work.
#ifndef OPSCOPE_ANALYZE_PASSES_CPU_FALLBACK_H_
#define OPSCOPE_ANALYZE_PASSES_CPU_FALLBACK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct CpuFallback {
  int64_t ai_cpu_count = 0, ai_cpu_ns = 0;  // device tasks run by the AI CPU (Ascend)
  double ai_cpu_share_pct = 0;              // of device time
  std::vector<std::pair<std::string, int64_t>> ai_cpu_top;
  // For each of ai_cpu_top: its op type and data types (in->out) where the trace
  // records them ("Cast; INT32->UINT64"): what forced the fallback.
  std::vector<std::string> ai_cpu_why;
  // Host operators of at least 1 ms that launched no device work (a trace with a device).
  std::vector<std::pair<std::string, int64_t>> host_only_ops;
};

CpuFallback ComputeCpuFallback(const TraceModel& model);

// Its entry in the pass table (with its table and rules); its result is its
// slot of Analysis::results.
inline constexpr std::string_view kCpuFallbackPass = "cpu_fallback";
Pass CpuFallbackPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_CPU_FALLBACK_H_
