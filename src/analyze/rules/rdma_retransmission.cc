// RDMA transfers that took seconds: the signature of retransmission on the
// network, from the per-operation communication records the producer
// reported beside its timeline (reported.h: ReportedCollective;
// communication.json). The rule is msprof-analyze's advisor's
// "Communication Retransmission Analysis" (its rules/en/rdma_analysis.yaml,
// min_retransmission_time 4000 ms, and CommunicationRetransmissionChecker):
// an operation whose RDMA transit time exceeds 4 s, where the operation
// itself lasted 4 s or more (msprof-analyze takes the shortest elapse over
// the ranks, so that ranks out of step are not taken for retransmission;
// a rule reads one rank's records, so here it is that rank's elapse: the
// transit time, not the wait, is what a late rank cannot lengthen). A rule
// in a file of its own, registered with one line in advisor.cc's list
// (docs/seams.md).
#include <fmt/format.h>

#include <algorithm>

#include "analyze/analysis.h"
#include "analyze/reported.h"
#include "analyze/rule.h"

namespace opscope::analyze {
namespace {

constexpr int64_t kRetransmissionNs = 4'000'000'000;

// The time an operation spent moving data over RDMA (0 where it moved none).
int64_t RdmaNs(const ReportedCollective& op) {
  const auto [bytes, ns] = op.Moved("RDMA");
  return bytes > 0 ? ns : 0;
}

void Apply(const RuleContext& c, std::vector<Finding>& out) {
  if (c.reported == nullptr) return;
  std::vector<const ReportedCollective*> slow;
  for (const ReportedCollective& op : c.reported->collectives) {
    if (op.elapse_ns >= kRetransmissionNs && RdmaNs(op) > kRetransmissionNs) slow.push_back(&op);
  }
  if (slow.empty()) return;
  std::sort(slow.begin(), slow.end(), [](const ReportedCollective* x, const ReportedCollective* y) {
    return RdmaNs(*x) > RdmaNs(*y);
  });
  std::string evidence;
  for (size_t i = 0; i < slow.size() && i < 3; ++i) {
    const ReportedCollective& op = *slow[i];
    const int64_t bytes = op.Moved("RDMA").first;
    evidence += fmt::format("{}{} ({}{}): RDMA {:.3f} MB in {:.3f} ms of an operation of {:.3f} ms",
                            i == 0 ? "" : "; ", op.op, op.step.empty() ? "no step" : op.step,
                            op.group.empty() ? "" : ", group " + op.group, bytes / 1e6,
                            RdmaNs(op) / 1e6, op.elapse_ns / 1e6);
  }
  if (slow.size() > 3) evidence += fmt::format("; {} more", slow.size() - 3);
  out.push_back(
      {"rdma_retransmission", Severity::kWarning,
       fmt::format("{} communication operation{} spent over {:g} s transferring over RDMA: the "
                   "network likely retransmitted",
                   slow.size(), slow.size() == 1 ? "" : "s", kRetransmissionNs / 1e9),
       evidence + " (the producer's communication records, section reported_collectives)",
       "Check that these operations' RDMA transfer times are right, then the network: the "
       "switches' and the hosts' RoCE configuration (PFC and ECN, MTU, link errors and "
       "retransmission counters on the NICs). A transfer of seconds on a healthy link does not "
       "happen."});
}

}  // namespace

Rule RdmaRetransmissionRule() {
  return {"rdma_retransmission",
          {},
          [](const Thresholds&) {
            return fmt::format(
                "the producer reported each communication operation's transfers "
                "(communication.json), and an operation that lasted {0:g} s or more spent over "
                "{0:g} s transferring over RDMA (msprof-analyze's retransmission rule)",
                kRetransmissionNs / 1e9);
          },
          Apply};
}

}  // namespace opscope::analyze
