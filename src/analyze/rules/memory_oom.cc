// Allocations the device's memory could not serve, from the allocator's own
// record (reported.h: ReportedMemory::ooms; PyTorch's caching-allocator
// snapshot records each out-of-memory error with the size asked for, the
// device's free memory then and the stack). Whether the allocator held the
// memory but in pieces (cached free at least the request: fragmentation) or
// the live tensors needed it decides the advice. A rule in a file of its own,
// registered with one line in advisor.cc's list (docs/seams.md).
#include <fmt/format.h>

#include <algorithm>

#include "analyze/analysis.h"
#include "analyze/reported.h"
#include "analyze/rule.h"

namespace opscope::analyze {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

void Apply(const RuleContext& c, std::vector<Finding>& out) {
  if (c.reported == nullptr || !c.reported->memory || c.reported->memory->ooms.empty()) return;
  const ReportedMemory& m = *c.reported->memory;
  // The largest request decides the title; any failure where the cache held
  // enough unused memory is fragmentation.
  const MemoryOom& largest =
      *std::max_element(m.ooms.begin(), m.ooms.end(),
                        [](const MemoryOom& a, const MemoryOom& b) { return a.bytes < b.bytes; });
  size_t fragmented = 0;
  std::string evidence;
  for (size_t i = 0; i < m.ooms.size(); ++i) {
    const MemoryOom& o = m.ooms[i];
    const int64_t cached =
        o.reserved_bytes >= 0 && o.allocated_bytes >= 0 ? o.reserved_bytes - o.allocated_bytes : -1;
    if (cached >= o.bytes) ++fragmented;
    if (i < 3) {
      evidence += fmt::format(
          "{}{} asked {:.1f} MiB with {} free on the device, {} allocated and {} reserved "
          "(cached unused {})",
          evidence.empty() ? "" : "; ", o.site, o.bytes / kMiB,
          o.device_free_bytes >= 0 ? fmt::format("{:.1f} MiB", o.device_free_bytes / kMiB)
                                   : std::string("n/a"),
          o.allocated_bytes >= 0 ? fmt::format("{:.1f} MiB", o.allocated_bytes / kMiB)
                                 : std::string("n/a"),
          o.reserved_bytes >= 0 ? fmt::format("{:.1f} MiB", o.reserved_bytes / kMiB)
                                : std::string("n/a"),
          cached >= 0 ? fmt::format("{:.1f} MiB", cached / kMiB) : std::string("n/a"));
    }
  }
  if (m.ooms.size() > 3) evidence += fmt::format("; {} more", m.ooms.size() - 3);
  evidence += fmt::format(
      " (the allocator's record in {}, section reported_memory_oom; the "
      "peak and who held it: reported_memory_peak)",
      m.source);
  std::string action =
      fragmented > 0
          ? fmt::format(
                "{} of the {} failures came with as much memory cached unused in the allocator "
                "as was asked: fragmentation. Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:"
                "True (segments grow instead of new ones being reserved), or "
                "max_split_size_mb to keep large blocks whole; then, if it still fails, ",
                fragmented, m.ooms.size())
          : std::string("The live tensors needed more than the device had: ");
  action +=
      "reduce what is live at the peak (the reported_memory_peak table names the sites): a "
      "smaller batch or sequence, activation checkpointing, mixed precision (bf16/fp16 "
      "activations), and dropping references to tensors no longer needed (losses kept for "
      "logging without .item(), outputs kept across steps).";
  out.push_back({"memory_oom", Severity::kCritical,
                 fmt::format("{} allocation{} failed for lack of {} memory, the largest "
                             "{:.1f} MiB at {}",
                             m.ooms.size(), m.ooms.size() == 1 ? "" : "s", m.device,
                             largest.bytes / kMiB, largest.site),
                 evidence, action});
}

}  // namespace

Rule MemoryOomRule() {
  return {"memory_oom",
          {},
          [](const Thresholds&) {
            return std::string(
                "the producer recorded allocations that failed for lack of device memory "
                "(PyTorch's caching-allocator snapshot: its history's oom entries); critical. "
                "The advice is fragmentation's where the allocator then held as much unused "
                "memory as was asked (reserved minus allocated at least the request)");
          },
          Apply};
}

}  // namespace opscope::analyze
