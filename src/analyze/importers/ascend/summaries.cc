#include "analyze/importers/ascend/summaries.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "analyze/importers/ascend/csv_columns.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr double kKiB = 1024.0, kMiB = 1024.0 * 1024.0;

// A header must have one of `names`; the one it has.
const char* OneOf(const CsvColumns& r, std::initializer_list<const char*> names) {
  if (const char* c = r.FirstOf(names)) return c;
  std::string list;
  for (const char* n : names) list += (list.empty() ? "'" : " or '") + std::string(n) + "'";
  throw Error(ErrorCode::kInvalidInput, r.path() + ": line 1: no " + list + " column");
}

// Series of (device, name) to their peaks, in device order, the highest first.
class Peaks {
 public:
  void Add(std::string_view device, std::string name, int64_t bytes, int64_t ns) {
    if (bytes < 0) return;  // N/A, or "only a release was captured" (docs/formats/ascend.md 3.7)
    ReportedMemoryPeak& p = peaks_[{std::string(device), name}];
    p.device = device, p.name = std::move(name), ++p.samples;
    if (bytes > p.peak_bytes) p.peak_bytes = bytes, p.peak_ns = ns;
  }
  std::vector<ReportedMemoryPeak> Sorted() const {
    std::vector<ReportedMemoryPeak> out;
    for (const auto& [key, p] : peaks_) out.push_back(p);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return std::tie(a.device, b.peak_bytes) < std::tie(b.device, a.peak_bytes);
    });
    return out;
  }

 private:
  std::map<std::pair<std::string, std::string>, ReportedMemoryPeak> peaks_;
};

}  // namespace

std::vector<ReportedTypeStat> ReadTypeStatistic(Source& source) {
  CsvColumns r(source, {"OP Type", "Count", "Total Time(us)"});
  std::vector<ReportedTypeStat> out;
  while (r.Next()) {
    ReportedTypeStat s;
    s.device = r.Text("Device_id");
    s.op_type = r.Text("OP Type");
    s.core_type = r.Text("Core Type");
    if (s.core_type == "N/A") s.core_type.clear();
    s.count = r.Count("Count");
    s.total_ns = r.Micros("Total Time(us)");
    s.min_ns = r.Micros("Min Time(us)");
    s.avg_ns = r.Micros("Avg Time(us)");
    s.max_ns = r.Micros("Max Time(us)");
    s.ratio_pct = r.Number("Ratio(%)");
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<ReportedApiStat> ReadApiStatistic(Source& source) {
  CsvColumns r(source, {"API Name", "Time(us)", "Count"});
  std::vector<ReportedApiStat> out;
  while (r.Next()) {
    ReportedApiStat s;
    s.device = r.Text("Device_id");
    s.level = r.Text("Level");
    s.api = r.Text("API Name");
    s.total_ns = r.Micros("Time(us)");
    s.count = r.Count("Count");
    s.avg_ns = r.Micros("Avg(us)");
    s.min_ns = r.Micros("Min(us)");
    s.max_ns = r.Micros("Max(us)");
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<ReportedOp> ReadOperatorDetails(Source& source) {
  CsvColumns r(source, {"Name"});
  // The code writes no space before "(us)"; the documentation shows one
  // (docs/formats/ascend.md 3.8): either is read.
  const auto column = [&](const char* code, const char* doc, bool required) -> const char* {
    if (required) return OneOf(r, {code, doc});
    return r.FirstOf({code, doc});
  };
  const char* host_self = column("Host Self Duration(us)", "Host Self Duration (us)", true);
  const char* host_total = column("Host Total Duration(us)", "Host Total Duration (us)", true);
  const char* device_self = column("Device Self Duration(us)", "Device Self Duration (us)", false);
  const char* device_total =
      column("Device Total Duration(us)", "Device Total Duration (us)", false);
  const char* aicore_self = column("Device Self Duration With AICore(us)",
                                   "Device Self Duration With AICore (us)", false);
  const char* aicore_total = column("Device Total Duration With AICore(us)",
                                    "Device Total Duration With AICore (us)", false);
  const auto ns = [&](const char* c) {
    if (c == nullptr) return int64_t{0};
    return std::max<int64_t>(0, r.Micros(c));
  };
  std::map<std::string, ReportedOp, std::less<>> ops;
  while (r.Next()) {
    const std::string_view name = r.Text("Name");
    auto it = ops.find(name);
    if (it == ops.end()) it = ops.emplace(std::string(name), ReportedOp{}).first;
    ReportedOp& op = it->second;
    op.name = it->first;
    ++op.rows;
    op.host_self_ns += ns(host_self);
    op.host_total_ns += ns(host_total);
    op.device_self_ns += ns(device_self);
    op.device_total_ns += ns(device_total);
    op.device_self_aicore_ns += ns(aicore_self);
    op.device_total_aicore_ns += ns(aicore_total);
  }
  std::vector<ReportedOp> out;
  for (auto& [name, op] : ops) out.push_back(std::move(op));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.device_self_ns, a.host_self_ns) > std::tie(b.device_self_ns, b.host_self_ns);
  });
  return out;
}

std::vector<ReportedMemoryPeak> ReadModuleMemory(Source& source) {
  CsvColumns r(source, {"Component", "Timestamp(us)"});
  // torch_npu's copy converts CANN's KB to MB (docs/formats/ascend.md 3.7).
  const char* reserved = OneOf(r, {"Total Reserved(MB)", "Total Reserved(KB)"});
  const double unit = std::string_view(reserved).ends_with("(MB)") ? kMiB : kKiB;
  const char* device = r.FirstOf({"Device_id", "Device"});
  Peaks peaks;
  while (r.Next()) {
    peaks.Add(device ? r.Text(device) : std::string_view(), std::string(r.Text("Component")),
              r.Size(reserved, unit), r.Micros("Timestamp(us)"));
  }
  return peaks.Sorted();
}

std::vector<ReportedMemoryPeak> ReadNpuMemory(Source& source) {
  CsvColumns r(source, {"event", "timestamp(us)"});
  static constexpr std::pair<const char*, const char*> kKinds[] = {
      {"ddr(KB)", "ddr"}, {"hbm(KB)", "hbm"}, {"memory(KB)", "memory"}};
  bool any = false;
  for (const auto& [column, kind] : kKinds) any = any || r.Has(column);
  if (!any) OneOf(r, {"ddr(KB)", "hbm(KB)", "memory(KB)"});
  Peaks peaks;
  while (r.Next()) {
    const int64_t ns = r.Micros("timestamp(us)");
    for (const auto& [column, kind] : kKinds) {
      if (!r.Has(column)) continue;
      peaks.Add(r.Text("Device_id"), std::string(r.Text("event")) + " " + kind,
                r.Size(column, kKiB), ns);
    }
  }
  return peaks.Sorted();
}

std::vector<ReportedIteration> ReadIterations(Source& source) {
  CsvColumns r(source, {"Iteration ID", "Iteration Time(us)"});
  std::vector<ReportedIteration> out;
  while (r.Next()) {
    ReportedIteration it;
    it.device = r.Text("Device_id");
    it.model_id = r.Text("Model ID");
    it.iteration = r.Text("Iteration ID");
    it.iteration_ns = r.Micros("Iteration Time(us)");
    it.fp_to_bp_ns = r.Micros("FP to BP Time(us)");
    it.refresh_ns = r.Micros("Iteration Refresh(us)");
    it.data_aug_ns = r.Micros("Data Aug Bound(us)");
    out.push_back(std::move(it));
  }
  return out;
}

}  // namespace opscope::analyze
