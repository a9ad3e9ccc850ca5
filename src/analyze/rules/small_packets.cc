// Communication operations that move little data each, from the per-operation
// communication records the producer reported beside its timeline (reported.h:
// ReportedCollective; torch_npu's communication.json, msprof's
// CommAnalyzerBandwidth): many small transfers cost the host a launch each
// and reach little of the link's bandwidth. The rule is msprof-analyze's
// advisor's "Packet Analysis" (its rules/en/packet.yaml and
// PacketChecker): of the operations that moved data over SDMA (HCCS, PCIe
// and SIO together), those that moved under 16 MB; over RDMA, under 1 MB; an
// issue where such operations are more than a fifth of those that used the
// transport. A rule in a file of its own, registered with one line in
// advisor.cc's list (docs/seams.md).
#include <fmt/format.h>

#include <string_view>

#include "analyze/analysis.h"
#include "analyze/reported.h"
#include "analyze/rule.h"

namespace opscope::analyze {
namespace {

struct Transport {
  const char* name;   // as the rule names it
  int64_t min_bytes;  // an operation that moved less over it is small (MB = 10^6 bytes)
  double max_share;   // of the operations that used it, more than this share small: an issue
};
constexpr Transport kSdma{"SDMA", 16'000'000, 0.2};
constexpr Transport kRdma{"RDMA", 1'000'000, 0.2};

struct Count {
  int64_t ops = 0, small = 0, small_ns = 0, small_bytes = 0;
};

void Apply(const RuleContext& c, std::vector<Finding>& out) {
  if (c.reported == nullptr || c.reported->collectives.empty()) return;
  std::string evidence;
  int64_t small_ops = 0, small_ns = 0;
  for (const Transport& t : {kSdma, kRdma}) {
    Count n;
    for (const ReportedCollective& op : c.reported->collectives) {
      const auto [bytes, ns] = op.Moved(t.name);
      if (bytes <= 0) continue;
      ++n.ops;
      if (bytes < t.min_bytes) ++n.small, n.small_ns += ns, n.small_bytes += bytes;
    }
    if (n.ops == 0 || static_cast<double>(n.small) <= t.max_share * static_cast<double>(n.ops)) {
      continue;
    }
    small_ops += n.small, small_ns += n.small_ns;
    evidence += fmt::format(
        "{}{}: {} of {} operations ({:.1f}%) moved under {} MB each ({:.3f} MB in all), taking "
        "{:.3f} ms of transfer",
        evidence.empty() ? "" : "; ", t.name, n.small, n.ops, Pct(n.small, n.ops),
        t.min_bytes / 1'000'000, n.small_bytes / 1e6, n.small_ns / 1e6);
  }
  if (small_ops == 0) return;
  out.push_back(
      {"small_packets", Severity::kInfo,
       fmt::format("{} communication operations move little data each ({:.3f} ms of transfer): "
                   "small packets cost a launch each and reach little of the link's bandwidth",
                   small_ops, small_ns / 1e6),
       evidence + " (the producer's communication records, section reported_collectives)",
       "Send fewer, larger messages: in data parallelism a larger batch or gradient "
       "accumulation (fewer all-reduces per sample), larger DDP buckets; with ZeRO-3 sharding, "
       "ZeRO-2 or ZeRO-1 where memory allows (fewer parameter gathers); fused optimizers and "
       "fused operators, which communicate once for many tensors."});
}

}  // namespace

Rule SmallPacketsRule() {
  return {"small_packets",
          {},
          [](const Thresholds&) {
            return fmt::format(
                "the producer reported each communication operation's transfers "
                "(communication.json, CommAnalyzerBandwidth), and more than {:g}% of the "
                "operations that moved data over SDMA (HCCS, PCIe, SIO) moved under {} MB each, "
                "or more than {:g}% of those over RDMA under {} MB (msprof-analyze's packet "
                "rule); info",
                100 * kSdma.max_share, kSdma.min_bytes / 1'000'000, 100 * kRdma.max_share,
                kRdma.min_bytes / 1'000'000);
          },
          Apply};
}

}  // namespace opscope::analyze
