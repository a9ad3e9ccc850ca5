// Communication that moved its data slowly while MatMul ran beside it:
// msprof-analyze's advisor's "bandwidth contention" check (its
// rules/cn/bandwidth_contention.yaml: sdma_baseline 18 GB/s, threshold 0.8;
// its BandwidthContentionChecker): an HCCL operation that moved data over
// SDMA (the producer's per-operation records, ReportedCollective: HCCS, PCIe
// and SIO) whose span, from its start for its elapsed time, overlaps a MatMul
// task's (a device task whose name holds "matmul", as the checker picks them
// from the operator summary) and whose SDMA bandwidth is under 0.8 x 18 =
// 14.4 GB/s.
//
// Where opscope differs, and why: a transfer that is slow beside MatMul is
// contention only if the same rank's links are faster without it. The
// rank's SDMA operations that overlap no MatMul give that bandwidth (their
// median); an operation beside MatMul is contended where it is also under
// nine tenths of it. Where the rank's links are as slow without MatMul (or
// every SDMA operation overlaps MatMul, and 18 GB/s is the reference), the
// table shows the operations and the rule says nothing msprof-analyze would
// not: it names only the operations under both marks. One analysis in one
// file: its pass, table and rule, registered with one line in registry.cc
// (docs/seams.md).
#include <fmt/format.h>

#include <algorithm>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "analyze/median.h"
#include "analyze/names.h"
#include "analyze/passes/pass.h"

namespace opscope::analyze {
namespace {

constexpr std::string_view kPassName = "bandwidth_contention";
// msprof-analyze's rule file: the SDMA baseline (GB/s) and the share of it
// under which a transfer beside MatMul is reported.
constexpr double kSdmaBaselineGbps = 18, kThreshold = 0.8;
// Contended: under this share of the bandwidth the rank reaches without MatMul.
constexpr double kSlowerThanAlone = 0.9;

struct SdmaOp {
  std::string name, step;
  int64_t bytes = 0, transit_ns = 0;
  int64_t beside_ns = 0;  // its span's time with a MatMul task running
  double Gbps() const { return transit_ns > 0 ? static_cast<double>(bytes) / transit_ns : 0; }
};

struct BandwidthContention {
  std::vector<SdmaOp> beside;  // SDMA operations overlapping MatMul, slowest first
  int64_t sdma_ops = 0;        // operations that moved data over SDMA with a known span
  int64_t alone_ops = 0;       // of them, those that overlap no MatMul
  double alone_gbps = 0;       // their median bandwidth (0: none)
  // The bandwidth a transfer is judged against: alone_gbps, else the rule's
  // 18 GB/s; and the operations beside MatMul under both marks.
  double reference_gbps = 0;
  std::vector<const SdmaOp*> Contended() const {
    std::vector<const SdmaOp*> out;
    for (const SdmaOp& op : beside) {
      if (op.Gbps() < kThreshold * kSdmaBaselineGbps &&
          op.Gbps() < kSlowerThanAlone * reference_gbps) {
        out.push_back(&op);
      }
    }
    return out;
  }
  // What the contended transfers took beyond the reference bandwidth.
  int64_t LostNs() const {
    int64_t lost = 0;
    for (const SdmaOp* op : Contended()) {
      lost +=
          op->transit_ns - static_cast<int64_t>(static_cast<double>(op->bytes) / reference_gbps);
    }
    return lost;
  }
};

BandwidthContention Compute(const TraceModel& model) {
  BandwidthContention out;
  if (model.reported.collectives.empty()) return out;
  // The MatMul tasks' time (their union), each name judged once.
  std::vector<int8_t> matmul(model.string_count(), -1);
  UnionBuilder spans;
  for (size_t e = 0; e < model.size(); ++e) {
    if (!IsDevice(model.cls[e])) continue;
    int8_t& m = matmul[model.name[e]];
    if (m < 0) m = Contains(Lower(model.String(model.name[e])), "matmul");
    if (m == 1) spans.Add({model.start_ns[e], model.start_ns[e] + model.duration_ns[e]});
  }
  const Intervals matmuls = spans.Take();
  std::vector<double> alone;
  for (const ReportedCollective& c : model.reported.collectives) {
    const auto [bytes, ns] = c.Moved("SDMA");
    if (bytes <= 0 || ns <= 0 || c.start_ns < 0) continue;
    ++out.sdma_ops;
    SdmaOp op{c.op, c.step, bytes, ns, Covered(matmuls, c.start_ns, c.start_ns + c.elapse_ns)};
    if (op.beside_ns > 0) {
      out.beside.push_back(std::move(op));
    } else {
      alone.push_back(op.Gbps());
    }
  }
  out.alone_ops = static_cast<int64_t>(alone.size());
  out.alone_gbps = Median(std::move(alone));
  out.reference_gbps = out.alone_gbps > 0 ? out.alone_gbps : kSdmaBaselineGbps;
  std::stable_sort(out.beside.begin(), out.beside.end(),
                   [](const SdmaOp& a, const SdmaOp& b) { return a.Gbps() < b.Gbps(); });
  return out;
}

std::string ReferenceText(const BandwidthContention& b) {
  return b.alone_ops > 0
             ? fmt::format(
                   "{:.2f} GB/s, the median of the rank's {} SDMA operation{} beside no "
                   "MatMul",
                   b.alone_gbps, b.alone_ops, b.alone_ops == 1 ? "" : "s")
             : fmt::format(
                   "{:g} GB/s, msprof-analyze's SDMA baseline (every SDMA operation "
                   "overlaps MatMul)",
                   kSdmaBaselineGbps);
}

using core::ResultTable;
using core::Unit;
using core::Value;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const auto* b = a.results.Get<BandwidthContention>(kPassName);
  if (b == nullptr || b->beside.empty()) return;
  ResultTable table;
  table.section = std::string(kPassName);
  table.title = fmt::format(
      "Communication beside MatMul: {} of {} operations that moved data over SDMA overlap a "
      "MatMul task; {} of them contended",
      b->beside.size(), b->sdma_ops, b->Contended().size());
  table.columns = {
      {"trace", "Trace", 0, false},
      {"operation", "Operation"},
      {"step", "Step"},
      {.key = "bytes", .header = "SDMA size", .precision = 2, .unit = Unit::kBytes},
      {.key = "transit_ns", .header = "SDMA time", .precision = 3, .unit = Unit::kTime},
      {.key = "bytes_per_s",
       .header = "GB/s",
       .precision = 2,
       .unit = Unit::kBytesPerSecond,
       .scale = 1e9},
      {.key = "beside_matmul_ns", .header = "Beside MatMul", .precision = 3, .unit = Unit::kTime},
      {"contended", "Contended"}};
  const std::vector<const SdmaOp*> contended = b->Contended();
  const std::string path(c.path);
  for (const SdmaOp& op : b->beside) {
    const bool is = std::find(contended.begin(), contended.end(), &op) != contended.end();
    table.AddRow({path, op.name, op.step, op.bytes, op.transit_ns, op.Gbps(), op.beside_ns,
                  std::string(is ? "yes" : "no")});
  }
  table.notes.push_back(fmt::format(
      "Each HCCL operation that moved data over SDMA (HCCS, PCIe, SIO; the producer's "
      "communication records) while a MatMul task ran within its span. Contended: under {:g} "
      "GB/s (msprof-analyze's {:g} x {:g} GB/s) and under {:g}% of {}.",
      kThreshold * kSdmaBaselineGbps, kThreshold, kSdmaBaselineGbps, 100 * kSlowerThanAlone,
      ReferenceText(*b)));
  tables.push_back(std::move(table));
}

void ContentionRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* b = c.analysis.results.Get<BandwidthContention>(kPassName);
  if (b == nullptr) return;
  const std::vector<const SdmaOp*> contended = b->Contended();
  if (contended.empty()) return;
  std::string names;
  for (size_t i = 0; i < contended.size() && i < 3; ++i) {
    names += fmt::format("{}'{}' {:.2f} GB/s ({:.3f} MB in {:.3f} ms)", i == 0 ? "" : "; ",
                         contended[i]->name, contended[i]->Gbps(), contended[i]->bytes / 1e6,
                         contended[i]->transit_ns / 1e6);
  }
  if (contended.size() > 3) names += fmt::format("; {} more", contended.size() - 3);
  const int64_t lost = b->LostNs();
  out.push_back(
      {"bandwidth_contention", Severity::kInfo,
       fmt::format("{} communication operation{} moved data over SDMA at under {:g} GB/s while "
                   "MatMul ran beside {}, slower than the rank's links reach without it: the "
                   "two contend for bandwidth",
                   contended.size(), contended.size() == 1 ? "" : "s",
                   kThreshold * kSdmaBaselineGbps, contended.size() == 1 ? "it" : "them"),
       fmt::format("{}; against {} (the bandwidth_contention table)", names, ReferenceText(*b)),
       fmt::format("Compare the run with the communication and computation overlapped (fused "
                   "MatMul-communication operators, the framework's overlap options) and with "
                   "them apart: keep the overlap only where it gains more than the bandwidth it "
                   "costs. At {:.2f} GB/s these transfers would take {:.3f} ms less; the step "
                   "saves that only where the communication is exposed.",
                   b->reference_gbps, lost / 1e6),
       lost});
}

}  // namespace

Pass BandwidthContentionPass() {
  return {kPassName,
          "Does communication lose bandwidth to the MatMul running beside it?",
          {},
          [](const TraceModel& model, Analysis& a) { a.results.Set(kPassName, Compute(model)); },
          Tables,
          {{"bandwidth_contention",
            {std::string_view(kPassName)},
            [](const Thresholds&) {
              return fmt::format(
                  "the producer reported each communication operation's SDMA transfers "
                  "(communication.json, the database's bandwidth table), and an operation whose "
                  "span overlaps a MatMul task moved its SDMA data at under {:g} GB/s "
                  "(msprof-analyze's {:g} x {:g} GB/s) and under {:g}% of the median bandwidth "
                  "of the rank's SDMA operations that overlap no MatMul (of {:g} GB/s where "
                  "there are none); info; the saving is the transfer time beyond that "
                  "bandwidth, at most",
                  kThreshold * kSdmaBaselineGbps, kThreshold, kSdmaBaselineGbps,
                  100 * kSlowerThanAlone, kSdmaBaselineGbps);
            },
            ContentionRule}}};
}

}  // namespace opscope::analyze
