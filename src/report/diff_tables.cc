#include "report/diff_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "analyze/importer.h"
#include "analyze/trace_inputs.h"
#include "core/output.h"
#include "opscope/opscope.h"

namespace opscope::report {

std::vector<ResultTable> DiffTables(const std::string& before, const std::string& after,
                                    const analyze::TraceDiff& d, int top) {
  ResultTable summary;
  summary.section = "summary";
  summary.title = fmt::format("{} -> {}", before, after);
  summary.columns = {
      {"metric", "Metric"},
      {"before", "Before", 3},
      {"after", "After", 3},
      {"change", "Change", 3},
      {.key = "change_pct", .header = "Change %", .precision = 1, .unit = Unit::kPercent}};
  summary.AddRow({d.basis + " (ms)", d.before_ns / 1e6, d.after_ns / 1e6,
                  (d.after_ns - d.before_ns) / 1e6, d.change_pct});
  summary.AddRow({std::string("complete steps compared"), static_cast<double>(d.before_steps),
                  static_cast<double>(d.after_steps),
                  static_cast<double>(d.after_steps - d.before_steps), Value{}});
  summary.AddRow({std::string("all steps"), static_cast<double>(d.before_all_steps),
                  static_cast<double>(d.after_all_steps),
                  static_cast<double>(d.after_all_steps - d.before_all_steps), Value{}});
  const auto quantile = [](std::vector<int64_t> v, double q) {
    std::sort(v.begin(), v.end());
    return v.empty()
               ? 0.0
               : static_cast<double>(
                     v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))]) /
                     1e6;
  };
  if (!d.before_step_ns.empty() && !d.after_step_ns.empty()) {
    for (const auto& [label, q] : std::initializer_list<std::pair<const char*, double>>{
             {"step p10 (ms)", 0.1}, {"step p90 (ms)", 0.9}}) {
      const double b = quantile(d.before_step_ns, q), a = quantile(d.after_step_ns, q);
      summary.AddRow({std::string(label), b, a, a - b, b > 0 ? Value{100 * (a - b) / b} : Value{}});
    }
  }
  summary.notes.push_back("Verdict: " + d.verdict);
  if (d.has_interval) {
    summary.notes.push_back(fmt::format(
        "Change of the median step: {:+.1f}%, 95% confidence interval [{:+.1f}%, {:+.1f}%] "
        "(bootstrap, 2000 resamples); Mann-Whitney U p = {:.3g}",
        d.change_pct, d.ci_low_pct, d.ci_high_pct, d.p_value));
  }
  summary.notes.push_back(
      "Steps compared are the complete ones: warm-up, partial and empty steps are left out.");
  ResultTable ops;
  ops.section = "operators";
  ops.title = "Operators by change in total time";
  ops.columns = {
      {"operator", "Operator"},
      {"category", "Category"},
      {"change", "Change"},
      {.key = "before_count", .header = "Calls before", .unit = Unit::kCount},
      {.key = "after_count", .header = "Calls after", .unit = Unit::kCount},
      {.key = "before_ns",
       .header = "Before us",
       .precision = 3,
       .unit = Unit::kTime,
       .scale = 1e3},
      {.key = "after_ns", .header = "After us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
      {.key = "delta_ns", .header = "Delta us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
      {.key = "delta_pct", .header = "Delta %", .precision = 1, .unit = Unit::kPercent}};
  const size_t shown = top == 0 ? d.operators.size()
                                : std::min<size_t>(d.operators.size(), static_cast<size_t>(top));
  for (size_t i = 0; i < shown; ++i) {
    const auto& o = d.operators[i];
    const bool both = o.change != "added" && o.change != "removed";
    ops.AddRow({o.name, std::string(analyze::Name(o.cls)), o.change, o.before_count, o.after_count,
                o.before_ns / 1e3, o.after_ns / 1e3, (o.after_ns - o.before_ns) / 1e3,
                both ? Value{o.change_pct} : Value{}});
  }
  if (shown < d.operators.size())
    ops.notes.push_back(fmt::format("{} more operators", d.operators.size() - shown));
  ops.notes.push_back("Totals over each whole trace, warm-up included.");
  ResultTable verdict;
  verdict.section = "verdict";
  verdict.title = "Verdict";
  verdict.columns = {
      {"basis", "Basis"},
      {.key = "change_pct", .header = "Change %", .precision = 1, .unit = Unit::kPercent},
      {.key = "ci_low_pct", .header = "CI low %", .precision = 1, .unit = Unit::kPercent},
      {.key = "ci_high_pct", .header = "CI high %", .precision = 1, .unit = Unit::kPercent},
      {"p_value", "p", 4},
      {"verdict", "Verdict"},
      {"before_device", "Device before", 0, false},
      {"after_device", "Device after", 0, false},
      {"devices_differ", "Devices differ", 0, false}};
  const auto device = [](const std::string& name) { return name.empty() ? Value{} : Value{name}; };
  verdict.AddRow({d.basis, d.change_pct, d.has_interval ? Value{d.ci_low_pct} : Value{},
                  d.has_interval ? Value{d.ci_high_pct} : Value{},
                  d.has_interval ? Value{d.p_value} : Value{}, d.verdict, device(d.before_device),
                  device(d.after_device), std::string(d.devices_differ ? "yes" : "no")});
  if (d.devices_differ) {
    verdict.notes.push_back(d.devices_note);
    summary.notes.insert(summary.notes.begin(), d.devices_note);
  }
  ResultTable classes;
  classes.section = "time_by_class";
  classes.title =
      fmt::format("{} time by class{}", d.on_cpu ? "CPU (no device work)" : "Device",
                  d.devices_differ ? fmt::format(" ({} -> {})", d.before_device, d.after_device)
                                   : std::string());
  classes.columns = {
      {"class", "Class"},
      {.key = "before_ns",
       .header = "Before us",
       .precision = 3,
       .unit = Unit::kTime,
       .scale = 1e3},
      {.key = "after_ns", .header = "After us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
      {.key = "delta_ns", .header = "Delta us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
      {.key = "delta_pct", .header = "Delta %", .precision = 1, .unit = Unit::kPercent}};
  for (const auto& c : d.by_class) {
    classes.AddRow(
        {c.cls, c.before_ns / 1e3, c.after_ns / 1e3, (c.after_ns - c.before_ns) / 1e3,
         c.before_ns > 0 ? Value{100.0 * (c.after_ns - c.before_ns) / c.before_ns} : Value{}});
  }
  classes.notes.push_back(
      d.on_cpu
          ? "Compute: framework operators (a trace's own scopes where it records no operator), "
            "nested calls counted once; communication: collectives on the CPU (gloo); idle: the "
            "compute window (first to last operator) less the time some operator runs. Whole "
            "traces, warm-up included."
          : "Compute: kernels; communication: collective and point-to-point kernels (NCCL, RCCL, "
            "HCCL), and where the trace has them, DMA tasks and device waits; memory: copies and "
            "sets (and DMA without collectives); idle: the compute window (first to last compute "
            "event) less the time some compute event runs. Whole traces, warm-up included.");
  std::vector<ResultTable> tables = {verdict, summary, classes};
  const auto framework = [&](const std::vector<analyze::FrameworkOpDelta>& v, const char* section,
                             const char* title, bool shapes) {
    if (v.empty()) return;
    ResultTable table;
    table.section = section;
    table.title = title;
    table.columns = {{"operator", "Operator"}};
    if (shapes) table.columns.push_back({"input_shapes", "Input shapes"});
    for (const Column& c : std::initializer_list<Column>{
             {"change", "Change"},
             {"before_calls", "Calls before"},
             {"after_calls", "Calls after"},
             {.key = "before_device_ns",
             .header = "Device before us",
             .precision = 3,
             .unit = Unit::kTime,
             .scale = 1e3},
             {.key = "after_device_ns",
             .header = "Device after us",
             .precision = 3,
             .unit = Unit::kTime,
             .scale = 1e3},
             {.key = "delta_device_ns",
             .header = "Delta us",
             .precision = 3,
             .unit = Unit::kTime,
             .scale = 1e3},
             {.key = "delta_pct", .header = "Delta %", .precision = 1, .unit = Unit::kPercent},
             {.key = "before_device_total_ns",
             .header = "Device total before us",
             .precision = 3,
             .terminal = false,
             .unit = Unit::kTime,
             .scale = 1e3},
             {.key = "after_device_total_ns",
             .header = "Device total after us",
             .precision = 3,
             .terminal = false,
             .unit = Unit::kTime,
             .scale = 1e3},
             {.key = "before_host_ns",
             .header = "Host self before us",
             .precision = 3,
             .terminal = false,
             .unit = Unit::kTime,
             .scale = 1e3},
             {.key = "after_host_ns",
             .header = "Host self after us",
             .precision = 3,
             .terminal = false,
             .unit = Unit::kTime,
             .scale = 1e3},
             {"before_kernels", "Kernels before", 0, false},
             {"after_kernels", "Kernels after", 0, false}}) {
      table.columns.push_back(c);
    }
    const size_t shown = top == 0 ? v.size() : std::min<size_t>(v.size(), static_cast<size_t>(top));
    for (size_t i = 0; i < shown; ++i) {
      const auto& o = v[i];
      const bool both = o.change != "added" && o.change != "removed";
      std::vector<Value> row = {o.name};
      if (shapes) row.emplace_back(o.shapes);
      for (Value x : {Value{o.change}, Value{o.before_calls}, Value{o.after_calls},
                      Value{o.before_device_ns / 1e3}, Value{o.after_device_ns / 1e3},
                      Value{(o.after_device_ns - o.before_device_ns) / 1e3},
                      both && o.before_device_ns > 0 ? Value{o.change_pct} : Value{},
                      Value{o.before_device_total_ns / 1e3}, Value{o.after_device_total_ns / 1e3},
                      Value{o.before_host_ns / 1e3}, Value{o.after_host_ns / 1e3},
                      Value{o.before_kernels}, Value{o.after_kernels}}) {
        row.push_back(std::move(x));
      }
      table.AddRow(std::move(row));
    }
    if (shown < v.size()) table.notes.push_back(fmt::format("{} more", v.size() - shown));
    table.notes.push_back(
        "Framework operators matched by name" + std::string(shapes ? " and input shapes" : "") +
        "; device: the device time of the tasks each launched itself (self), the largest change "
        "first; 'added' and 'removed': operators one side has.");
    tables.push_back(std::move(table));
  };
  tables.push_back(ops);
  framework(d.framework_ops, "framework_operators", "Framework operators by change in device time",
            false);
  framework(d.framework_ops_by_shape, "framework_operators_by_shape",
            "Framework operators per input shapes by change in device time", true);
  return tables;
}

}  // namespace opscope::report

namespace opscope::report {

DiffOutcome DiffFiles(const std::string& before, const std::string& after, int top,
                      std::optional<double> fail_if_slower) {
  if (top < 0) throw Error(ErrorCode::kInvalidArgument, "--top must be >= 0 (0: all)");
  core::ForgetInputs();  // a new command: its own inputs only (core/output.h)
  // The inputs stay alive to the end: an archive's traces are read from its
  // unpacked folder, removed with them.
  const analyze::TraceInputs before_inputs = analyze::FindTraceInputs({before}),
                             after_inputs = analyze::FindTraceInputs({after});
  const std::vector<analyze::TraceInput>&bs = before_inputs.traces, &as = after_inputs.traces;
  // Folders of ranks: named as folders, or archives of one (their traces keep
  // the unpacked folder).
  std::error_code ec;
  const auto unpacked = [](const std::vector<analyze::TraceInput>& traces) {
    return std::any_of(traces.begin(), traces.end(),
                       [](const analyze::TraceInput& t) { return t.keep != nullptr; });
  };
  const bool folders = std::filesystem::is_directory(before, ec) ||
                       std::filesystem::is_directory(after, ec) || unpacked(bs) || unpacked(as);
  if (folders && bs.size() != as.size()) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("'{}' holds {} rank traces but '{}' holds {}: ranks cannot be paired",
                            before, bs.size(), after, as.size()));
  }
  DiffOutcome out;
  ResultTable ranks;
  ranks.section = "ranks";
  ranks.title = "Rank by rank";
  ranks.columns = {
      {"rank", "Rank"},
      {"before", "Before"},
      {"after", "After"},
      {"basis", "Basis"},
      {.key = "before_ns",
       .header = "Before ms",
       .precision = 3,
       .unit = Unit::kTime,
       .scale = 1e6},
      {.key = "after_ns", .header = "After ms", .precision = 3, .unit = Unit::kTime, .scale = 1e6},
      {.key = "change_pct", .header = "Change %", .precision = 1, .unit = Unit::kPercent},
      {.key = "ci_low_pct", .header = "CI low %", .precision = 1, .unit = Unit::kPercent},
      {.key = "ci_high_pct", .header = "CI high %", .precision = 1, .unit = Unit::kPercent},
      {"verdict", "Verdict"},
      {"gate", "Gate"}};
  for (size_t r = 0; r < bs.size(); ++r) {
    const auto import = [](const analyze::TraceInput& t) {
      try {
        return analyze::ImportTrace(t.path);
      } catch (const Error& e) {
        throw Error(e.code(), t.Reworded(e.what()));
      }
    };
    const analyze::TraceModel b = import(bs[r]), a = import(as[r]);
    analyze::TraceDiff d = analyze::DiffTraces(b, a);
    const bool regressed = fail_if_slower && analyze::Regressed(d, *fail_if_slower);
    if (regressed && !out.failed) {
      out.failure = fmt::format(
          "{}slower by {:.1f}% ({}{}), more than --fail-if-slower {:.1f}%",
          folders ? fmt::format("rank {}: ", r) : std::string(), d.change_pct, d.basis,
          d.has_interval ? fmt::format(", 95% CI [{:+.1f}%, {:+.1f}%]", d.ci_low_pct, d.ci_high_pct)
                         : std::string(", noise unknown"),
          *fail_if_slower);
    }
    out.failed |= regressed;
    if (!folders) {
      out.tables = DiffTables(bs[r].Shown(), as[r].Shown(), d, top);
    } else {
      ranks.AddRow({static_cast<int64_t>(r), bs[r].Shown(), as[r].Shown(), d.basis,
                    d.before_ns / 1e6, d.after_ns / 1e6, d.change_pct,
                    d.has_interval ? Value{d.ci_low_pct} : Value{},
                    d.has_interval ? Value{d.ci_high_pct} : Value{}, d.verdict,
                    std::string(!fail_if_slower ? "-" : (regressed ? "fail" : "pass"))});
    }
    out.diffs.push_back(std::move(d));
  }
  if (folders) out.tables.push_back(std::move(ranks));
  if (fail_if_slower && !out.tables.empty()) {
    out.tables.front().notes.push_back(
        fmt::format("Gate --fail-if-slower {:.1f}%: fails when the median step is slower by "
                    "more than this and the 95% confidence interval of the change lies above "
                    "zero (without a noise estimate, on the change alone): {}",
                    *fail_if_slower, out.failed ? "FAIL" : "pass"));
  }
  return out;
}

}  // namespace opscope::report
