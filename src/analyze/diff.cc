#include "analyze/diff.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace opscope::analyze {
namespace {

struct Timing {
  int64_t step_total = 0, steps = 0, span = 0;
};

Timing TimeOf(const TraceModel& m) {
  Timing t;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (size_t e = 0; e < m.size(); ++e) {
    if (m.cls[e] == EventClass::kDerived || m.cls[e] == EventClass::kOther) continue;
    first = std::min(first, m.start_ns[e]);
    last = std::max(last, m.start_ns[e] + m.duration_ns[e]);
    if (m.cls[e] == EventClass::kStep) t.step_total += m.duration_ns[e], ++t.steps;
  }
  t.span = last > first ? last - first : 0;
  return t;
}

}  // namespace

TraceDiff DiffTraces(const TraceModel& before, const TraceModel& after) {
  TraceDiff d;
  const Timing b = TimeOf(before), a = TimeOf(after);
  d.before_steps = b.steps, d.after_steps = a.steps;
  if (b.steps > 0 && a.steps > 0) {
    d.basis = "mean step";
    d.before_ns = b.step_total / b.steps, d.after_ns = a.step_total / a.steps;
  } else {
    d.basis = "trace span";
    d.before_ns = b.span, d.after_ns = a.span;
  }
  d.change_pct =
      d.before_ns > 0 ? 100.0 * static_cast<double>(d.after_ns - d.before_ns) / d.before_ns : 0;
  std::map<std::pair<std::string, EventClass>, OpDelta> ops;
  for (const auto& s : ComputeOpStats(before)) {
    OpDelta& o = ops[{s.name, s.cls}];
    o.name = s.name, o.cls = s.cls, o.before_count = s.count, o.before_ns = s.total_ns;
  }
  for (const auto& s : ComputeOpStats(after)) {
    OpDelta& o = ops[{s.name, s.cls}];
    o.name = s.name, o.cls = s.cls, o.after_count = s.count, o.after_ns = s.total_ns;
  }
  for (auto& [key, o] : ops) {
    if (o.before_count == 0) {
      o.change = "added";
    } else if (o.after_count == 0) {
      o.change = "removed";
    } else {
      o.change_pct =
          o.before_ns > 0 ? 100.0 * static_cast<double>(o.after_ns - o.before_ns) / o.before_ns : 0;
      o.change = o.change_pct > 2 ? "slower" : o.change_pct < -2 ? "faster" : "same";
    }
    d.operators.push_back(o);
  }
  std::sort(d.operators.begin(), d.operators.end(), [](const OpDelta& x, const OpDelta& y) {
    return std::llabs(x.after_ns - x.before_ns) > std::llabs(y.after_ns - y.before_ns);
  });
  return d;
}

}  // namespace opscope::analyze
