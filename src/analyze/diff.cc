#include "analyze/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <random>

#include "analyze/compute_device.h"
#include "analyze/intervals.h"
#include "analyze/median.h"
#include "analyze/names.h"
#include "analyze/passes/steps.h"
#include "analyze/pipeline.h"

namespace opscope::analyze {
namespace {

// A Python frame as with_stack names it, "path(line): function": where its
// line is ("path(" and "): " bound it); npos for any other name.
struct FrameLine {
  size_t open = std::string_view::npos, close = std::string_view::npos;
};
FrameLine LineOf(std::string_view name) {
  const size_t close = name.find("): ");
  if (close == std::string_view::npos) return {};
  const size_t open = name.rfind('(', close);
  if (open == std::string_view::npos || open + 1 == close) return {};
  for (size_t i = open + 1; i < close; ++i) {
    if (name[i] < '0' || name[i] > '9') return {};
  }
  return {open, close};
}

// The same runtime call in the other vendor's spelling (cudaLaunchKernel,
// hipLaunchKernel): its name without the vendor's prefix; "" for others.
std::string WithoutVendor(std::string_view name) {
  for (const std::string_view prefix : {"cuda", "hip"}) {
    if (name.starts_with(prefix) && name.size() > prefix.size() &&
        std::isupper(static_cast<unsigned char>(name[prefix.size()]))) {
      return std::string(name.substr(prefix.size()));
    }
  }
  return {};
}

// One thing under two names: the same Python function at another line (a
// newer version of its file: PyTorch, transformers), or the same runtime call
// in the other vendor's spelling. Where one removed and one added event share
// such a key, and no other event on either side does, their calls compare:
// the row keeps both names ("module.py(1743 -> 1755): _call_impl",
// "cudaDeviceSynchronize -> hipDeviceSynchronize").
void MatchRenamed(std::map<std::pair<std::string, EventClass>, OpDelta>& ops) {
  std::map<std::pair<std::string, EventClass>, std::vector<std::pair<std::string, EventClass>>>
      by_key;
  for (const auto& [key, o] : ops) {
    std::string same;
    if (o.cls == EventClass::kPython) {
      if (const FrameLine at = LineOf(o.name); at.open != std::string_view::npos) {
        same = o.name.substr(0, at.open) + o.name.substr(at.close + 1);
      }
    } else if (o.cls == EventClass::kRuntime) {
      same = WithoutVendor(o.name);
    }
    if (!same.empty()) by_key[{std::move(same), o.cls}].push_back(key);
  }
  for (const auto& [same, keys] : by_key) {
    if (keys.size() != 2) continue;
    OpDelta& x = ops.at(keys[0]);
    OpDelta& y = ops.at(keys[1]);
    const bool x_removed = x.after_count == 0 && y.before_count == 0;
    if (!x_removed && !(y.after_count == 0 && x.before_count == 0)) continue;
    OpDelta& removed = x_removed ? x : y;
    const OpDelta& added = x_removed ? y : x;
    if (removed.cls == EventClass::kPython) {
      const FrameLine was = LineOf(removed.name), now = LineOf(added.name);
      removed.name.insert(was.close,
                          " -> " + added.name.substr(now.open + 1, now.close - now.open - 1));
    } else {
      removed.name += " -> " + added.name;
    }
    removed.after_count = added.after_count, removed.after_ns = added.after_ns;
    ops.erase(x_removed ? keys[1] : keys[0]);
  }
}

int64_t Span(const TraceModel& m) {
  const auto [first, last] = SpanOf(m);
  return last > first ? last - first : 0;
}

std::vector<FrameworkOpDelta> MatchOperators(const std::vector<OpDeviceRow>& before,
                                             const std::vector<OpDeviceRow>& after,
                                             bool by_device) {
  std::map<std::pair<std::string, std::string>, FrameworkOpDelta> ops;
  for (const OpDeviceRow& r : before) {
    FrameworkOpDelta& o = ops[{r.name, r.shapes}];
    o.name = r.name, o.shapes = r.shapes, o.before_calls = r.calls;
    o.before_device_ns = r.device_self_ns, o.before_device_total_ns = r.device_total_ns;
    o.before_host_ns = r.host_self_ns, o.before_kernels = r.top_kernels;
  }
  for (const OpDeviceRow& r : after) {
    FrameworkOpDelta& o = ops[{r.name, r.shapes}];
    o.name = r.name, o.shapes = r.shapes, o.after_calls = r.calls;
    o.after_device_ns = r.device_self_ns, o.after_device_total_ns = r.device_total_ns;
    o.after_host_ns = r.host_self_ns, o.after_kernels = r.top_kernels;
  }
  std::vector<FrameworkOpDelta> out;
  const auto time_of = [&](const FrameworkOpDelta& o, bool after_side) {
    if (by_device) return after_side ? o.after_device_ns : o.before_device_ns;
    return after_side ? o.after_host_ns : o.before_host_ns;
  };
  for (auto& [key, o] : ops) {
    if (o.before_calls == 0) {
      o.change = "added";
    } else if (o.after_calls == 0) {
      o.change = "removed";
    } else {
      const int64_t b = time_of(o, false), a = time_of(o, true);
      o.change_pct = b > 0 ? 100.0 * static_cast<double>(a - b) / static_cast<double>(b) : 0;
      o.change = b == 0 && a > 0     ? "slower"
                 : o.change_pct > 2  ? "slower"
                 : o.change_pct < -2 ? "faster"
                                     : "same";
    }
    out.push_back(std::move(o));
  }
  std::stable_sort(out.begin(), out.end(),
                   [&](const FrameworkOpDelta& x, const FrameworkOpDelta& y) {
                     return std::llabs(time_of(x, true) - time_of(x, false)) >
                            std::llabs(time_of(y, true) - time_of(y, false));
                   });
  return out;
}

// Time by class on the trace's compute device, and idle time in the compute
// window. On a device, the sum of its tasks' durations; on the CPU (no device
// work), the union of each class's calls, so nested operators count once.
std::map<std::string, int64_t> ByClass(const TraceModel& m, const Analysis& a) {
  std::map<std::string, int64_t> out = {
      {"compute", 0}, {"communication", 0}, {"memory", 0}, {"idle", 0}};
  const bool cpu = a.compute_on == ComputeOn::kCpu;
  const std::vector<Work> work = ComputeWork(m, cpu ? ComputeOn::kCpu : ComputeOn::kDevice);
  const char* const names[] = {"", "compute", "communication", "memory"};
  Intervals spans[4];
  for (size_t e = 0; e < m.size(); ++e) {
    if (work[e] == Work::kNone) continue;
    const size_t k = static_cast<size_t>(work[e]);
    if (cpu) {
      spans[k].push_back({m.start_ns[e], m.start_ns[e] + m.duration_ns[e]});
    } else {
      out[names[k]] += m.duration_ns[e];
    }
  }
  for (size_t k = 1; cpu && k < 4; ++k) {
    for (const Interval& i : Union(std::move(spans[k]))) out[names[k]] += i.end - i.begin;
  }
  if (a.busy.has_device) {
    out["idle"] = a.busy.window_end_ns - a.busy.window_begin_ns - a.busy.busy_ns;
  }
  return out;
}

}  // namespace

double MannWhitneyP(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t n1 = a.size(), n2 = b.size();
  if (n1 == 0 || n2 == 0) return -1;
  std::vector<std::pair<int64_t, int>> all;
  for (const int64_t v : a) all.emplace_back(v, 0);
  for (const int64_t v : b) all.emplace_back(v, 1);
  std::sort(all.begin(), all.end());
  const double n = static_cast<double>(n1 + n2);
  double rank_sum_a = 0, ties = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;  // average
    for (size_t k = i; k < j; ++k) {
      if (all[k].second == 0) rank_sum_a += rank;
    }
    const double t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  const double u = rank_sum_a - static_cast<double>(n1) * (n1 + 1) / 2;
  const double mean = static_cast<double>(n1) * n2 / 2;
  if (n1 + n2 <= kExactMannWhitneyMax) {
    // Exact: every way of choosing n1 of the pooled (mid-)ranks is equally
    // likely under no change; p is the share of them whose rank sum lies at
    // least as far from its mean as the observed one (ties included).
    std::vector<double> ranks;
    for (size_t i = 0; i < all.size();) {
      size_t j = i;
      while (j < all.size() && all[j].first == all[i].first) ++j;
      for (size_t k = i; k < j; ++k) ranks.push_back((static_cast<double>(i + 1) + j) / 2);
      i = j;
    }
    const double expected = static_cast<double>(n1) * (n + 1) / 2;
    const double observed = std::fabs(rank_sum_a - expected) - 1e-9;
    uint64_t extreme = 0, total = 0;
    const auto choose = [&](auto&& self, size_t from, size_t left, double sum) -> void {
      if (left == 0) {
        ++total;
        extreme += std::fabs(sum - expected) >= observed;
        return;
      }
      for (size_t i = from; i + left <= ranks.size(); ++i)
        self(self, i + 1, left - 1, sum + ranks[i]);
    };
    choose(choose, 0, n1, 0.0);
    return static_cast<double>(extreme) / static_cast<double>(total);
  }
  const double variance = static_cast<double>(n1) * n2 / 12 * ((n + 1) - ties / (n * (n - 1)));
  if (variance <= 0) return 1;                                         // every value equal
  const double z = (std::fabs(u - mean) - 0.5) / std::sqrt(variance);  // continuity correction
  return std::min(1.0, std::erfc(std::max(z, 0.0) / std::sqrt(2.0)));
}

void CompareSamples(const std::vector<int64_t>& before, const std::vector<int64_t>& after,
                    TraceDiff& d) {
  d.has_interval = false;
  if (static_cast<int>(before.size()) < kMinStepsForInterval ||
      static_cast<int>(after.size()) < kMinStepsForInterval) {
    return;
  }
  const double b0 = Median(before);
  if (b0 <= 0) return;
  std::mt19937_64 rng(20261201);
  constexpr int kResamples = 2000;
  std::vector<double> changes;
  changes.reserve(kResamples);
  std::vector<double> rb(before.size()), ra(after.size());
  std::uniform_int_distribution<size_t> pick_b(0, before.size() - 1), pick_a(0, after.size() - 1);
  for (int r = 0; r < kResamples; ++r) {
    for (auto& v : rb) v = static_cast<double>(before[pick_b(rng)]);
    for (auto& v : ra) v = static_cast<double>(after[pick_a(rng)]);
    const double mb = Median(rb), ma = Median(ra);
    if (mb > 0) changes.push_back(100.0 * (ma - mb) / mb);
  }
  if (changes.empty()) return;
  std::sort(changes.begin(), changes.end());
  const auto at = [&](double q) {
    return changes[std::min(changes.size() - 1, static_cast<size_t>(q * (changes.size() - 1)))];
  };
  d.has_interval = true;
  d.ci_low_pct = at(0.025);
  d.ci_high_pct = at(0.975);
  d.p_value = MannWhitneyP(before, after);
}

TraceDiff DiffTraces(const TraceModel& before, const TraceModel& after) {
  TraceDiff d;
  const std::vector<StepBreakdown> bs = ComputeSteps(before), as = ComputeSteps(after);
  const StepSummary b = SummarizeSteps(bs), a = SummarizeSteps(as);
  d.before_all_steps = b.steps, d.after_all_steps = a.steps;
  d.before_steps = b.complete, d.after_steps = a.complete;
  if (b.complete > 0 && a.complete > 0) {
    d.basis = "median complete step";
    d.before_ns = b.median_ns, d.after_ns = a.median_ns;
    d.before_step_ns = b.durations_ns, d.after_step_ns = a.durations_ns;
    CompareSamples(b.durations_ns, a.durations_ns, d);
  } else {
    d.basis = "trace span";
    d.before_ns = Span(before), d.after_ns = Span(after);
  }
  d.change_pct =
      d.before_ns > 0 ? 100.0 * static_cast<double>(d.after_ns - d.before_ns) / d.before_ns : 0;
  if (!d.has_interval) {
    d.verdict = d.basis == "trace span"
                    ? "noise unknown: no complete steps to compare, one span each"
                    : fmt::format("noise unknown: fewer than {} complete steps on a side",
                                  kMinStepsForInterval);
  } else if (d.ci_low_pct > 0) {
    d.verdict = "slower";
  } else if (d.ci_high_pct < 0) {
    d.verdict = "faster";
  } else {
    d.verdict = "no change beyond noise";
  }
  std::map<std::pair<std::string, EventClass>, OpDelta> ops;
  for (const auto& s : ComputeOpStats(before)) {
    OpDelta& o = ops[{s.name, s.cls}];
    o.name = s.name, o.cls = s.cls, o.before_count = s.count, o.before_ns = s.total_ns;
  }
  for (const auto& s : ComputeOpStats(after)) {
    OpDelta& o = ops[{s.name, s.cls}];
    o.name = s.name, o.cls = s.cls, o.after_count = s.count, o.after_ns = s.total_ns;
  }
  MatchRenamed(ops);
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
  // The devices, the time by class and the framework operators with their
  // device time: what compares a program on two devices (or vendors).
  const AnalysisOptions only{.passes = {"op_device", "device_busy"}};
  const Analysis ba = AnalyzeTrace(before, only), aa = AnalyzeTrace(after, only);
  d.before_device = ba.device, d.after_device = aa.device;
  d.on_cpu = ba.compute_on == ComputeOn::kCpu && aa.compute_on == ComputeOn::kCpu;
  const bool device_work = ba.op_device.has_device || aa.op_device.has_device;
  if (Lower(ba.device) != Lower(aa.device)) {
    d.devices_differ = true;
    const auto named = [](const std::string& device) {
      return device.empty() ? std::string("a device the trace does not name") : "'" + device + "'";
    };
    d.devices_note = fmt::format(
        "The traces ran on different devices: {} before, {} after. Every change below compares "
        "the devices as well as the program; compare framework operators (the kernels behind "
        "them differ by vendor and library).",
        named(ba.device), named(aa.device));
  }
  const auto bc = ByClass(before, ba), ac = ByClass(after, aa);
  for (const char* cls : {"compute", "communication", "memory", "idle"}) {
    d.by_class.push_back({cls, bc.at(cls), ac.at(cls)});
  }
  d.framework_ops = MatchOperators(ba.op_device.ops, aa.op_device.ops, device_work);
  d.framework_ops_by_shape =
      MatchOperators(ba.op_device.by_shape, aa.op_device.by_shape, device_work);
  return d;
}

bool Regressed(const TraceDiff& d, double threshold_pct) {
  if (!(d.change_pct > threshold_pct)) return false;
  return !d.has_interval || d.ci_low_pct > 0;
}

}  // namespace opscope::analyze
