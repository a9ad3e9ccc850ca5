// Exposed communication, from the per-step breakdown the producer reported
// beside its timeline (reported.h: ReportedStep; torch_npu's
// step_trace_time.csv, msprof's step traces): the time a step spends
// communicating while nothing computes. A rule in a file of its own,
// registered with one line in advisor.cc's list (docs/seams.md).
#include <fmt/format.h>

#include <algorithm>

#include "analyze/analysis.h"
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
  int64_t exposed = 0, step = 0, communication = 0, overlapped = 0, free = 0, preparing = 0,
          steps = 0;
  for (const ReportedStep& s : c.reported->steps) {
    // The whole step, as the timeline's step span has it: the breakdown's
    // parts and the time before its first device task (Preparing; absent
    // in older outputs), so the share is of the same time as the steps
    // table's.
    const int64_t ns = s.StepNs();
    if (ns <= 0 || s.comm_not_overlapped_ns < 0) continue;
    ++steps;
    step += ns + std::max<int64_t>(s.preparing_ns, 0);
    preparing += std::max<int64_t>(s.preparing_ns, 0);
    exposed += s.comm_not_overlapped_ns;
    communication += std::max<int64_t>(s.communication_ns, 0);
    overlapped += std::max<int64_t>(s.overlapped_ns, 0);
    free += std::max<int64_t>(s.free_ns, 0);
  }
  if (steps == 0 || step <= 0) return;
  const double pct = 100.0 * static_cast<double>(exposed) / static_cast<double>(step);
  const double per_step_ns = static_cast<double>(exposed) / static_cast<double>(steps);
  if (pct < kExposedPct || per_step_ns < kExposedMinNs) return;
  out.push_back(
      {"exposed_communication",
       pct >= kExposedCriticalPct ? Severity::kCritical : Severity::kWarning,
       fmt::format("Communication that nothing overlaps takes {:.1f}% of the step time", pct),
       fmt::format("the producer's step breakdown (section reported_steps), {} step row{}: "
                   "communication not overlapped {:.3f} ms of {:.3f} ms; communication {:.3f} ms "
                   "in all, {:.3f} ms of it overlapped by compute; free {:.3f} ms; before the "
                   "first device task {:.3f} ms",
                   steps, steps == 1 ? "" : "s", exposed / 1e6, step / 1e6, communication / 1e6,
                   overlapped / 1e6, free / 1e6, preparing / 1e6),
       fmt::format("Overlap collectives with compute: let gradient all-reduce start during the "
                   "backward pass (DDP buckets: bucket_cap_mb, gradient_as_bucket_view; FSDP "
                   "prefetching), and shrink what is sent (bf16 gradients, sharded optimizer "
                   "state). Where one rank arrives late the others wait inside the collective: "
                   "check the ranks' wait times (reported_communication) before tuning the "
                   "network. Fixing it saves at most {:.3f} ms per step (the exposed time), "
                   "less what the overlapped communication then slows the compute.",
                   per_step_ns / 1e6)});
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
                "{:g}%)",
                kExposedPct, kExposedMinNs / 1e6, kExposedCriticalPct);
          },
          Apply};
}

}  // namespace opscope::analyze
