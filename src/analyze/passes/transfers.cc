// Memory copies on the device by direction: the pass, its table and its rule.
#include "analyze/passes/transfers.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyze/analysis.h"
#include "analyze/intervals.h"

namespace opscope::analyze {

std::vector<TransferStats> ComputeTransfers(const TraceModel& model) {
  std::map<std::string, TransferStats> by_direction;
  std::map<std::string, Intervals> steady;  // direction -> its copies after the first compute
  int64_t device_total = 0;
  int64_t first_compute = INT64_MAX;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] == EventClass::kKernel && model.duration_ns[e] > 0) {
      first_compute = std::min(first_compute, model.start_ns[e]);
    }
  }
  for (size_t e = 0; e < model.size(); ++e) {
    if (!IsDevice(model.cls[e])) continue;
    device_total += model.duration_ns[e];
    if (model.cls[e] != EventClass::kMemcpy) continue;
    const CopyInfo copy = model.Copy(e);
    const std::string direction = Name(copy.direction);
    TransferStats& t = by_direction[direction];
    t.direction = direction;
    ++t.count;
    t.pinned += copy.host_memory == HostMemory::kPinned;
    t.pageable += copy.host_memory == HostMemory::kPageable;
    t.managed += copy.host_memory == HostMemory::kManaged;
    t.total_ns += model.duration_ns[e];
    if (model.start_ns[e] + model.duration_ns[e] <= first_compute) {
      ++t.before_compute;
      t.before_compute_ns += model.duration_ns[e];
    } else {
      steady[direction].push_back({model.start_ns[e], model.start_ns[e] + model.duration_ns[e]});
    }
    if (model.bytes[e] >= 0) t.bytes = std::max<int64_t>(t.bytes, 0) + model.bytes[e];
  }
  std::vector<TransferStats> out;
  for (auto& [direction, t] : by_direction) {
    if (t.pinned > 0 || t.pageable > 0) {
      t.host_memory = t.pageable == 0 && t.managed == 0 ? "pinned"
                      : t.pinned == 0 && t.managed == 0 ? "pageable"
                                                        : "mixed";
    } else if (t.managed > 0) {
      t.host_memory = "managed";
    }
    t.steady_wall_ns = Total(Union(std::move(steady[direction])));
    t.share_of_device_pct = device_total > 0 ? 100.0 * static_cast<double>(t.total_ns) /
                                                   static_cast<double>(device_total)
                                             : 0;
    t.gbps = t.bytes > 0 && t.total_ns > 0
                 ? static_cast<double>(t.bytes) / static_cast<double>(t.total_ns)
                 : 0;
    out.push_back(t);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  return out;
}

namespace {

using core::ResultTable;
using core::Unit;
using core::Value;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const auto* found = a.results.Get<std::vector<TransferStats>>(kTransfersPass);
  if (found == nullptr) return;
  const std::string path(c.path);
  ResultTable table;  // always: empty when nothing was found, its columns kept
  table.hidden_when_empty = found->empty();
  table.section = "transfers";
  table.title = "Memory copies on the device";
  table.columns = {
      {"trace", "Trace", 0, false},
      {"direction", "Direction"},
      {.key = "count", .header = "Count", .unit = Unit::kCount},
      {.key = "bytes", .header = "Bytes", .unit = Unit::kBytes},
      {.key = "total_ns", .header = "Total", .precision = 3, .unit = Unit::kTime},
      {.key = "share_pct", .header = "% device", .precision = 1, .unit = Unit::kPercent},
      {.key = "bytes_per_s",
       .header = "GB/s",
       .precision = 2,
       .unit = Unit::kBytesPerSecond,
       .scale = 1e9},
      {"host_memory", "Host memory"},
      {"pageable", "Pageable", 0, false},
      {"pinned", "Pinned", 0, false}};
  bool unrecorded = false;  // a host copy whose memory the trace does not give
  for (const auto& t : *found) {
    unrecorded |= (t.direction == "HtoD" || t.direction == "DtoH") && t.host_memory.empty();
    // Bytes per nanosecond is GB/s: the column's values are in GB/s (scale 1e9).
    table.AddRow({path, t.direction, t.count, t.bytes >= 0 ? Value{t.bytes} : Value{}, t.total_ns,
                  t.share_of_device_pct, t.bytes > 0 ? Value{t.gbps} : Value{},
                  t.host_memory.empty() ? Value{} : Value{t.host_memory},
                  t.pinned + t.pageable > 0 ? Value{t.pageable} : Value{},
                  t.pinned + t.pageable > 0 ? Value{t.pinned} : Value{}});
  }
  if (unrecorded) {
    table.notes.push_back(
        "Host memory n/a: the trace does not record whether these copies "
        "used pinned or pageable memory.");
  }
  tables.push_back(std::move(table));
}

// How to pin the host's memory, in the program's own terms.
std::string_view PinHostMemory(const Analysis& a) {
  return a.pytorch ? "use pin_memory=True (DataLoader) or tensor.pin_memory()"
                   : "allocate the host buffers pinned (cudaMallocHost or cudaHostAlloc; "
                     "hipHostMalloc on ROCm, aclrtMallocHost on Ascend) or pin them "
                     "(cudaHostRegister)";
}

// The share of the trace's span in a direction's copies from which the
// transfers rule warns (below it, information: the copies cost the run little).
constexpr double kTransferSpanPct = 5;

void TransfersRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* found = c.analysis.results.Get<std::vector<TransferStats>>(kTransfersPass);
  if (found == nullptr) return;
  const Thresholds& t = c.thresholds;
  for (const auto& tr : *found) {
    // One-off uploads before the device first computed are set-up, not steps'
    // work (pinning their memory would save nothing per step).
    const int64_t steady_ns = tr.total_ns - tr.before_compute_ns;
    const double steady_pct = tr.total_ns > 0
                                  ? tr.share_of_device_pct * static_cast<double>(steady_ns) /
                                        static_cast<double>(tr.total_ns)
                                  : 0;
    if (steady_pct < t.transfer_device_pct || steady_ns < t.min_judged_ns) continue;
    // Pageable memory as the trace records it; where it does not say, a
    // host copy's bandwidth suggests it.
    const bool host = tr.direction == "HtoD" || tr.direction == "DtoH";
    const bool recorded = tr.pinned + tr.pageable > 0;
    const bool slow = host && tr.bytes > 0 && tr.gbps < t.pageable_gbps;
    const bool migrations = MostlyMigrations(tr.managed, tr.count);
    // Judged by what the copies could cost the run, as layout conversions
    // are: on a device that mostly idles, most of its time can be a few
    // milliseconds of copies in a long trace, and moving less saves little.
    // The wall time they fill, not their summed time (copies overlap).
    const double span_pct = Pct(tr.steady_wall_ns, c.analysis.span.ns());
    const bool costly = span_pct >= kTransferSpanPct;
    out.push_back(
        {"transfers_" + tr.direction, costly ? Severity::kWarning : Severity::kInfo,
         fmt::format("{} copies take {:.1f}% of device time ({:.1f}% of the trace's span)",
                     tr.direction, steady_pct, span_pct),
         fmt::format(
             "{} copies, {:.3f} ms{}{}{}{}", tr.count - tr.before_compute, steady_ns / 1e6,
             tr.before_compute > 0
                 ? fmt::format(" (and {} before the device first computed, {:.3f} ms: "
                               "one-off uploads, left out)",
                               tr.before_compute, tr.before_compute_ns / 1e6)
                 : std::string(),
             tr.bytes > 0 ? fmt::format(", {:.2f} GB/s", tr.gbps) : std::string(),
             (recorded ? fmt::format(", {} from or to pageable memory, {} pinned", tr.pageable,
                                     tr.pinned)
                       : std::string()) +
                 (tr.managed > 0 ? fmt::format(", {} of all {} are unified memory's migrations",
                                               tr.managed, tr.count)
                                 : std::string()),
             costly ? std::string()
                    : fmt::format(". They take {:.1f}% of the trace's span: the device "
                                  "idles most of it, so moving less would save little "
                                  "of the run",
                                  span_pct)),
         std::string(c.analysis.pytorch
                         ? "Keep data on the device between steps and overlap copies with "
                           "compute (non_blocking=True)"
                         : "Keep data on the device between steps and overlap copies with "
                           "compute (asynchronous copies on a stream of their own)") +
             (migrations ? fmt::format("; these are {}.", kPrefetchAdvice)
              : PinningHelps(tr.pinned, tr.pageable)
                  ? fmt::format("; pageable host memory makes each copy synchronous and slower: "
                                "{}.",
                                PinHostMemory(c.analysis))
              : recorded && tr.pinned > 0
                  ? fmt::format("; {} of {} copies already use pinned memory: what is left is "
                                "to move less (keep the data resident on the device).",
                                tr.pinned, tr.pinned + tr.pageable)
              : !recorded && slow && tr.managed == 0
                  ? fmt::format("; this bandwidth suggests pageable memory: {}.",
                                PinHostMemory(c.analysis))
                  : ".")});
  }
}

}  // namespace

Pass TransfersPass() {
  return {kTransfersPass,
          "How much device time goes into memory copies, and how fast are they?",
          {},
          [](const TraceModel& model, Analysis& a) {
            a.results.Set(kTransfersPass, ComputeTransfers(model));
          },
          Tables,
          {{"transfers_<direction>",
            {kTransfersPass},
            [](const Thresholds& t) {
              return fmt::format(
                  "copies of one direction take {:g}% or more of device time and {:g} ms, "
                  "leaving out those that ended before the device first computed (one-off "
                  "uploads); pinning is advised where more than a tenth of the copies use "
                  "pageable memory, or where the trace does not say and host-device copies "
                  "run under {:g} GB/s; prefetching where most are unified memory's "
                  "migrations; a warning where they also take {:g}% of the trace's "
                  "span, else info (on a device that mostly idles they cost the run little)",
                  t.transfer_device_pct, t.min_judged_ns / 1e6, t.pageable_gbps, kTransferSpanPct);
            },
            TransfersRule}}};
}

}  // namespace opscope::analyze
