#include "analyze/passes/long_tail.h"

#include <algorithm>

#include "analyze/analysis.h"

namespace opscope::analyze {

std::vector<LongTail> ComputeLongTail(const std::vector<OpStats>& operators) {
  std::vector<LongTail> out;
  for (const OpStats& g : operators) {
    if (g.cls == EventClass::kStep) continue;  // the steps' spread is the workload's
    if (g.count < 10 || g.p50_ns <= 0 || g.p99_ns < 3 * g.p50_ns) continue;
    out.push_back({g.name, g.cls, g.count, g.p50_ns, g.p99_ns, g.max_ns,
                   static_cast<double>(g.p99_ns) / static_cast<double>(g.p50_ns)});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.ratio != b.ratio) return a.ratio > b.ratio;
    return a.name != b.name ? a.name < b.name : a.cls < b.cls;
  });
  if (out.size() > 10) out.resize(10);
  return out;
}

Pass LongTailPass() {
  return {"long_tail",
          "Which operators have a long tail (p99 far above the median)?",
          {"op_stats"},
          [](const TraceModel&, Analysis& a) { a.long_tail = ComputeLongTail(a.operators); }};
}

}  // namespace opscope::analyze
