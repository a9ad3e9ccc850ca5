// Exposed communication, from the per-step breakdown the producer reported
// beside its timeline (reported.h: ReportedStep; torch_npu's
// step_trace_time.csv, msprof's step traces): the time a step spends
// communicating while nothing computes. A rule in a file of its own,
// registered with one line in advisor.cc's list (docs/seams.md).
#include <fmt/format.h>

#include <algorithm>

#include "analyze/analysis.h"
#include "analyze/passes/attribution.h"
#include "analyze/reported.h"
#include "analyze/rule.h"

namespace opscope::analyze {
namespace {

// Exposed communication's share of the steps' time that warns, and is
// critical; and the least exposed time per step that is worth a finding.
constexpr double kExposedPct = 20, kExposedCriticalPct = 40;
constexpr int64_t kExposedMinNs = 1'000'000;

void Apply(const RuleContext& c, std::vector<Finding>& out) {
  if (c.reported == nullptr) return;
  // The timeline's diagnosis already names the device waiting (in
  // communication among it) and cites this breakdown: one account, not two.
  if (Diagnosis(c.analysis) == "step_device_waiting") return;
  const ReportedStepTotals t = SumReportedSteps(c.reported->steps);
  if (t.steps == 0 || t.step_ns <= 0) return;
  const double pct = Pct(t.exposed_ns, t.step_ns);
  const double per_step_ns = static_cast<double>(t.exposed_ns) / static_cast<double>(t.steps);
  if (pct < kExposedPct || per_step_ns < kExposedMinNs) return;
  // Overlap is advice only where the steps' compute could hide it (rule.h).
  const int64_t free_compute = t.computing_ns - t.overlapped_ns;
  const std::string lever =
      ComputeCanHide(free_compute, t.exposed_ns)
          ? "Overlap collectives with compute: let gradient all-reduce start during the "
            "backward pass (DDP buckets: bucket_cap_mb, gradient_as_bucket_view; FSDP "
            "prefetching), and shrink what is sent (bf16 gradients, sharded optimizer state)."
          : fmt::format(
                "The steps have too little compute to hide it behind ({:.3f} ms not already "
                "overlapping communication): the collectives themselves are the cost. Reduce "
                "what is sent (bf16 gradients, sharded optimizer state, fewer or larger "
                "buckets) or give each step more work per collective.",
                std::max<int64_t>(free_compute, 0) / 1e6);
  out.push_back(
      {"exposed_communication",
       pct >= kExposedCriticalPct ? Severity::kCritical : Severity::kWarning,
       fmt::format("Communication that nothing overlaps takes {:.1f}% of the step time", pct),
       fmt::format("the producer's step breakdown (section reported_steps), {} step row{}: "
                   "communication not overlapped {:.3f} ms of {:.3f} ms; communication {:.3f} ms "
                   "in all, {:.3f} ms of it overlapped by compute; computing {:.3f} ms; free "
                   "{:.3f} ms; before the first device task {:.3f} ms",
                   t.steps, t.steps == 1 ? "" : "s", t.exposed_ns / 1e6, t.step_ns / 1e6,
                   t.communication_ns / 1e6, t.overlapped_ns / 1e6, t.computing_ns / 1e6,
                   t.free_ns / 1e6, t.preparing_ns / 1e6),
       fmt::format("{} Where one rank arrives late the others wait inside the collective: "
                   "check the ranks' wait times (reported_communication) before tuning the "
                   "network. Fixing it saves at most {:.3f} ms per step (the exposed time), "
                   "less what the overlapped communication then slows the compute.",
                   lever, per_step_ns / 1e6)});
}

}  // namespace

Rule ExposedCommunicationRule() {
  return {"exposed_communication",
          {},
          [](const Thresholds&) {
            return fmt::format(
                "the producer reported a per-step breakdown (torch_npu's step_trace_time, "
                "msprof's step traces), and communication during which nothing computes "
                "takes at least {:g}% of its steps' time and {:g} ms per step (critical from "
                "{:g}%); silent where the timeline's diagnosis is step_device_waiting, which "
                "cites the breakdown; overlap is advised only where the steps compute, outside "
                "the overlapped communication, at least half the exposed time",
                kExposedPct, kExposedMinNs / 1e6, kExposedCriticalPct);
          },
          Apply};
}

}  // namespace opscope::analyze
