#include "report/analysis_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "analyze/passes/pass.h"

namespace opscope::report {

size_t Shown(size_t rows, const AnalysisTableOptions& options, ResultTable& table) {
  const size_t shown = options.top == 0 ? rows : std::min<size_t>(rows, options.top);
  if (shown < rows) table.notes.push_back(fmt::format("{} more (--top 0 lists all)", rows - shown));
  return shown;
}

namespace {

double Us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

// The sections after operator statistics: device busy and idle gaps, steps,
// transfers, layout conversions.
void AddAnalyses(const std::string& path, const analyze::Analysis& a,
                 std::vector<ResultTable>& tables) {
  const analyze::DeviceBusy& busy = a.busy;
  {
    ResultTable compute;
    compute.section = "compute";
    compute.title = "Where the operators ran";
    compute.columns = {
        {"trace", "Trace", 0, false},
        {"compute_on", "Compute on"},
        {"device", "Device"},
        {.key = "busy_pct", .header = "Busy %", .precision = 1, .unit = Unit::kPercent},
        {.key = "busy_ns", .header = "Busy ms", .precision = 3, .unit = Unit::kTime, .scale = 1e6},
        {.key = "window_ns",
         .header = "Window ms",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e6},
        {.key = "gap_ns",
         .header = "In gaps >= 50 us, ms",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e6}};
    compute.AddRow({path, busy.compute_on, a.device.empty() ? Value{} : Value{a.device},
                    busy.has_device ? Value{busy.busy_pct} : Value{}, busy.busy_ns / 1e6,
                    (busy.window_end_ns - busy.window_begin_ns) / 1e6, busy.gap_ns / 1e6});
    compute.notes.push_back(
        "The compute device is the trace's device when it records device work, otherwise the "
        "CPU threads that run operators; busy % is the share of the window (first to last "
        "compute event) in which some compute event runs.");
    tables.push_back(std::move(compute));
  }
  ResultTable gaps;
  gaps.section = "idle_gaps";
  const bool cpu = busy.compute_on == "cpu";
  gaps.title =
      !busy.has_device
          ? std::string("No device work and no operators: busy share and idle gaps do not apply")
      : cpu && busy.scopes_are_work
          ? fmt::format(
                "CPU (no operators or device work in this trace: its annotation scopes are the "
                "work): scopes run {:.1f}% of {:.3f} ms (first to last scope); longest gaps "
                "between scopes:",
                busy.busy_pct, Us(busy.window_end_ns - busy.window_begin_ns) / 1e3)
      : cpu ? fmt::format(
                  "CPU (no device work in this trace): operators run {:.1f}% of {:.3f} ms "
                  "(first to last operator); longest gaps between operators:",
                  busy.busy_pct, Us(busy.window_end_ns - busy.window_begin_ns) / 1e3)
            : fmt::format(
                  "Device busy {:.1f}% of {:.3f} ms (first to last device event); longest "
                  "idle gaps:",
                  busy.busy_pct, Us(busy.window_end_ns - busy.window_begin_ns) / 1e3);
  gaps.columns = {
      {"trace", "Trace", 0, false},
      {"compute_on", "Compute on", 0, false},
      {.key = "busy_pct",
       .header = "Busy %",
       .precision = 1,
       .terminal = false,
       .unit = Unit::kPercent},
      {.key = "start_ns", .header = "Start us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
      {.key = "duration_ns",
       .header = "Idle us",
       .precision = 3,
       .unit = Unit::kTime,
       .scale = 1e3},
      {"cause", "Likely cause"},
      {.key = "host_busy_pct", .header = "Host busy %", .precision = 1, .unit = Unit::kPercent},
      {"evidence", "Evidence"}};
  for (const auto& g : busy.gaps) {
    gaps.AddRow({path, busy.compute_on, busy.busy_pct, Us(g.begin_ns - busy.window_begin_ns),
                 Us(g.duration_ns), g.cause, g.host_busy_pct, g.evidence});
  }
  for (const auto& [category, n] : busy.unclassified) {
    gaps.notes.push_back(
        fmt::format("warning: {} events of category '{}' are not understood and are in no figure",
                    n, category));
  }
  if (busy.has_device && !busy.timeline_pct.empty()) {
    static const char* kLevels[] = {" ", ".", ":", "-", "=", "+", "*", "#"};
    std::string bars;
    for (const double pct : busy.timeline_pct)
      bars += kLevels[std::min(7, static_cast<int>(pct / 12.5))];
    gaps.notes.push_back("Busy % over the window in 50 slices, ' ' 0% to '#' 100%: |" + bars + "|");
  }
  tables.push_back(std::move(gaps));

  const auto& steps = a.steps;
  {  // always: empty when nothing was found, its columns kept
    const analyze::StepSummary& sum = a.step_summary;
    ResultTable table;
    table.hidden_when_empty = steps.empty();
    table.section = "steps";
    table.title = fmt::format("Steps: {} time inside each ProfilerStep span; {} of {} complete{}",
                              busy.scopes_are_work ? "CPU scope"
                              : cpu                ? "CPU operator"
                                                   : "device",
                              sum.complete, sum.steps,
                              sum.complete > 0 ? fmt::format(", mean {:.3f} ms, median {:.3f} ms",
                                                             sum.mean_ns / 1e6, sum.median_ns / 1e6)
                                               : std::string());
    table.columns = {
        {"trace", "Trace", 0, false},
        {"step", "Step"},
        {"status", "Status"},
        {.key = "duration_ns",
         .header = "Step us",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e3},
        {.key = "compute_ns",
         .header = "Compute us",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e3},
        {.key = "communication_ns",
         .header = "Comm us",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e3},
        {.key = "memory_ns",
         .header = "Memcpy/set us",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e3},
        {.key = "communication_exposed_ns",
         .header = "Comm not overlapped us",
         .precision = 3,
         .terminal = false,
         .unit = Unit::kTime,
         .scale = 1e3},
        {.key = "memory_exposed_ns",
         .header = "Memcpy/set not overlapped us",
         .precision = 3,
         .terminal = false,
         .unit = Unit::kTime,
         .scale = 1e3},
        {.key = "idle_ns", .header = "Idle us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
        {.key = "idle_pct", .header = "Idle %", .precision = 1, .unit = Unit::kPercent},
        {"status_reason", "Why not averaged"}};
    for (const auto& s : steps) {
      table.AddRow({path, s.name, s.status, Us(s.duration_ns), Us(s.compute_ns),
                    Us(s.communication_ns), Us(s.memory_ns), Us(s.communication_exposed_ns),
                    Us(s.memory_exposed_ns), Us(s.idle_ns),
                    s.duration_ns > 0 ? 100.0 * s.idle_ns / s.duration_ns : 0.0, s.status_reason});
    }
    table.notes.push_back(fmt::format(
        "Means use complete steps only: not empty, not the last step cut off by the end of the "
        "trace (under {:.0f}% of the others' median), not a leading warm-up step (over {:.1f}x the "
        "median of the later ones).",
        100 * analyze::kPartialRatio, analyze::kWarmupRatio));
    tables.push_back(std::move(table));
  }

  const auto& transfers = a.transfers;
  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = transfers.empty();
    table.section = "transfers";
    table.title = "Memory copies on the device";
    table.columns = {
        {"trace", "Trace", 0, false},
        {"direction", "Direction"},
        {.key = "count", .header = "Count", .unit = Unit::kCount},
        {.key = "bytes", .header = "Bytes", .unit = Unit::kBytes},
        {.key = "total_ns",
         .header = "Total us",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e3},
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
    for (const auto& t : transfers) {
      unrecorded |= (t.direction == "HtoD" || t.direction == "DtoH") && t.host_memory.empty();
      table.AddRow({path, t.direction, t.count, t.bytes >= 0 ? Value{t.bytes} : Value{},
                    Us(t.total_ns), t.share_of_device_pct, t.bytes > 0 ? Value{t.gbps} : Value{},
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

  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = a.kernel_types.empty();
    table.section = "kernel_types";
    table.title = "Device tasks by operator type";
    table.columns = {
        {"trace", "Trace", 0, false},
        {"type", "Type"},
        {.key = "count", .header = "Count", .unit = Unit::kCount},
        {"names", "Kernel names"},
        {.key = "total_ns",
         .header = "Total us",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e3},
        {.key = "share_pct", .header = "% device", .precision = 1, .unit = Unit::kPercent}};
    for (const auto& k : a.kernel_types) {
      table.AddRow({path, k.type, k.count, k.names, Us(k.total_ns), k.share_pct});
      if (table.rows.size() == 20) break;
    }
    tables.push_back(std::move(table));
  }
  const auto& layout = a.layout;
  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = layout.host_ns <= 0 && layout.device_ns <= 0;
    table.section = "layout_conversions";
    table.title =
        fmt::format("Layout conversions: {:.1f}% of device time, {:.1f}% of host operator time",
                    layout.device_pct, layout.host_pct);
    table.columns = {{"trace", "Trace", 0, false},
                     {"name", "Kernel or operator"},
                     {"family", "Conversion"},
                     {"how", "Found as"},
                     {.key = "count", .header = "Count", .unit = Unit::kCount},
                     {.key = "total_ns",
                      .header = "Total us",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e3},
                     {"formats", "Formats (in->out)"},
                     {"caused_by", "Launched from (operator)"}};
    for (const auto& item : layout.top) {
      table.AddRow({path, item.name, item.family, item.how, item.count, Us(item.total_ns),
                    item.formats, item.caused_by});
    }
    tables.push_back(std::move(table));
  }
  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = layout.copies.empty();
    table.section = "copies";
    table.title = "Copying operators by what they launched";
    table.columns = {
        {"trace", "Trace", 0, false},
        {"operator", "Operator"},
        {"what", "What it did"},
        {"calls", "Calls"},
        {.key = "host_ns", .header = "Host us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
        {.key = "device_ns",
         .header = "Device us",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e3}};
    for (const auto& c : layout.copies) {
      table.AddRow({path, c.op, c.what, c.calls, Us(c.host_ns), Us(c.device_ns)});
      if (table.rows.size() == 10) break;
    }
    table.notes.push_back(
        "The outermost copy_/clone/to/contiguous of each nest; a memcpy of a direction is a "
        "transfer, not a layout conversion.");
    tables.push_back(std::move(table));
  }
}

// Long tail, CPU fallback, launch overhead, fusion candidates.
void AddMoreAnalyses(const std::string& path, const analyze::Analysis& a,
                     std::vector<ResultTable>& tables, const AnalysisTableOptions& options) {
  const auto& tail = a.long_tail;
  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = tail.empty();
    table.section = "long_tail";
    table.title = "Long-tail operators: p99 at least 3x the median (10+ calls)";
    table.columns = {
        {"trace", "Trace", 0, false},
        {"operator", "Operator"},
        {"category", "Category"},
        {.key = "count", .header = "Count", .unit = Unit::kCount},
        {.key = "p50_ns", .header = "p50 us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
        {.key = "p99_ns", .header = "p99 us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
        {.key = "max_ns", .header = "Max us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
        {"p99_over_p50", "p99/p50", 1}};
    for (const auto& t : tail) {
      table.AddRow({path, t.name, std::string(analyze::Name(t.cls)), t.count, Us(t.p50_ns),
                    Us(t.p99_ns), Us(t.max_ns), t.ratio});
    }
    tables.push_back(std::move(table));
  }
  const auto& fallback = a.fallback;
  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = fallback.ai_cpu_count <= 0 && fallback.host_only_ops.empty();
    table.section = "cpu_fallback";
    table.title = fmt::format(
        "CPU fallback: {} AI CPU tasks, {:.1f}% of device time; long host operators that "
        "launched no device work",
        fallback.ai_cpu_count, fallback.ai_cpu_share_pct);
    table.columns = {{"trace", "Trace", 0, false},
                     {"kind", "Kind"},
                     {"operator", "Operator"},
                     {.key = "total_ns",
                      .header = "Total us",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e3},
                     {"why", "Type; data types (in->out)"}};
    for (size_t i = 0; i < fallback.ai_cpu_top.size(); ++i) {
      const auto& [name, ns] = fallback.ai_cpu_top[i];
      table.AddRow({path, std::string("AI_CPU task"), name, Us(ns),
                    i < fallback.ai_cpu_why.size() ? fallback.ai_cpu_why[i] : std::string()});
    }
    for (const auto& [name, ns] : fallback.host_only_ops) {
      table.AddRow({path, std::string("host only"), name, Us(ns), std::string()});
    }
    tables.push_back(std::move(table));
  }
  const auto& launch = a.launch;
  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = launch.kernels <= 0;
    table.section = "launch";
    table.title = launch.launch_bound ? "Launch-bound: many short kernels on a mostly idle device"
                                      : "Kernel launches: not launch-bound";
    table.columns = {{"trace", "Trace", 0, false},
                     {"kernels", "Kernels"},
                     {.key = "median_kernel_ns",
                      .header = "Median kernel us",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e3},
                     {.key = "device_busy_pct",
                      .header = "Device busy %",
                      .precision = 1,
                      .unit = Unit::kPercent},
                     {.key = "launch_delay_p50_ns",
                      .header = "Launch delay p50 us",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e3},
                     {.key = "launch_delay_p90_ns",
                      .header = "Launch delay p90 us",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e3},
                     {.key = "host_busy_in_idle_pct",
                      .header = "Host busy in idle %",
                      .precision = 1,
                      .unit = Unit::kPercent},
                     {.key = "launch_in_idle_pct",
                      .header = "Launch calls in idle %",
                      .precision = 1,
                      .unit = Unit::kPercent},
                     {"launch_bound", "Launch-bound"},
                     {"reason", "Why"}};
    const auto pct = [](double v) { return v >= 0 ? Value{v} : Value{}; };
    if (launch.kernels > 0) {  // no kernels: no launches to judge, no row
      table.AddRow(
          {path, launch.kernels, Us(launch.median_kernel_ns), launch.busy_pct,
           launch.launch_delay_p50_ns >= 0 ? Value{Us(launch.launch_delay_p50_ns)} : Value{},
           launch.launch_delay_p90_ns >= 0 ? Value{Us(launch.launch_delay_p90_ns)} : Value{},
           pct(launch.host_busy_in_idle_pct), pct(launch.launch_in_idle_pct),
           std::string(launch.launch_bound ? "yes" : "no"), launch.reason});
    }
    table.notes.push_back(
        "Launch delay: from the launch call's start to its kernel's start (by correlation id).");
    tables.push_back(std::move(table));
  }
  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = a.roofline.empty();
    table.section = "roofline";
    table.title = "Roofline: " + (a.ceilings ? a.ceilings->source : a.ceilings_note);
    table.columns = {
        {"trace", "Trace", 0, false},
        {"operator", "Operator"},
        {"calls", "Calls"},
        {"dtype", "Dtype"},
        {.key = "flops", .header = "GFLOP", .precision = 3, .unit = Unit::kFlop, .scale = 1e9},
        {.key = "bytes", .header = "GB", .precision = 3, .unit = Unit::kBytes, .scale = 1e9},
        {"intensity", "FLOP/B", 1},
        {.key = "achieved_flop_per_s",
         .header = "TFLOP/s",
         .precision = 3,
         .unit = Unit::kFlopPerSecond,
         .scale = 1e12},
        {"bound", "Bound"},
        {.key = "pct_of_attainable",
         .header = "% of roofline",
         .precision = 1,
         .unit = Unit::kPercent},
        {"time_source", "Time from"},
        {"note", "Note"}};
    for (const auto& r : a.roofline) {
      table.AddRow({path, r.name, r.calls, r.dtype.empty() ? Value{} : Value{r.dtype},
                    r.flops / 1e9, r.bytes / 1e9, r.bytes > 0 ? Value{r.intensity} : Value{},
                    r.achieved / 1e12, r.bound.empty() ? Value{} : Value{r.bound},
                    r.pct_of_attainable >= 0 ? Value{r.pct_of_attainable} : Value{}, r.time_source,
                    r.note});
      if (options.top != 0 && table.rows.size() == 15) break;
    }
    if (table.rows.size() < a.roofline.size()) {
      table.notes.push_back(
          fmt::format("{} more (--top 0 lists all)", a.roofline.size() - table.rows.size()));
    }
    table.notes.push_back(
        "FLOPs from the trace's arguments or from recorded shapes of matrix multiplies; "
        "% of roofline = achieved / min(peak, intensity x bandwidth).");
    tables.push_back(std::move(table));
  }
  const auto& fusion = a.fusion;
  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = fusion.empty();
    table.section = "fusion";
    table.title =
        "Fusion candidates: an elementwise operator that reads a matmul/conv output (by shape)";
    table.columns = {{"trace", "Trace", 0, false},
                     {"producer", "Producer"},
                     {"consumer", "Consumer"},
                     {"shape", "Tensor"},
                     {.key = "count", .header = "Count", .unit = Unit::kCount},
                     {.key = "consumer_ns",
                      .header = "Consumer us",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e3}};
    for (const auto& f : fusion)
      table.AddRow({path, f.producer, f.consumer, f.shape, f.count, Us(f.consumer_ns)});
    tables.push_back(std::move(table));
  }
}

// Several ranks of one job: step time per rank, the slow one, overlap.
void AddRanks(const analyze::RankComparison& c, std::vector<ResultTable>& tables) {
  ResultTable table;
  table.section = "ranks";
  table.title =
      c.slow_rank < 0 ? std::string("Ranks")
      : c.slow_pct < 1
          ? std::string("Ranks: mean step times agree within 1%")
          : fmt::format("Ranks: rank {} is the slowest, {:.1f}% above the median rank's step time",
                        c.slow_rank, c.slow_pct);
  table.columns = {{"rank", "Rank"},
                   {"trace", "Trace"},
                   {"steps", "Complete steps"},
                   {.key = "mean_step_ns",
                    .header = "Mean complete step us",
                    .precision = 3,
                    .unit = Unit::kTime,
                    .scale = 1e3},
                   {.key = "compute_ns",
                    .header = "Compute us",
                    .precision = 3,
                    .unit = Unit::kTime,
                    .scale = 1e3},
                   {.key = "communication_ns",
                    .header = "Comm us",
                    .precision = 3,
                    .unit = Unit::kTime,
                    .scale = 1e3},
                   {.key = "overlap_pct",
                    .header = "Comm overlapped %",
                    .precision = 1,
                    .unit = Unit::kPercent}};
  for (const auto& r : c.ranks) {
    table.AddRow(
        {int64_t{r.rank}, r.path, r.steps, r.mean_step_ns / 1e3, r.compute_ns / 1e3,
         r.communication_ns / 1e3,
         r.communication_ns > 0 ? Value{100.0 * r.overlap_ns / r.communication_ns} : Value{}});
  }
  table.notes.push_back(
      "Comm overlapped %: communication kernel time during which compute kernels also ran.");
  if (c.slow_pct >= 10) {
    table.notes.push_back(
        fmt::format("warning: rank {} is {:.1f}% slower than the median: compare its data loading, "
                    "host load and "
                    "inputs; the others wait for it at every collective.",
                    c.slow_rank, c.slow_pct));
  }
  tables.push_back(std::move(table));
}

// How much of the device time the operators' device columns hold.
std::string DeviceNote(const analyze::OpDeviceTime& d) {
  return fmt::format(
      "Device self: the device tasks (kernels, copies, sets) the operator launched itself "
      "(External id, or its launch call's correlation id); device total: with those launched by "
      "the operators nested in it. {} of {} tasks, {:.3f} of {:.3f} ms of device time, have a "
      "launching operator{}.",
      d.linked_tasks, d.tasks, d.linked_ns / 1e6, d.device_ns / 1e6,
      d.linked_tasks < d.tasks ? "; the rest (no launch record, or one outside every operator) "
                                 "are in the kernels table only"
                               : "");
}

// Operators per input shapes, and modules, with their device time.
void AddOperatorDeviceTables(const analyze::AnalyzedTrace& t, const AnalysisTableOptions& options,
                             std::vector<ResultTable>& tables) {
  const analyze::OpDeviceTime& d = t.analysis.op_device;
  const auto device = [&](int64_t ns) { return d.has_device ? Value{Us(ns)} : Value{}; };
  const auto count = [&](int64_t n) { return d.has_device ? Value{n} : Value{}; };
  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = d.by_shape.empty();
    table.section = "operators_by_shape";
    table.title = d.has_device ? "Framework operators per input shapes, by device self time"
                               : "Framework operators per input shapes, by host self time";
    table.columns = {{"trace", "Trace", 0, false},
                     {"operator", "Name"},
                     {"input_shapes", "Input shapes"},
                     {"calls", "Calls"},
                     {.key = "host_self_ns",
                      .header = "Host self us",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e3},
                     {.key = "host_total_ns",
                      .header = "Host total us",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e3},
                     {.key = "device_self_ns",
                      .header = "Device self us",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e3},
                     {.key = "device_total_ns",
                      .header = "Device total us",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e3},
                     {"kernels", "Kernels"},
                     {"kernels_total", "Kernels in total", 0, false},
                     {"top_kernels", "Kernels behind it", 0, false}};
    const size_t shown = Shown(d.by_shape.size(), options, table);
    for (size_t i = 0; i < shown; ++i) {
      const analyze::OpDeviceRow& r = d.by_shape[i];
      table.AddRow({t.path, r.name, r.shapes, r.calls, Us(r.host_self_ns), Us(r.host_total_ns),
                    device(r.device_self_ns), device(r.device_total_ns), count(r.kernels),
                    count(r.kernels_total), d.has_device ? Value{r.top_kernels} : Value{}});
    }
    table.notes.push_back(
        "One row per operator and input shapes as the trace records them (Kineto's Input Dims, "
        "opscope's shapes); operators whose calls record no shapes are in the operators table "
        "only.");
    if (d.has_device) table.notes.push_back(DeviceNote(d));
    tables.push_back(std::move(table));
  }
  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = d.modules.empty();
    table.section = "modules";
    table.title = d.has_device ? "Modules by device time" : "Modules by host time";
    table.columns = {{"trace", "Trace", 0, false},
                     {"module", "Module"},
                     {"calls", "Calls"},
                     {.key = "host_total_ns",
                      .header = "Host total us",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e3},
                     {.key = "device_self_ns",
                      .header = "Device self us",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e3},
                     {.key = "device_total_ns",
                      .header = "Device total us",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e3},
                     {"kernels", "Kernels"},
                     {"kernels_total", "Kernels in total", 0, false}};
    const size_t shown = Shown(d.modules.size(), options, table);
    for (size_t i = 0; i < shown; ++i) {
      const analyze::OpDeviceRow& r = d.modules[i];
      table.AddRow({t.path, r.name, r.calls, Us(r.host_total_ns), device(r.device_self_ns),
                    device(r.device_total_ns), count(r.kernels), count(r.kernels_total)});
    }
    table.notes.push_back(
        "A module's path is the chain of nn.Module spans around it (Kineto with_modules or "
        "with_stack), or opscope's module argument; device total: the tasks launched inside it; "
        "device self: those not inside a nested module.");
    tables.push_back(std::move(table));
  }
}

// The advisor's findings, then the operators of one trace.
void AddFindingsAndOperators(const analyze::AnalyzedTrace& t, const AnalysisTableOptions& options,
                             std::vector<ResultTable>& tables) {
  const std::string& path = t.path;
  const auto& findings = t.findings;
  const analyze::Analysis& analysis = t.analysis;
  ResultTable advice;
  advice.section = "findings";
  advice.title = fmt::format("{} ({}): {} complete events on {} tracks; {} findings", path,
                             t.format, t.events, t.tracks, findings.size());
  advice.columns = {{"trace", "Trace", 0, false},
                    {"number", "#"},
                    {"severity", "Severity"},
                    {"id", "Finding", 0, false},
                    {"title", "What"},
                    {"evidence", "Evidence", 0, false},
                    {"action", "Recommended action", 0, false}};
  for (size_t i = 0; i < findings.size(); ++i) {
    const auto& f = findings[i];
    advice.AddRow({path, static_cast<int64_t>(i + 1), std::string(analyze::Name(f.severity)), f.id,
                   f.title, f.evidence, f.action});
    // On a terminal the long columns read better as lines under the table.
    advice.notes.push_back(fmt::format("{}. evidence: {}", i + 1, f.evidence));
    advice.notes.push_back(fmt::format("   action:   {}", f.action));
  }
  tables.push_back(std::move(advice));
  // One table per kind of row, each with one denominator for its share.
  struct Kind {
    const char* section;
    const char* title;
    const char* share;  // column title of the share, or nullptr
    bool (*keep)(analyze::EventClass);
  };
  static const Kind kKinds[] = {
      {"operators", "Framework operators by self time", "% self",
       [](analyze::EventClass c) { return c == analyze::EventClass::kHostOp; }},
      {"kernels", "Device kernels, collectives, copies, sets, DMA and waits by time", "% device",
       [](analyze::EventClass c) { return analyze::IsDevice(c); }},
      {"host_calls", "Runtime calls, waits, data loading and Python functions by self time",
       nullptr,
       [](analyze::EventClass c) {
         return c == analyze::EventClass::kRuntime || c == analyze::EventClass::kSync ||
                c == analyze::EventClass::kPython || c == analyze::EventClass::kDataLoading;
       }},
      {"annotations", "Steps and annotations (spans, not operators)", nullptr,
       [](analyze::EventClass c) {
         return c == analyze::EventClass::kStep || c == analyze::EventClass::kAnnotation ||
                c == analyze::EventClass::kDeviceAnnotation;
       }},
  };
  for (const Kind& kind : kKinds) {
    std::vector<const analyze::OpStats*> rows;
    for (const auto& s : analysis.operators) {
      if (kind.keep(s.cls)) rows.push_back(&s);
    }
    const bool device = std::string_view(kind.section) == "kernels";
    const bool operators = std::string_view(kind.section) == "operators";
    if (device) {  // device work does not nest: rank by total time
      std::stable_sort(rows.begin(), rows.end(),
                       [](const auto* a, const auto* b) { return a->total_ns > b->total_ns; });
    }
    // Framework operators carry the device time they caused (op_device), and
    // rank by it where the trace has device work.
    const analyze::OpDeviceTime& op_device = analysis.op_device;
    std::map<std::string_view, const analyze::OpDeviceRow*> device_of;
    if (operators) {
      for (const auto& r : op_device.ops) device_of.emplace(r.name, &r);
      if (op_device.has_device) {
        const auto device_self = [&](const analyze::OpStats* s) {
          const auto it = device_of.find(s->name);
          return it == device_of.end() ? int64_t{0} : it->second->device_self_ns;
        };
        std::stable_sort(rows.begin(), rows.end(), [&](const auto* a, const auto* b) {
          return device_self(a) > device_self(b);
        });
      }
    }
    ResultTable table;
    table.section = kind.section;
    table.hidden_when_empty = rows.empty();
    table.title = kind.title;
    table.columns = {
        {"trace", "Trace", 0, false},
        {"format", "Format", 0, false},
        {"events", "Events", 0, false},
        {"operator", "Name"},
        {"category", "Category"},
        {.key = "count", .header = "Count", .unit = Unit::kCount},
        {.key = "self_ns", .header = "Self us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
        {.key = "total_ns",
         .header = "Total us",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e3},
        {.key = "mean_ns", .header = "Mean us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
        {.key = "p50_ns", .header = "p50 us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
        {.key = "p99_ns", .header = "p99 us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
        {.key = "max_ns", .header = "Max us", .precision = 3, .unit = Unit::kTime, .scale = 1e3}};
    if (kind.share != nullptr) table.columns.push_back({"share_pct", kind.share, 1});
    if (operators) {
      table.columns.push_back({.key = "device_self_ns",
                               .header = "Device self us",
                               .precision = 3,
                               .unit = Unit::kTime,
                               .scale = 1e3});
      table.columns.push_back({.key = "device_total_ns",
                               .header = "Device total us",
                               .precision = 3,
                               .unit = Unit::kTime,
                               .scale = 1e3});
      table.columns.push_back({"kernels", "Kernels"});
      table.columns.push_back({"kernels_total", "Kernels in total", 0, false});
      table.columns.push_back({"top_kernels", "Kernels behind it", 0, false});
    }
    table.columns.push_back({.key = "flops",
                             .header = "FLOPs",
                             .precision = 0,
                             .terminal = false,
                             .unit = Unit::kFlop});
    table.columns.push_back({.key = "bytes",
                             .header = "Bytes",
                             .precision = 0,
                             .terminal = false,
                             .unit = Unit::kBytes});
    const size_t shown =
        options.top == 0 ? rows.size() : std::min<size_t>(rows.size(), options.top);
    for (size_t i = 0; i < shown; ++i) {
      const auto& s = *rows[i];
      std::vector<Value> row = {path,
                                t.format,
                                static_cast<int64_t>(t.events),
                                s.name,
                                std::string(analyze::Name(s.cls)),
                                s.count,
                                s.self_ns / 1e3,
                                s.total_ns / 1e3,
                                s.mean_ns / 1e3,
                                s.p50_ns / 1e3,
                                s.p99_ns / 1e3,
                                s.max_ns / 1e3};
      if (kind.share != nullptr) row.emplace_back(s.share_pct);
      if (operators) {
        const auto it = device_of.find(s.name);
        const analyze::OpDeviceRow* d = it == device_of.end() ? nullptr : it->second;
        if (!op_device.has_device) {
          row.insert(row.end(), 5, Value{});
        } else {
          row.push_back(Us(d ? d->device_self_ns : 0));
          row.push_back(Us(d ? d->device_total_ns : 0));
          row.push_back(d ? d->kernels : 0);
          row.push_back(d ? d->kernels_total : 0);
          row.push_back(d ? d->top_kernels : std::string());
        }
      }
      row.push_back(s.flops >= 0 ? Value{s.flops} : Value{});
      row.push_back(s.bytes >= 0 ? Value{s.bytes} : Value{});
      table.AddRow(std::move(row));
    }
    if (shown < rows.size()) {
      table.notes.push_back(fmt::format("{} more (--top 0 lists all)", rows.size() - shown));
    }
    if (operators) {
      table.notes.push_back(
          "Self: each call's time less the calls nested in it on the same thread; the shares of "
          "self time add up to 100%.");
      if (op_device.has_device) table.notes.push_back(DeviceNote(op_device));
    }
    tables.push_back(std::move(table));
  }
  AddOperatorDeviceTables(t, options, tables);
}

}  // namespace

std::vector<ResultTable> AnalysisTables(const analyze::AnalyzedSet& set,
                                        const AnalysisTableOptions& options) {
  std::vector<ResultTable> tables;
  for (const analyze::AnalyzedTrace& t : set.traces) {
    AddFindingsAndOperators(t, options, tables);
    AddAnalyses(t.path, t.analysis, tables);
    AddMoreAnalyses(t.path, t.analysis, tables, options);
    // The tables the passes bring with them (passes/pass.h).
    for (const analyze::Pass& pass : analyze::Passes()) {
      if (pass.tables != nullptr) pass.tables(t.analysis, {t.path, options.top}, tables);
    }
    AddReportedTables(t, options, tables);
  }
  if (set.ranks) AddRanks(*set.ranks, tables);
  AddReportedRankTables(set, options, tables);
  if (!set.unused.empty()) {
    ResultTable table;
    table.section = "unused_files";
    table.title = fmt::format("Files found and not read ({})", set.unused.size());
    table.columns = {{"file", "File"}, {"reason", "Why"}};
    for (const auto& u : set.unused) table.AddRow({u.path, u.reason});
    tables.push_back(std::move(table));
  }
  return tables;
}

}  // namespace opscope::report
