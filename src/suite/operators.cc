#include "suite/operators.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/ceilings.h"
#include "core/text.h"
#include "workloads/memory_bench.h"
#include "workloads/operators.h"
#include "workloads/progress.h"

namespace opscope::suite {
namespace {

using report::Unit;
using report::Value;

// What the title says of the output: fp32, or where a device wrote some
// results in the inputs' type (aclnn), that those are noted.
template <typename Results>
std::string OutputWords(const Results& results) {
  for (const auto& r : results) {
    if (r.output_type != devices::DType::kF32) {
      return "fp32 output, or the inputs' type where the note says so";
    }
  }
  return "fp32 output";
}

int64_t ParseDimension(const std::string& text, const std::string& whole) {
  const auto fail = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument,
                 "--sizes '" + core::EscapeForTerminal(whole) + "': '" +
                     core::EscapeForTerminal(text) + "' " + why +
                     " (sizes are positive integers: N for N x N x N, or MxNxK)");
  };
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    throw fail(text.rfind('-', 0) == 0 ? "is negative" : "is not a positive integer");
  }
  if (text.size() > 9) throw fail("is absurdly large");
  const int64_t value = std::stoll(text);
  if (value == 0) throw fail("is zero");
  return value;
}

Value Pct(double pct) { return pct < 0 ? Value{} : Value{pct}; }

// The timing columns every operator table shares, and their values for a result.
std::vector<report::Column> TimingColumns() {
  return {{"status", "Status"},
          {.key = "median_ns",
           .header = "Median ms",
           .precision = 3,
           .unit = Unit::kTime,
           .scale = 1e6},
          {.key = "p10_ns", .header = "p10 ms", .precision = 3, .unit = Unit::kTime, .scale = 1e6},
          {.key = "p90_ns", .header = "p90 ms", .precision = 3, .unit = Unit::kTime, .scale = 1e6},
          {.key = "spread_pct", .header = "Spread %", .precision = 1, .unit = Unit::kPercent},
          {.key = "first_run_ns",
           .header = "First ms",
           .precision = 1,
           .unit = Unit::kTime,
           .scale = 1e6},
          {"reps", "Reps", 0, false}};
}

std::vector<Value> TimingValues(const workloads::OperatorResult& r) {
  const bool waived = r.status == workloads::Status::kWaived;
  const auto timed = [&](double ms) { return waived ? Value{} : Value{ms}; };
  const double spread = 100 * workloads::Spread(r.stats);
  return {std::string(workloads::Name(r.status)),
          timed(r.stats.median_ms),
          timed(r.stats.p10_ms),
          timed(r.stats.p90_ms),
          waived || r.stats.median_ms <= 0 ? Value{} : Value{spread},
          timed(r.stats.first_run_ms),
          int64_t{r.stats.reps}};
}

// The closing columns: rates against peak and ceiling, verification, notes.
std::vector<report::Column> RatingColumns() {
  return {{.key = "pct_peak", .header = "% peak", .precision = 1, .unit = Unit::kPercent},
          {.key = "pct_ceiling", .header = "% ceiling", .precision = 1, .unit = Unit::kPercent},
          {"max_rel_error", "Max rel err", 2, false},
          {"implementation", "Implementation", 0, false},
          {"flags", "Flags"},
          {"note", "Note"}};
}

std::vector<Value> RatingValues(const workloads::OperatorResult& r) {
  const bool ok = r.status == workloads::Status::kOk;
  return {
      ok ? Pct(r.pct_peak) : Value{},
      ok ? Pct(r.pct_ceiling) : Value{},
      r.status == workloads::Status::kWaived ? Value{} : Value{r.verification.max_relative_error},
      r.implementation,
      workloads::DoubtFlags(r),
      ok ? r.note : r.reason};
}

template <typename T>
std::vector<T> Concat(std::vector<T> first, const std::vector<T>& second,
                      const std::vector<T>& third, const std::vector<T>& fourth) {
  for (const auto* part : {&second, &third, &fourth})
    first.insert(first.end(), part->begin(), part->end());
  return first;
}

// The ceilings % of ceiling refers to: a file, or measured now for the dtypes used.
workloads::FlopsCeilings Ceilings(devices::Device& device, const std::string& file,
                                  const std::vector<devices::DType>& dtypes) {
  workloads::FlopsCeilings c;
  if (!file.empty()) {
    const core::Ceilings loaded = core::LoadCeilings(file);
    c.flops_per_second = loaded.flops_per_second;
    c.source = "% ceiling: of the ceilings in " + file + " (" + loaded.device_name + ")";
    if (loaded.device_id != device.properties().id) {
      c.source += " -- measured on device '" + loaded.device_id + "', not this one";
    }
    return c;
  }
  workloads::RunnerOptions quick;
  quick.min_reps = 10;
  quick.min_time_ms = 100;
  quick.warmup = 1;
  std::string methods;
  for (const auto dtype : dtypes) {
    const auto& measurable = device.properties().capabilities.peak_loop_dtypes;
    if (std::find(measurable.begin(), measurable.end(), dtype) == measurable.end()) continue;
    const auto r = workloads::MeasureFlopsCeiling(device, dtype, quick);
    c.flops_per_second[devices::Name(dtype)] = r.measured;
    methods += fmt::format("{}{} {:.1f} GFLOP/s ({})", methods.empty() ? "" : "; ",
                           devices::Name(dtype), r.measured / 1e9, r.method);
  }
  c.source = methods.empty()
                 ? std::string(
                       "% ceiling: n/a (this device has no FMA-loop ceiling to measure; "
                       "pass --ceilings ceilings.json from a roofline run)")
                 : "% ceiling: of the FMA-loop ceiling measured now: " + methods +
                       " (or pass --ceilings ceilings.json from `opscope bench roofline`)";
  return c;
}

void PeakNotes(const devices::Device& device, const std::vector<devices::DType>& dtypes,
               std::vector<std::string>& notes) {
  for (const auto& peak : device.properties().peaks) {
    if (std::find(dtypes.begin(), dtypes.end(), peak.dtype) == dtypes.end()) continue;
    notes.push_back(std::string("% peak (") + devices::Name(peak.dtype) + "): of the theoretical " +
                    peak.formula);
  }
}

std::string FailureOf(int failed, const std::string& what) {
  return failed > 0 ? fmt::format(
                          "{} {} case(s) failed verification: their figures are not "
                          "valid (see the table)",
                          failed, what)
                    : std::string();
}

}  // namespace

void RemeasureCeilingsBelowResults(devices::Device& device, const std::string& ceilings_file,
                                   workloads::FlopsCeilings& ceilings,
                                   const std::vector<RatedResult>& results) {
  if (!ceilings_file.empty()) return;
  std::set<devices::DType> above;
  for (const RatedResult& r : results) {
    if (r.result->status == workloads::Status::kOk && r.result->pct_ceiling > 100) {
      above.insert(r.dtype);
    }
  }
  workloads::RunnerOptions longer;
  longer.min_reps = 30;
  longer.min_time_ms = 500;
  longer.warmup = 3;
  for (const devices::DType dtype : above) {
    const std::string name = devices::Name(dtype);
    const double before = ceilings.flops_per_second[name];
    const auto m = workloads::MeasureFlopsCeiling(device, dtype, longer);
    ceilings.flops_per_second[name] = std::max(before, m.measured);
    ceilings.source += fmt::format(
        "; {} ceiling re-measured once (longer) because a result was above it: {:.1f} -> {:.1f} "
        "GFLOP/s (the higher is used)",
        name, before / 1e9, m.measured / 1e9);
    for (const RatedResult& r : results) {
      if (r.result->status == workloads::Status::kOk && r.dtype == dtype) {
        workloads::Conclude(*r.result, device, dtype, ceilings);
      }
    }
  }
}

std::vector<std::array<int64_t, 3>> ParseMatmulShapes(const std::string& text) {
  std::vector<std::array<int64_t, 3>> shapes;
  for (const auto& item : core::SplitList(text, "--sizes")) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
      const size_t x = item.find('x', start);
      parts.push_back(item.substr(start, x == std::string::npos ? std::string::npos : x - start));
      if (x == std::string::npos) break;
      start = x + 1;
    }
    if (parts.size() != 1 && parts.size() != 3) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--sizes: '" + core::EscapeForTerminal(item) + "' is neither N nor MxNxK");
    }
    std::array<int64_t, 3> mnk{};
    for (size_t i = 0; i < 3; ++i) mnk[i] = ParseDimension(parts[parts.size() == 1 ? 0 : i], text);
    shapes.push_back(mnk);
  }
  return shapes;
}

std::vector<devices::DType> ParseDTypes(const std::string& text) {
  std::vector<devices::DType> dtypes;
  for (const auto& d : core::SplitList(text, "--dtype")) dtypes.push_back(devices::ParseDType(d));
  return dtypes;
}

StepOutput Matmul(devices::Device& device, const MatmulOptions& options) {
  std::vector<std::string> impl_list = options.impls.empty() ? device.MatmulImpls() : options.impls;
  std::vector<devices::MatmulSpec> specs;
  for (const auto& [m, n, k] : options.shapes) {
    for (const auto dt : options.dtypes) {
      for (const auto& impl : impl_list) specs.push_back({m, n, k, dt, impl});
    }
  }
  for (const auto& spec : specs) {
    const devices::Applicability applicability = device.MatmulApplicability(spec);
    if (applicability.reason == devices::NotApplicableReason::kUnknownImplementation)
      throw Error(ErrorCode::kInvalidArgument, "--impl: " + applicability.text);
    workloads::CheckMemory(
        device,
        fmt::format("matmul {}x{}x{} {}", spec.m, spec.n, spec.k, devices::Name(spec.dtype)),
        workloads::MatmulBytes(spec));
  }
  const BusyBefore busy_before = MeasureBusyBefore();
  workloads::FlopsCeilings flops_ceilings = Ceilings(device, options.ceilings_file, options.dtypes);
  workloads::Progress progress("bench matmul");
  auto results = workloads::RunMatmul(device, specs, options.runner, flops_ceilings, progress);
  {
    std::vector<RatedResult> rated;
    for (auto& r : results) rated.push_back({&r, r.spec.dtype});
    RemeasureCeilingsBelowResults(device, options.ceilings_file, flops_ceilings, rated);
  }

  report::ResultTable table;
  table.section = "matmul";
  table.title =
      fmt::format("matmul on {} ({}, {}): C = A x B, row-major, {}{}", device.properties().id,
                  device.properties().name, devices::ComputeUnitsText(device.properties()),
                  OutputWords(results), busy_before.TitleSuffix());
  table.columns = Concat<report::Column>(
      {{"case", "Case", 0, false},
       {"size", "Size"},
       {"m", "M", 0, false},
       {"n", "N", 0, false},
       {"k", "K", 0, false},
       {"dtype", "Dtype"},
       {"impl", "Impl"}},
      TimingColumns(),
      {{.key = "flops", .header = "FLOPs", .precision = 0, .terminal = false, .unit = Unit::kFlop},
       {.key = "flop_per_s",
        .header = "GFLOP/s",
        .precision = 1,
        .unit = Unit::kFlopPerSecond,
        .scale = 1e9}},
      RatingColumns());
  int failed = 0;
  std::map<std::string, std::string> chosen;
  for (const auto& r : results) {
    const auto& s = r.spec;
    const std::string size =
        s.m == s.n && s.n == s.k ? std::to_string(s.m) : fmt::format("{}x{}x{}", s.m, s.n, s.k);
    const bool ok = r.status == workloads::Status::kOk;
    failed += r.status == workloads::Status::kFailed;
    if (!r.implementation.empty()) {
      chosen[s.impl + " " + devices::Name(s.dtype)] = r.implementation;
    }
    table.AddRow(Concat<Value>(
        {r.key, size, s.m, s.n, s.k, std::string(devices::Name(s.dtype)), s.impl}, TimingValues(r),
        {static_cast<int64_t>(r.flops), ok ? Value{r.flops_per_second / 1e9} : Value{}},
        RatingValues(r)));
  }
  table.notes.push_back(busy_before.note);
  table.notes.push_back("FLOPs = 2 x M x N x K per call; GFLOP/s from the median time.");
  PeakNotes(device, options.dtypes, table.notes);
  table.notes.push_back(flops_ceilings.source);
  for (const auto& [what, impl] : chosen)
    table.notes.push_back("implementation " + what + ": " + impl);
  table.notes.push_back("Each case: first run timed apart, " +
                        std::to_string(options.runner.warmup) +
                        " warm-up runs excluded, then repetitions until >= " +
                        std::to_string(options.runner.min_reps) +
                        " and >= " + fmt::format("{:.0f}", options.runner.min_time_ms) +
                        fmt::format(" ms (at most {} and {:.0f} s)", options.runner.max_reps,
                                    options.runner.max_time_ms / 1000) +
                        "; fresh random inputs; C checked against a double-precision reference.");
  return {{table}, FailureOf(failed, "matmul")};
}

StepOutput Conv2d(devices::Device& device, const Conv2dOptions& options) {
  std::vector<std::pair<std::string, devices::Conv2dSpec>> list;
  const std::vector<devices::DType>& dts = options.dtypes;
  std::vector<std::pair<std::string, std::string>> named = options.configs;
  if (named.empty()) {
    // The four configurations of the field report we follow: batch 16, 56x56, "same".
    named = {{"3x3 s1 64->64", "mb16ic64ih56oc64kh3sh1"},
             {"3x3 s2 64->64", "mb16ic64ih56oc64kh3sh2"},
             {"7x7 s2 3->64", "mb16ic3ih56oc64kh7sh2"},
             {"1x1 s1 256->256", "mb16ic256ih56oc256kh1sh1"}};
  }
  for (const auto dt : dts) {
    for (const auto& [name, text] : named) {
      devices::Conv2dSpec spec = workloads::ParseConv2d(text);
      spec.dtype = dt;
      list.emplace_back(name, spec);
    }
  }
  for (const auto& [name, spec] : list) {
    workloads::CheckMemory(device, "conv2d " + name, workloads::Conv2dBytes(spec));
  }
  const BusyBefore busy_before = MeasureBusyBefore();
  workloads::FlopsCeilings flops_ceilings = Ceilings(device, options.ceilings_file, dts);
  workloads::Progress progress("bench conv2d");
  auto results = workloads::RunConv2d(device, list, options.runner, flops_ceilings, progress);
  {
    std::vector<RatedResult> rated;
    for (auto& r : results) rated.push_back({&r, r.spec.dtype});
    RemeasureCeilingsBelowResults(device, options.ceilings_file, flops_ceilings, rated);
  }
  report::ResultTable table;
  table.section = "conv2d";
  table.title = fmt::format("conv2d forward on {} ({}), {}{}", device.properties().id,
                            devices::ComputeUnitsText(device.properties()), OutputWords(results),
                            busy_before.TitleSuffix());
  table.columns = Concat<report::Column>(
      {{"case", "Case", 0, false},
       {"config", "Config"},
       {"spec", "Spec", 0, false},
       {"dtype", "Dtype"}},
      TimingColumns(),
      {{"macs", "MACs", 0, false},
       {.key = "flops", .header = "FLOPs", .precision = 0, .terminal = false, .unit = Unit::kFlop},
       // Human copies of macs and flops.
       {"gmacs", "GMACs", 3, true, false},
       {.key = "flops",
        .header = "GFLOPs",
        .precision = 3,
        .terminal = true,
        .json = false,
        .unit = Unit::kFlop,
        .scale = 1e9},
       {.key = "flop_per_s",
        .header = "TFLOP/s",
        .precision = 3,
        .unit = Unit::kFlopPerSecond,
        .scale = 1e12}},
      RatingColumns());
  int failed = 0;
  for (const auto& r : results) {
    const bool ok = r.status == workloads::Status::kOk;
    failed += r.status == workloads::Status::kFailed;
    table.AddRow(
        Concat<Value>({r.key, r.config, workloads::FormatConv2d(r.spec),
                       std::string(devices::Name(r.spec.dtype))},
                      TimingValues(r),
                      {r.macs, static_cast<int64_t>(r.flops), static_cast<double>(r.macs) / 1e9,
                       r.flops / 1e9, ok ? Value{r.flops_per_second / 1e12} : Value{}},
                      RatingValues(r)));
  }
  table.notes.push_back(busy_before.note);
  table.notes.push_back(
      "MACs = N x Cout x Hout x Wout x Cin/groups x kh x kw; FLOPs = 2 x MACs (the field "
      "report we follow printed FLOPs under a MACs heading).");
  PeakNotes(device, dts, table.notes);
  table.notes.push_back(flops_ceilings.source);
  if (!results.empty())
    table.notes.push_back("implementation: " + results[0].implementation +
                          "; reorders to and from it are excluded from the time");
  table.notes.push_back(
      "Outputs checked at 64 sampled points against a double-precision reference.");
  return {{table}, FailureOf(failed, "conv2d")};
}

StepOutput Roofline(devices::Device& device, const RooflineOptions& options) {
  workloads::Progress progress("bench roofline");
  core::Ceilings ceilings;
  const auto results = workloads::RunRoofline(device, options.runner, progress, ceilings);
  const std::string& path = options.out;
  core::SaveCeilings(ceilings, path);
  report::ResultTable table;
  table.section = "ceilings";
  table.title =
      fmt::format("Measured ceilings of {} ({}, {})", device.properties().id,
                  device.properties().name, devices::ComputeUnitsText(device.properties()));
  table.columns = {
      {"ceiling", "Ceiling"},
      {"measured", "Measured", 0, false},
      {"unit", "Unit", 0, false},
      {"measured_g", "Measured", 1},
      {"unit_g", "Unit"},
      {"theoretical", "Theoretical", 0, false},
      {"theoretical_g", "Theoretical", 1},
      {.key = "pct_of_theoretical",
       .header = "% of theoretical",
       .precision = 1,
       .unit = Unit::kPercent},
      {.key = "spread_pct", .header = "Spread %", .precision = 1, .unit = Unit::kPercent},
      {"flags", "Flags"},
      {"method", "Method"}};
  for (const auto& r : results) {
    const workloads::Stats& t = r.stats;
    const double spread = workloads::Spread(t);
    // A measured ceiling above the theoretical peak contradicts one of the two.
    const bool above = r.theoretical > 0 && r.measured > r.theoretical;
    const bool noisy = spread > workloads::kNoisySpread;
    const std::string flags = above && noisy ? "inconsistent, noisy"
                              : above        ? "inconsistent"
                              : noisy        ? "noisy"
                                             : "";
    table.AddRow({r.ceiling, r.measured, r.unit, r.measured / 1e9, "G" + r.unit,
                  r.theoretical > 0 ? Value{r.theoretical} : Value{},
                  r.theoretical > 0 ? Value{r.theoretical / 1e9} : Value{},
                  r.theoretical > 0 ? Value{100 * r.measured / r.theoretical} : Value{},
                  t.median_ms > 0 ? Value{100 * spread} : Value{}, flags, r.method});
    if (above) {
      table.notes.push_back(fmt::format(
          "inconsistent: {} measured {:.1f}% of its theoretical peak; the clock or the peak's "
          "formula is wrong, or the loop's work count is",
          r.ceiling, 100 * r.measured / r.theoretical));
    }
  }
  table.notes.push_back(
      "Memory bandwidth counts bytes read plus bytes written; the theoretical "
      "DRAM bandwidth of a virtual machine is not knowable here.");
  table.notes.push_back("Wrote " + path +
                        " (read by `opscope bench matmul --ceilings` and the analyzer).");
  return {{table}, ""};
}

}  // namespace opscope::suite
