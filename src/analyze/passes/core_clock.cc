// AI Core operators that ran below the chip's clock: msprof-analyze's
// advisor's "AI Core frequency" check (its AICoreFreqChecker and
// FrequencyCollector, advisor/analyzer/computation/ai_core_freq/), restated:
// the clock samples (torch_npu's "AI Core Freq" counter, msprof's AICORE_FREQ
// table; ReportedTables::core_clock) each hold from their time until the
// next; each AI Core or MIX_AIC task takes the lowest clock of the samples
// that cover it; an operator (by name) is down-clocked where its calls' mean
// shortfall from the chip's clock, mean((nominal - clock) / nominal), is 5%
// or more (its DECREASE_FREQ_RATIO). The chip's clock is info.json's
// aic_frequency where the run recorded it, else the highest sample (said to
// be so). One analysis in one file: its pass, table and rule, registered with
// one line in registry.cc (docs/seams.md).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyze/analysis.h"
#include "analyze/passes/pass.h"

namespace opscope::analyze {
namespace {

constexpr std::string_view kPassName = "core_clock";
// An operator's mean shortfall from the chip's clock from which it is
// down-clocked (msprof-analyze's DECREASE_FREQ_RATIO).
constexpr double kShortfall = 0.05;
// The share of AI Core time in down-clocked operators from which the rule
// warns.
constexpr double kWarningPct = 10;

struct SlowOp {
  std::string name;
  int64_t calls = 0, ns = 0;
  double shortfall = 0;  // mean (nominal - clock) / nominal over its calls
  double mean_mhz = 0, max_mhz = 0, min_mhz = 0;
  int64_t lost_ns = 0;  // sum of duration x (1 - clock / nominal)
};

struct CoreClock {
  double nominal_mhz = 0;
  bool nominal_recorded = false;  // from info.json, else the highest sample
  int64_t samples = 0;
  int64_t checked_ns = 0;   // AI Core tasks with a clock
  std::vector<SlowOp> ops;  // down-clocked operators, most time first
};

CoreClock Compute(const TraceModel& model) {
  CoreClock out;
  const std::vector<ReportedClockSample>& clock = model.reported.core_clock;
  out.samples = static_cast<int64_t>(clock.size());
  if (clock.empty()) return out;
  if (model.reported.chip && model.reported.chip->core_mhz > 0) {
    out.nominal_mhz = model.reported.chip->core_mhz, out.nominal_recorded = true;
  } else {
    for (const ReportedClockSample& s : clock) out.nominal_mhz = std::max(out.nominal_mhz, s.mhz);
  }
  if (out.nominal_mhz <= 0) return out;
  // Each AI Core task at the lowest clock that covers it, by operator.
  struct Calls {
    int64_t ns = 0, lost_ns = 0;
    std::vector<double> mhz;
  };
  std::map<uint32_t, Calls> by_name;  // name id -> its calls
  std::vector<int8_t> ai_core(model.string_count(), -1);
  for (size_t e = 0; e < model.size(); ++e) {
    if (!IsDevice(model.cls[e]) || model.duration_ns[e] < 0) continue;
    int8_t& k = ai_core[model.kind[e]];
    if (k < 0) {
      const std::string_view kind = model.String(model.kind[e]);
      k = kind == "AI_CORE" || kind == "MIX_AIC";
    }
    if (k != 1) continue;
    const int64_t b = model.start_ns[e], end = b + model.duration_ns[e];
    // The sample in force at the start (none before the first), and the
    // later ones until the end.
    auto it = std::upper_bound(clock.begin(), clock.end(), b,
                               [](int64_t t, const ReportedClockSample& s) { return t < s.ns; });
    if (it == clock.begin()) continue;
    double lowest = (--it)->mhz;
    for (++it; it != clock.end() && it->ns < end; ++it) lowest = std::min(lowest, it->mhz);
    Calls& c = by_name[model.name[e]];
    c.ns += model.duration_ns[e];
    c.mhz.push_back(lowest);
    const double slower = std::max(0.0, 1.0 - lowest / out.nominal_mhz);
    c.lost_ns += static_cast<int64_t>(static_cast<double>(model.duration_ns[e]) * slower);
    out.checked_ns += model.duration_ns[e];
  }
  for (auto& [name_id, c] : by_name) {
    double shortfall = 0, sum = 0;
    for (const double f : c.mhz) shortfall += (out.nominal_mhz - f) / out.nominal_mhz, sum += f;
    const auto n = static_cast<double>(c.mhz.size());
    shortfall /= n;
    if (shortfall < kShortfall) continue;
    const auto [lo, hi] = std::minmax_element(c.mhz.begin(), c.mhz.end());
    out.ops.push_back({std::string(model.String(name_id)), static_cast<int64_t>(c.mhz.size()), c.ns,
                       shortfall, sum / n, *hi, *lo, c.lost_ns});
  }
  std::sort(out.ops.begin(), out.ops.end(), [](const SlowOp& x, const SlowOp& y) {
    return x.ns != y.ns                 ? x.ns > y.ns
           : x.shortfall != y.shortfall ? x.shortfall > y.shortfall
                                        : x.name < y.name;
  });
  return out;
}

std::string NominalText(const CoreClock& c) {
  return fmt::format("{:g} MHz ({})", c.nominal_mhz,
                     c.nominal_recorded ? "the chip's clock, info.json's aic_frequency"
                                        : "the highest recorded: the run's info.json is absent");
}

using core::ResultTable;
using core::Unit;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const auto* clock = a.results.Get<CoreClock>(kPassName);
  if (clock == nullptr || clock->ops.empty()) return;
  ResultTable table;
  table.section = std::string(kPassName);
  table.title = fmt::format("AI Core operators below the chip's clock of {}", NominalText(*clock));
  table.columns = {
      {"trace", "Trace", 0, false},
      {"operator", "Operator"},
      {"calls", "Calls"},
      {.key = "total_ns", .header = "Total", .precision = 3, .unit = Unit::kTime},
      {.key = "shortfall_pct", .header = "Clock below", .precision = 1, .unit = Unit::kPercent},
      {.key = "mean_mhz", .header = "Mean MHz", .precision = 0},
      {.key = "max_mhz", .header = "Max MHz", .precision = 0},
      {.key = "min_mhz", .header = "Min MHz", .precision = 0},
      {.key = "lost_ns", .header = "Lost at most", .precision = 3, .unit = Unit::kTime}};
  const std::string path(c.path);
  for (const SlowOp& op : clock->ops) {
    table.AddRow({path, op.name, op.calls, op.ns, 100.0 * op.shortfall, op.mean_mhz, op.max_mhz,
                  op.min_mhz, op.lost_ns});
  }
  table.notes.push_back(fmt::format(
      "Each AI Core or MIX_AIC task takes the lowest clock of the {} samples that cover it (a "
      "sample holds until the next); an operator is listed where its calls ran {:g}% or more "
      "below the chip's clock on average (msprof-analyze's AI Core frequency check). Lost at "
      "most: each call's time times its shortfall, as if its work scaled with the clock.",
      clock->samples, 100 * kShortfall));
  tables.push_back(std::move(table));
}

void CoreClockRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* clock = c.analysis.results.Get<CoreClock>(kPassName);
  if (clock == nullptr || clock->ops.empty()) return;
  int64_t ns = 0, lost = 0;
  std::string names;
  for (size_t i = 0; i < clock->ops.size(); ++i) {
    const SlowOp& op = clock->ops[i];
    ns += op.ns, lost += op.lost_ns;
    if (i < 3) {
      names += fmt::format("{}{} ({} call{}, {:.3f} ms, {:.1f}% below, {:g}-{:g} MHz)",
                           i == 0 ? "" : "; ", op.name, op.calls, op.calls == 1 ? "" : "s",
                           op.ns / 1e6, 100 * op.shortfall, op.min_mhz, op.max_mhz);
    }
  }
  if (clock->ops.size() > 3) names += fmt::format("; {} more", clock->ops.size() - 3);
  const double pct = Pct(ns, clock->checked_ns);
  Finding f{
      "ai_core_clock", pct >= kWarningPct ? Severity::kWarning : Severity::kInfo,
      fmt::format("{} AI Core operator{} ran below the chip's clock of {:g} MHz: {:.1f}% of "
                  "the AI Core tasks' time",
                  clock->ops.size(), clock->ops.size() == 1 ? "" : "s", clock->nominal_mhz, pct),
      names + fmt::format(". Clock: {}; {} samples (the core_clock table)", NominalText(*clock),
                          clock->samples),
      fmt::format("Find why the AI Cores slowed down: power capping or a thermal limit "
                  "(npu-smi info -t power and -t temperature, the board's power limit), "
                  "or a clock set below the chip's; compare the same operator's time at "
                  "full clock. At most {:.3f} ms of their time is the lower clock's, if "
                  "their work scales with the clock.",
                  lost / 1e6)};
  f.saving_ns = lost;
  out.push_back(std::move(f));
}

}  // namespace

Pass CoreClockPass() {
  return {kPassName,
          "Did the AI Cores run below the chip's clock?",
          {},
          [](const TraceModel& model, Analysis& a) { a.results.Set(kPassName, Compute(model)); },
          Tables,
          {{"ai_core_clock",
            {std::string_view(kPassName)},
            [](const Thresholds&) {
              return fmt::format(
                  "the run recorded the AI Core's clock (the \"AI Core Freq\" counter), and AI "
                  "Core or MIX_AIC operators ran {:g}% or more below the chip's clock on average "
                  "(each task at the lowest clock that covers it; the chip's clock from "
                  "info.json, else the highest sample: msprof-analyze's AI Core frequency "
                  "check); a warning where they take {:g}% of the AI Core tasks' time or more; "
                  "the saving, at most, is their time times their shortfall",
                  100 * kShortfall, kWarningPct);
            },
            CoreClockRule}}};
}

}  // namespace opscope::analyze
