#include "report/analysis_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

namespace opscope::report {
namespace {

double Us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

// The first `top` rows (all with 0), and a note for the rest.
size_t Shown(size_t rows, const AnalysisTableOptions& options, ResultTable& table) {
  const size_t shown = options.top == 0 ? rows : std::min<size_t>(rows, options.top);
  if (shown < rows) table.notes.push_back(fmt::format("{} more (--top 0 lists all)", rows - shown));
  return shown;
}

// The sections after operator statistics: device busy and idle gaps, steps,
// transfers, layout conversions.
void AddAnalyses(const std::string& path, const analyze::Analysis& a,
                 std::vector<ResultTable>& tables) {
  const analyze::DeviceBusy& busy = a.busy;
  {
    ResultTable compute;
    compute.section = "compute";
    compute.title = "Where the operators ran";
    compute.columns = {{"trace", "Trace", 0, false},
                       {"compute_on", "Compute on"},
                       {"device", "Device"},
                       {"busy_pct", "Busy %", 1},
                       {"busy_ms", "Busy ms", 3},
                       {"window_ms", "Window ms", 3},
                       {"gap_ms", "In gaps >= 50 us, ms", 3}};
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
      : cpu ? fmt::format(
                  "CPU (no device work in this trace): operators run {:.1f}% of {:.3f} ms "
                  "(first to last operator); longest gaps between operators:",
                  busy.busy_pct, Us(busy.window_end_ns - busy.window_begin_ns) / 1e3)
            : fmt::format(
                  "Device busy {:.1f}% of {:.3f} ms (first to last device event); longest "
                  "idle gaps:",
                  busy.busy_pct, Us(busy.window_end_ns - busy.window_begin_ns) / 1e3);
  gaps.columns = {{"trace", "Trace", 0, false},        {"compute_on", "Compute on", 0, false},
                  {"busy_pct", "Busy %", 1, false},    {"start_us", "Start us", 3},
                  {"duration_us", "Idle us", 3},       {"cause", "Likely cause"},
                  {"host_busy_pct", "Host busy %", 1}, {"evidence", "Evidence"}};
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
  if (!steps.empty()) {
    const analyze::StepSummary& sum = a.step_summary;
    ResultTable table;
    table.section = "steps";
    table.title = fmt::format("Steps: {} time inside each ProfilerStep span; {} of {} complete{}",
                              cpu ? "CPU operator" : "device", sum.complete, sum.steps,
                              sum.complete > 0 ? fmt::format(", mean {:.3f} ms, median {:.3f} ms",
                                                             sum.mean_ns / 1e6, sum.median_ns / 1e6)
                                               : std::string());
    table.columns = {{"trace", "Trace", 0, false},
                     {"step", "Step"},
                     {"status", "Status"},
                     {"duration_us", "Step us", 3},
                     {"compute_us", "Compute us", 3},
                     {"communication_us", "Comm us", 3},
                     {"memory_us", "Memcpy/set us", 3},
                     {"idle_us", "Idle us", 3},
                     {"idle_pct", "Idle %", 1},
                     {"status_reason", "Why not averaged"}};
    for (const auto& s : steps) {
      table.AddRow({path, s.name, s.status, Us(s.duration_ns), Us(s.compute_ns),
                    Us(s.communication_ns), Us(s.memory_ns), Us(s.idle_ns),
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
  if (!transfers.empty()) {
    ResultTable table;
    table.section = "transfers";
    table.title = "Memory copies on the device";
    table.columns = {{"trace", "Trace", 0, false}, {"direction", "Direction"},
                     {"count", "Count"},           {"bytes", "Bytes"},
                     {"total_us", "Total us", 3},  {"share_pct", "% device", 1},
                     {"gbps", "GB/s", 2}};
    for (const auto& t : transfers) {
      table.AddRow({path, t.direction, t.count, t.bytes >= 0 ? Value{t.bytes} : Value{},
                    Us(t.total_ns), t.share_of_device_pct, t.bytes > 0 ? Value{t.gbps} : Value{}});
    }
    tables.push_back(std::move(table));
  }

  if (!a.kernel_types.empty()) {
    ResultTable table;
    table.section = "kernel_types";
    table.title = "Device tasks by operator type";
    table.columns = {{"trace", "Trace", 0, false}, {"type", "Type"},
                     {"count", "Count"},           {"names", "Kernel names"},
                     {"total_us", "Total us", 3},  {"share_pct", "% device", 1}};
    for (const auto& k : a.kernel_types) {
      table.AddRow({path, k.type, k.count, k.names, Us(k.total_ns), k.share_pct});
      if (table.rows.size() == 20) break;
    }
    tables.push_back(std::move(table));
  }
  const auto& layout = a.layout;
  if (layout.host_ns > 0 || layout.device_ns > 0) {
    ResultTable table;
    table.section = "layout_conversions";
    table.title =
        fmt::format("Layout conversions: {:.1f}% of device time, {:.1f}% of host operator time",
                    layout.device_pct, layout.host_pct);
    table.columns = {{"trace", "Trace", 0, false},
                     {"name", "Kernel or operator"},
                     {"family", "Conversion"},
                     {"how", "Found as"},
                     {"count", "Count"},
                     {"total_us", "Total us", 3},
                     {"formats", "Formats (in->out)"},
                     {"caused_by", "Launched from (operator)"}};
    for (const auto& item : layout.top) {
      table.AddRow({path, item.name, item.family, item.how, item.count, Us(item.total_ns),
                    item.formats, item.caused_by});
    }
    tables.push_back(std::move(table));
  }
  if (!layout.copies.empty()) {
    ResultTable table;
    table.section = "copies";
    table.title = "Copying operators by what they launched";
    table.columns = {{"trace", "Trace", 0, false}, {"operator", "Operator"},
                     {"what", "What it did"},      {"calls", "Calls"},
                     {"host_us", "Host us", 3},    {"device_us", "Device us", 3}};
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
  if (!tail.empty()) {
    ResultTable table;
    table.section = "long_tail";
    table.title = "Long-tail operators: p99 at least 3x the median (10+ calls)";
    table.columns = {{"trace", "Trace", 0, false}, {"operator", "Operator"},
                     {"category", "Category"},     {"count", "Count"},
                     {"p50_us", "p50 us", 3},      {"p99_us", "p99 us", 3},
                     {"max_us", "Max us", 3},      {"p99_over_p50", "p99/p50", 1}};
    for (const auto& t : tail) {
      table.AddRow({path, t.name, std::string(analyze::Name(t.cls)), t.count, Us(t.p50_ns),
                    Us(t.p99_ns), Us(t.max_ns), t.ratio});
    }
    tables.push_back(std::move(table));
  }
  const auto& fallback = a.fallback;
  if (fallback.ai_cpu_count > 0 || !fallback.host_only_ops.empty()) {
    ResultTable table;
    table.section = "cpu_fallback";
    table.title = fmt::format(
        "CPU fallback: {} AI CPU tasks, {:.1f}% of device time; long host operators that "
        "launched no device work",
        fallback.ai_cpu_count, fallback.ai_cpu_share_pct);
    table.columns = {{"trace", "Trace", 0, false},
                     {"kind", "Kind"},
                     {"operator", "Operator"},
                     {"total_us", "Total us", 3},
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
  if (launch.kernels > 0) {
    ResultTable table;
    table.section = "launch";
    table.title = launch.launch_bound ? "Launch-bound: many short kernels on a mostly idle device"
                                      : "Kernel launches: not launch-bound";
    table.columns = {{"trace", "Trace", 0, false},
                     {"kernels", "Kernels"},
                     {"median_kernel_us", "Median kernel us", 3},
                     {"device_busy_pct", "Device busy %", 1},
                     {"launch_delay_p50_us", "Launch delay p50 us", 3},
                     {"launch_delay_p90_us", "Launch delay p90 us", 3},
                     {"host_busy_in_idle_pct", "Host busy in idle %", 1},
                     {"launch_in_idle_pct", "Launch calls in idle %", 1},
                     {"launch_bound", "Launch-bound"},
                     {"reason", "Why"}};
    const auto pct = [](double v) { return v >= 0 ? Value{v} : Value{}; };
    table.AddRow({path, launch.kernels, Us(launch.median_kernel_ns), launch.busy_pct,
                  launch.launch_delay_p50_ns >= 0 ? Value{Us(launch.launch_delay_p50_ns)} : Value{},
                  launch.launch_delay_p90_ns >= 0 ? Value{Us(launch.launch_delay_p90_ns)} : Value{},
                  pct(launch.host_busy_in_idle_pct), pct(launch.launch_in_idle_pct),
                  std::string(launch.launch_bound ? "yes" : "no"), launch.reason});
    table.notes.push_back(
        "Launch delay: from the launch call's start to its kernel's start (by correlation id).");
    tables.push_back(std::move(table));
  }
  if (!a.roofline.empty()) {
    ResultTable table;
    table.section = "roofline";
    table.title = "Roofline: " + (a.ceilings ? a.ceilings->source : a.ceilings_note);
    table.columns = {{"trace", "Trace", 0, false}, {"operator", "Operator"},
                     {"calls", "Calls"},           {"dtype", "Dtype"},
                     {"gflop", "GFLOP", 3},        {"gbytes", "GB", 3},
                     {"intensity", "FLOP/B", 1},   {"achieved_tflops", "TFLOP/s", 3},
                     {"bound", "Bound"},           {"pct_of_attainable", "% of roofline", 1},
                     {"time_source", "Time from"}, {"note", "Note"}};
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
  if (!fusion.empty()) {
    ResultTable table;
    table.section = "fusion";
    table.title =
        "Fusion candidates: an elementwise operator that reads a matmul/conv output (by shape)";
    table.columns = {{"trace", "Trace", 0, false}, {"producer", "Producer"},
                     {"consumer", "Consumer"},     {"shape", "Tensor"},
                     {"count", "Count"},           {"consumer_us", "Consumer us", 3}};
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
                   {"mean_step_us", "Mean complete step us", 3},
                   {"compute_us", "Compute us", 3},
                   {"communication_us", "Comm us", 3},
                   {"overlap_pct", "Comm overlapped %", 1}};
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
  if (!d.by_shape.empty()) {
    ResultTable table;
    table.section = "operators_by_shape";
    table.title = d.has_device ? "Framework operators per input shapes, by device self time"
                               : "Framework operators per input shapes, by host self time";
    table.columns = {{"trace", "Trace", 0, false},
                     {"operator", "Name"},
                     {"input_shapes", "Input shapes"},
                     {"calls", "Calls"},
                     {"host_self_us", "Host self us", 3},
                     {"host_total_us", "Host total us", 3},
                     {"device_self_us", "Device self us", 3},
                     {"device_total_us", "Device total us", 3},
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
  if (!d.modules.empty()) {
    ResultTable table;
    table.section = "modules";
    table.title = d.has_device ? "Modules by device time" : "Modules by host time";
    table.columns = {{"trace", "Trace", 0, false},
                     {"module", "Module"},
                     {"calls", "Calls"},
                     {"host_total_us", "Host total us", 3},
                     {"device_self_us", "Device self us", 3},
                     {"device_total_us", "Device total us", 3},
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
      {"kernels", "Device kernels, copies and sets by time", "% device",
       [](analyze::EventClass c) { return analyze::IsDevice(c); }},
      {"host_calls", "Runtime calls, waits and Python functions by self time", nullptr,
       [](analyze::EventClass c) {
         return c == analyze::EventClass::kRuntime || c == analyze::EventClass::kSync ||
                c == analyze::EventClass::kPython;
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
    if (rows.empty()) continue;
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
    table.title = kind.title;
    table.columns = {{"trace", "Trace", 0, false},   {"format", "Format", 0, false},
                     {"events", "Events", 0, false}, {"operator", "Name"},
                     {"category", "Category"},       {"count", "Count"},
                     {"self_us", "Self us", 3},      {"total_us", "Total us", 3},
                     {"mean_us", "Mean us", 3},      {"p50_us", "p50 us", 3},
                     {"p99_us", "p99 us", 3},        {"max_us", "Max us", 3}};
    if (kind.share != nullptr) table.columns.push_back({"share_pct", kind.share, 1});
    if (operators) {
      table.columns.push_back({"device_self_us", "Device self us", 3});
      table.columns.push_back({"device_total_us", "Device total us", 3});
      table.columns.push_back({"kernels", "Kernels"});
      table.columns.push_back({"kernels_total", "Kernels in total", 0, false});
      table.columns.push_back({"top_kernels", "Kernels behind it", 0, false});
    }
    table.columns.push_back({"flops", "FLOPs", 0, false});
    table.columns.push_back({"bytes", "Bytes", 0, false});
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

namespace {

Value MsOrNone(int64_t ns) { return ns >= 0 ? Value{ns / 1e6} : Value{}; }

// torch_npu's step_trace_time.csv of each rank, then the ranks compared by it.
void AddAscendSteps(const analyze::AnalyzedSet& set, std::vector<ResultTable>& tables) {
  for (const analyze::AnalyzedTrace& t : set.traces) {
    if (t.ascend_steps.empty()) continue;
    ResultTable table;
    table.section = "ascend_steps";
    table.title = "NPU time per step (step_trace_time.csv or analysis.db): " + t.path;
    table.columns = {{"trace", "Trace"},
                     {"device", "Device"},
                     {"step", "Step"},
                     {"step_ms", "Step ms", 3},
                     {"computing_ms", "Computing ms", 3},
                     {"comm_not_overlapped_ms", "Comm not overlapped ms", 3},
                     {"overlapped_ms", "Comm overlapped ms", 3},
                     {"free_ms", "Free ms", 3},
                     {"bubble_ms", "Bubble ms", 3},
                     {"preparing_ms", "Preparing ms", 3}};
    for (const auto& s : t.ascend_steps) {
      table.AddRow({t.path, s.device, s.step, MsOrNone(s.StepNs()), MsOrNone(s.computing_ns),
                    MsOrNone(s.comm_not_overlapped_ns), MsOrNone(s.overlapped_ns),
                    MsOrNone(s.free_ns), MsOrNone(s.bubble_ns), MsOrNone(s.preparing_ns)});
    }
    table.notes.push_back(
        "As torch_npu computes them from its Overlap Analysis lane: step = computing + "
        "communication not overlapped + free; bubble: hcom_receive time; preparing: from the "
        "framework step's start to the first device task.");
    tables.push_back(std::move(table));
  }
  if (!set.ascend_ranks || set.ascend_ranks->ranks.size() < 2) return;
  const analyze::AscendRankSteps& c = *set.ascend_ranks;
  ResultTable table;
  table.section = "ascend_ranks";
  table.title =
      c.slow_pct < 1
          ? std::string("Ranks by step_trace_time.csv: mean steps agree within 1%")
          : fmt::format(
                "Ranks by step_trace_time.csv: rank {} is the slowest, {:.1f}% above the "
                "median rank: {} {:.3f} ms over the median",
                c.slow_rank, c.slow_pct, c.slow_component, c.slow_component_excess_ns / 1e6);
  table.columns = {{"rank", "Rank"},
                   {"trace", "Trace"},
                   {"steps", "Steps"},
                   {"step_ms", "Mean step ms", 3},
                   {"computing_ms", "Computing ms", 3},
                   {"comm_not_overlapped_ms", "Comm not overlapped ms", 3},
                   {"free_ms", "Free ms", 3},
                   {"bubble_ms", "Bubble ms", 3},
                   {"preparing_ms", "Preparing ms", 3}};
  for (const auto& r : c.ranks) {
    table.AddRow({int64_t{r.rank}, r.path, r.steps, MsOrNone(r.step_ns), MsOrNone(r.computing_ns),
                  MsOrNone(r.comm_not_overlapped_ns), MsOrNone(r.free_ns), MsOrNone(r.bubble_ns),
                  MsOrNone(r.preparing_ns)});
  }
  table.notes.push_back(
      "Means over each rank's steps. The slow component is the one of computing, communication "
      "not overlapped and free whose mean exceeds the median over ranks by the most: free time "
      "points at the host (data loading, launches), communication at waiting for other ranks or "
      "slow links, computing at this rank's kernels.");
  tables.push_back(std::move(table));
}

// The AI Core pipeline per operator from a rank's kernel_details.csv PMU columns.
void AddAscendPipeline(const analyze::AnalyzedTrace& t, const AnalysisTableOptions& options,
                       std::vector<ResultTable>& tables) {
  if (!t.ascend_pipeline || t.ascend_pipeline->ops.empty()) return;
  const analyze::AscendPipelineTable& p = *t.ascend_pipeline;
  ResultTable table;
  table.section = "ascend_ai_core";
  table.title = fmt::format("AI Core pipeline per operator ({} of {} tasks with PMU ratios): {}",
                            p.with_pmu, p.tasks, p.source);
  table.columns = {{"trace", "Trace", 0, false},
                   {"name", "Operator"},
                   {"type", "Type"},
                   {"core", "Core"},
                   {"count", "Count"},
                   {"total_us", "Total us", 3},
                   {"pct_of_task_time", "% of task time", 1},
                   {"measured", "Measured", 0, false},
                   {"cube_ratio", "Cube", 2},
                   {"vector_ratio", "Vector", 2},
                   {"scalar_ratio", "Scalar", 2},
                   {"mte1_ratio", "MTE1", 2},
                   {"mte2_ratio", "MTE2", 2},
                   {"mte3_ratio", "MTE3", 2},
                   {"fixpipe_ratio", "Fixpipe", 2},
                   {"cube_utilization_pct", "Cube util %", 1, false},
                   {"mean_blocks", "Blocks", 1},
                   {"l2_hit_rate", "L2 hit", 3},
                   {"l2_victim_rate", "L2 victim", 3, false},
                   {"bound", "Bound"},
                   {"evidence", "Evidence", 0, false}};
  const auto ratio = [](double v) { return v >= 0 ? Value{v} : Value{}; };
  const size_t shown =
      options.top == 0 ? p.ops.size() : std::min<size_t>(p.ops.size(), options.top);
  for (size_t i = 0; i < shown; ++i) {
    const analyze::AscendOpPipeline& op = p.ops[i];
    std::vector<Value> row = {t.path,
                              op.name,
                              op.type,
                              op.core,
                              op.count,
                              Us(op.total_ns),
                              p.task_ns > 0 ? Value{100.0 * op.total_ns / p.task_ns} : Value{},
                              op.measured};
    for (const double r : op.ratio) row.push_back(ratio(r));
    row.push_back(ratio(op.cube_utilization_pct));
    row.push_back(ratio(op.mean_blocks));
    row.push_back(ratio(op.l2_hit_rate));
    row.push_back(ratio(op.l2_victim_rate));
    row.push_back(op.bound);
    row.push_back(op.evidence);
    table.AddRow(std::move(row));
  }
  if (shown < p.ops.size()) {
    table.notes.push_back(fmt::format("{} more (--top 0 lists all)", p.ops.size() - shown));
  }
  table.notes.push_back(fmt::format(
      "Each ratio is the share of a core's cycles in one pipe's instructions, weighted by task "
      "time (cube: aic_mac; vector: aiv_vec; scalar and MTE2: the larger of the cube and vector "
      "cores'; MTE1, fixpipe: cube core; MTE3: vector core). Bound, as msprof-analyze's advisor "
      "judges: a pipe at {:.0f}% or more of the cycles bounds the operator; with every pipe below "
      "it and a mean task of {} us or more, it is bound by no pipe (it waits: latency, "
      "dependencies, too few blocks). L2 rates from {}.",
      100 * analyze::kPipeBoundRatio, analyze::kNotBoundMinTaskNs / 1000,
      p.l2_source.empty() ? std::string("no l2_cache.csv") : p.l2_source));
  tables.push_back(std::move(table));
}

// operator_memory.csv / memory_record.csv (or msprof's _*.csv): the peak and what held it.
void AddAscendMemory(const analyze::AnalyzedTrace& t, const AnalysisTableOptions& options,
                     std::vector<ResultTable>& tables) {
  if (!t.ascend_memory) return;
  const analyze::AscendMemory& m = *t.ascend_memory;
  constexpr double kMiB = 1024.0 * 1024.0;
  if (m.peak_ns >= 0) {
    ResultTable table;
    table.section = "ascend_memory_peak";
    table.title = fmt::format(
        "NPU memory of rank {} ({}): peak {:.1f} MiB allocated ({} reserved) "
        "when {} allocated; at the peak the window's blocks hold {:.1f} MiB, by operator",
        t.rank, std::filesystem::path(m.source).filename().string(), m.peak_allocated_bytes / kMiB,
        m.peak_reserved_bytes >= 0 ? fmt::format("{:.1f} MiB", m.peak_reserved_bytes / kMiB)
                                   : std::string("n/a"),
        m.peak_operator, m.live_at_peak_bytes / kMiB);
    table.columns = {{"rank", "Rank", 0, false},
                     {"operator", "Operator"},
                     {"blocks", "Blocks"},
                     {"mib", "MiB", 2},
                     {"pct_of_peak", "% of peak", 1}};
    const size_t shown = options.top == 0 ? m.live_at_peak.size()
                                          : std::min<size_t>(m.live_at_peak.size(), options.top);
    for (size_t i = 0; i < shown; ++i) {
      const auto& h = m.live_at_peak[i];
      table.AddRow({int64_t{t.rank}, h.name, h.blocks, h.bytes / kMiB,
                    m.peak_allocated_bytes > 0
                        ? Value{100.0 * static_cast<double>(h.bytes) / m.peak_allocated_bytes}
                        : Value{}});
    }
    if (shown < m.live_at_peak.size()) {
      table.notes.push_back(
          fmt::format("{} more (--top 0 lists all)", m.live_at_peak.size() - shown));
    }
    table.notes.push_back(fmt::format(
        "The peak is the highest 'Allocation Total Allocated' of the window's {} allocations "
        "({:.1f} MiB in all; {} rows freed blocks allocated before the window). Blocks live at "
        "the peak: allocated at or before it and not released by then; memory allocated before "
        "the window is in the peak but not in this list. KB = 1024 bytes, MB = 1024 KB.",
        m.blocks, m.allocated_bytes / kMiB, m.before_window));
    tables.push_back(std::move(table));
  }
  if (!m.components.empty()) {
    ResultTable table;
    table.section = "ascend_memory_components";
    table.title = fmt::format("NPU memory of rank {} by component ({})", t.rank,
                              std::filesystem::path(m.record_source).filename().string());
    table.columns = {{"rank", "Rank", 0, false},
                     {"component", "Component"},
                     {"peak_allocated_mib", "Peak allocated MiB", 2},
                     {"peak_reserved_mib", "Peak reserved MiB", 2}};
    for (const auto& c : m.components) {
      table.AddRow({int64_t{t.rank}, c.component,
                    c.peak_allocated_bytes >= 0 ? Value{c.peak_allocated_bytes / kMiB} : Value{},
                    c.peak_reserved_bytes >= 0 ? Value{c.peak_reserved_bytes / kMiB} : Value{}});
    }
    table.notes.push_back(
        "PTA: torch_npu's caching allocator; GE: the graph engine; APP: the whole process as the "
        "driver sees it (reserved only).");
    tables.push_back(std::move(table));
  }
}

// A value of a summary file that may be absent (-1).
Value MsOrNa(int64_t ns) { return ns >= 0 ? Value{ns / 1e6} : Value{}; }
Value UsOrNa(int64_t ns) { return ns >= 0 ? Value{ns / 1e3} : Value{}; }
Value CountOrNa(int64_t n) { return n >= 0 ? Value{n} : Value{}; }

// op_statistic / communication_statistic: the file's own per-type totals.
void AddTypeStats(const analyze::AnalyzedTrace& t, const std::vector<analyze::AscendTypeStat>& v,
                  const std::string& source, const char* section, const char* what,
                  const AnalysisTableOptions& options, std::vector<ResultTable>& tables) {
  if (v.empty()) return;
  ResultTable table;
  table.section = section;
  table.title = fmt::format("{} of rank {} ({})", what, t.rank, source);
  table.columns = {{"rank", "Rank", 0, false}, {"device", "Device", 0, false},
                   {"op_type", "Type"},        {"core_type", "Core"},
                   {"count", "Count"},         {"total_ms", "Total ms", 3},
                   {"min_us", "Min us", 3},    {"avg_us", "Mean us", 3},
                   {"max_us", "Max us", 3},    {"ratio_pct", "% of total", 1}};
  const size_t shown = Shown(v.size(), options, table);
  for (size_t i = 0; i < shown; ++i) {
    const analyze::AscendTypeStat& s = v[i];
    table.AddRow({int64_t{t.rank}, s.device, s.op_type,
                  s.core_type.empty() ? Value{} : Value{s.core_type}, CountOrNa(s.count),
                  MsOrNa(s.total_ns), UsOrNa(s.min_ns), UsOrNa(s.avg_ns), UsOrNa(s.max_ns),
                  s.ratio_pct >= 0 ? Value{s.ratio_pct} : Value{}});
  }
  table.notes.push_back(
      "As the file gives them (msprof's own sums over the device tasks of each type, sorted by "
      "total time); '% of total' is the type's share of the file's total.");
  tables.push_back(std::move(table));
}

// The summaries beside a rank's timeline (importers/ascend/summaries.h).
void AddAscendSummaries(const analyze::AnalyzedTrace& t, const AnalysisTableOptions& options,
                        std::vector<ResultTable>& tables) {
  const analyze::AscendSummaries& s = t.ascend_summaries;
  constexpr double kMiB = 1024.0 * 1024.0;
  AddTypeStats(t, s.op_types, s.op_types_source, "ascend_op_types", "Operator types", options,
               tables);
  AddTypeStats(t, s.communication_types, s.communication_types_source, "ascend_communication_types",
               "Communication operator types", options, tables);
  if (!s.apis.empty()) {
    std::vector<const analyze::AscendApiStat*> apis;
    for (const auto& api : s.apis) apis.push_back(&api);
    std::stable_sort(apis.begin(), apis.end(),
                     [](const auto* a, const auto* b) { return a->total_ns > b->total_ns; });
    ResultTable table;
    table.section = "ascend_apis";
    table.title =
        fmt::format("Host API calls of rank {} by total time ({})", t.rank, s.apis_source);
    table.columns = {{"rank", "Rank", 0, false}, {"device", "Device", 0, false},
                     {"level", "Level"},         {"api", "API"},
                     {"calls", "Calls"},         {"total_ms", "Total ms", 3},
                     {"avg_us", "Mean us", 3},   {"min_us", "Min us", 3, false},
                     {"max_us", "Max us", 3}};
    const size_t shown = Shown(apis.size(), options, table);
    for (size_t i = 0; i < shown; ++i) {
      const analyze::AscendApiStat& a = *apis[i];
      table.AddRow({int64_t{t.rank}, a.device, a.level, a.api, CountOrNa(a.count),
                    MsOrNa(a.total_ns), UsOrNa(a.avg_ns), UsOrNa(a.min_ns), UsOrNa(a.max_ns)});
    }
    table.notes.push_back(
        "Levels: acl (AscendCL, with operator tiling and compilation), runtime, node (launches), "
        "model, hccl/communication. aclopCompile* calls are operators compiled online.");
    tables.push_back(std::move(table));
  }
  if (!s.framework_ops.empty()) {
    ResultTable table;
    table.section = "ascend_framework_ops";
    table.title = fmt::format("Framework operators of rank {} by device self time ({})", t.rank,
                              s.framework_ops_source);
    table.columns = {{"rank", "Rank", 0, false},
                     {"operator", "Operator"},
                     {"rows", "Rows"},
                     {"host_self_ms", "Host self ms", 3},
                     {"host_total_ms", "Host total ms", 3},
                     {"device_self_ms", "Device self ms", 3},
                     {"device_total_ms", "Device total ms", 3},
                     {"device_self_aicore_ms", "Device self AI Core ms", 3, false},
                     {"device_total_aicore_ms", "Device total AI Core ms", 3, false}};
    const size_t shown = Shown(s.framework_ops.size(), options, table);
    for (size_t i = 0; i < shown; ++i) {
      const analyze::AscendFrameworkOp& op = s.framework_ops[i];
      table.AddRow({int64_t{t.rank}, op.name, op.rows, op.host_self_ns / 1e6,
                    op.host_total_ns / 1e6, op.device_self_ns / 1e6, op.device_total_ns / 1e6,
                    op.device_self_aicore_ns / 1e6, op.device_total_aicore_ns / 1e6});
    }
    table.notes.push_back(
        "operator_details.csv's rows (one per operator, input shapes and call stack) summed per "
        "operator. Self: the operator's own time (host) or the device tasks it launched itself "
        "(device); total: with the operators it called.");
    tables.push_back(std::move(table));
  }
  const auto memory = [&](const std::vector<analyze::AscendMemoryPeak>& v,
                          const std::string& source, const char* section, const char* what,
                          const char* note) {
    if (v.empty()) return;
    ResultTable table;
    table.section = section;
    table.title = fmt::format("{} of rank {} at its peak ({})", what, t.rank, source);
    table.columns = {
        {"rank", "Rank", 0, false},  {"device", "Device"},           {"name", "Series"},
        {"peak_mib", "Peak MiB", 2}, {"peak_us", "At us", 3, false}, {"samples", "Samples"}};
    size_t zero = 0;
    for (const auto& p : v) {
      if (p.peak_bytes == 0) {
        ++zero;
        continue;
      }
      table.AddRow(
          {int64_t{t.rank}, p.device, p.name, p.peak_bytes / kMiB, UsOrNa(p.peak_ns), p.samples});
    }
    if (zero > 0) table.notes.push_back(fmt::format("{} more series stayed at 0 MiB", zero));
    table.notes.push_back(note);
    tables.push_back(std::move(table));
  };
  memory(s.module_memory, s.module_memory_source, "ascend_module_memory",
         "NPU memory reserved per driver module",
         "Total Reserved per component (SLOG, HCCL, RUNTIME, GE, ...); MiB = 1024 KiB. A value "
         "of -1 (only a release captured) is not a sample.");
  memory(s.npu_memory, s.npu_memory_source, "ascend_npu_memory", "NPU memory (npu_mem)",
         "app: this process; device: the whole NPU; ddr, hbm and their sum (memory); MiB = 1024 "
         "KiB.");
  if (!s.iterations.empty()) {
    ResultTable table;
    table.section = "ascend_iterations";
    table.title = fmt::format("Graph-mode iterations of rank {} ({})", t.rank, s.iterations_source);
    table.columns = {{"rank", "Rank", 0, false},
                     {"device", "Device", 0, false},
                     {"model_id", "Model"},
                     {"iteration", "Iteration"},
                     {"iteration_ms", "Iteration ms", 3},
                     {"fp_to_bp_ms", "FP to BP ms", 3},
                     {"refresh_ms", "Refresh ms", 3},
                     {"data_aug_ms", "Data wait ms", 3}};
    const size_t shown = Shown(s.iterations.size(), options, table);
    for (size_t i = 0; i < shown; ++i) {
      const analyze::AscendIteration& it = s.iterations[i];
      table.AddRow({int64_t{t.rank}, it.device, it.model_id, it.iteration, MsOrNa(it.iteration_ns),
                    MsOrNa(it.fp_to_bp_ns), MsOrNa(it.refresh_ns), MsOrNa(it.data_aug_ns)});
    }
    table.notes.push_back(
        "FP to BP: forward and backward; refresh: the update after backward; data wait (Data "
        "Aug Bound): from the previous iteration's end to this forward's start, time the model "
        "waited for input. n/a: not measured (inference has no BP; the first iteration has no "
        "data wait).");
    tables.push_back(std::move(table));
  }
}

// GB/s of a transfer (bytes per ns), or none.
Value Gbps(int64_t bytes, int64_t ns) {
  return ns > 0 ? Value{static_cast<double>(bytes) / static_cast<double>(ns)} : Value{};
}

// communication.json and communication_matrix.json of the ranks.
void AddAscendCommunication(const analyze::AnalyzedSet& set, const AnalysisTableOptions& options,
                            std::vector<ResultTable>& tables) {
  if (!set.ascend_communication) return;
  const analyze::AscendCommunicationCluster& c = *set.ascend_communication;
  if (!c.ranks.empty()) {
    ResultTable table;
    table.section = "ascend_communication";
    const auto waited = std::find_if(c.ranks.begin(), c.ranks.end(),
                                     [&](const auto& r) { return r.rank == c.waited_for_rank; });
    table.title =
        waited != c.ranks.end()
            ? fmt::format(
                  "Communication per rank (communication.json or analysis.db): the others wait for "
                  "rank {}: it "
                  "arrives last in {} of its {} shared operations, {:.3f} ms of their waiting",
                  waited->rank, waited->arrived_last, waited->shared,
                  waited->others_waited_ns / 1e6)
            : std::string("Communication per rank (communication.json or analysis.db)");
    table.columns = {{"rank", "Rank"},
                     {"trace", "Trace", 0, false},
                     {"operations", "Operations"},
                     {"elapse_ms", "Elapse ms", 3},
                     {"transit_ms", "Transit ms", 3},
                     {"wait_ms", "Wait ms", 3},
                     {"sync_ms", "Sync ms", 3},
                     {"idle_ms", "Idle ms", 3},
                     {"wait_ratio", "Wait ratio", 3},
                     {"arrived_last", "Arrived last"},
                     {"shared", "Shared ops"},
                     {"others_waited_ms", "Others waited ms", 3},
                     {"transports", "Bandwidth by transport"}};
    for (const auto& r : c.ranks) {
      std::string transports;
      for (const auto& t : r.transports) {
        transports += fmt::format(
            "{}{} {:.2f} GB/s ({:.1f} MB)", transports.empty() ? "" : ", ", t.transport,
            t.time_ns > 0 ? static_cast<double>(t.bytes) / t.time_ns : 0.0, t.bytes / 1e6);
      }
      table.AddRow({int64_t{r.rank}, r.path, r.collectives, r.elapse_ns / 1e6, r.transit_ns / 1e6,
                    r.wait_ns / 1e6, r.sync_ns / 1e6, r.idle_ns / 1e6,
                    r.wait_ns + r.transit_ns > 0
                        ? Value{static_cast<double>(r.wait_ns) / (r.wait_ns + r.transit_ns)}
                        : Value{},
                    r.arrived_last, r.shared, r.others_waited_ns / 1e6, transports});
    }
    table.notes.push_back(
        "Sums over each rank's operations (communication.json: transit = moving data, wait = "
        "waiting for peers before the transfer, sync = synchronising between ranks, idle = the "
        "rest of the elapse). Wait ratio = wait / (wait + transit), as msprof-analyze computes "
        "it. In an operation that several ranks' files hold, the rank that waited least arrived "
        "last: 'others waited' sums the other ranks' mean wait in those operations. Bandwidth = "
        "transit size / transit time per transport (MB = 10^6 bytes; SDMA, the sum of HCCS, "
        "PCIE and SIO, left out).");
    tables.push_back(std::move(table));
  }
  // Each rank's longest operations.
  for (const analyze::AnalyzedTrace& t : set.traces) {
    if (t.ascend_collectives.empty()) continue;
    std::vector<const analyze::AscendCollective*> ops;
    for (const auto& op : t.ascend_collectives) ops.push_back(&op);
    std::stable_sort(ops.begin(), ops.end(),
                     [](const auto* a, const auto* b) { return a->elapse_ns > b->elapse_ns; });
    ResultTable table;
    table.section = "ascend_collectives";
    table.title = fmt::format(
        "Communication operations of rank {} by elapse (communication.json or analysis.db)",
        t.rank);
    table.columns = {{"rank", "Rank", 0, false},
                     {"step", "Step"},
                     {"kind", "Kind"},
                     {"operation", "Operation"},
                     {"group", "Group", 0, false},
                     {"elapse_ms", "Elapse ms", 3},
                     {"transit_ms", "Transit ms", 3},
                     {"wait_ms", "Wait ms", 3},
                     {"sync_ms", "Sync ms", 3},
                     {"idle_ms", "Idle ms", 3},
                     {"wait_ratio", "Wait ratio", 3},
                     {"transport", "Main transport"},
                     {"gbps", "GB/s", 2},
                     {"mb", "MB", 3}};
    const size_t shown = options.top == 0 ? ops.size() : std::min<size_t>(ops.size(), options.top);
    for (size_t i = 0; i < shown; ++i) {
      const analyze::AscendCollective& op = *ops[i];
      const analyze::AscendTransfer* main = nullptr;
      for (const auto& tr : op.transfers) {
        if (main == nullptr || tr.bytes > main->bytes) main = &tr;
      }
      table.AddRow({int64_t{t.rank}, op.step, op.kind, op.op, op.group, op.elapse_ns / 1e6,
                    op.transit_ns / 1e6, op.wait_ns / 1e6, op.sync_ns / 1e6, op.idle_ns / 1e6,
                    op.wait_ns + op.transit_ns > 0
                        ? Value{static_cast<double>(op.wait_ns) / (op.wait_ns + op.transit_ns)}
                        : Value{},
                    main ? Value{main->transport} : Value{},
                    main ? Gbps(main->bytes, main->time_ns) : Value{},
                    main ? Value{main->bytes / 1e6} : Value{}});
    }
    if (shown < ops.size()) {
      table.notes.push_back(fmt::format("{} more (--top 0 lists all)", ops.size() - shown));
    }
    tables.push_back(std::move(table));
  }
  if (!c.links.empty()) {
    ResultTable table;
    table.section = "ascend_links";
    table.title =
        c.slow_links == 0
            ? std::string(
                  "Links (communication_matrix.json): none below 80% of the median of its "
                  "transport")
            : fmt::format(
                  "Links (communication_matrix.json): {} slow, the slowest {}->{}{} ({}, group "
                  "{}{}, rank {}'s file) at {:.2f} GB/s, {:.0f}% of the median {} link",
                  c.slow_links, c.links[0].link.src, c.links[0].link.dst,
                  c.links[0].link.global_src >= 0 && c.links[0].link.global_dst >= 0
                      ? fmt::format(" (global ranks {}->{})", c.links[0].link.global_src,
                                    c.links[0].link.global_dst)
                      : std::string(),
                  c.links[0].link.transport, c.links[0].link.group,
                  c.links[0].link.group_role.empty() ? std::string()
                                                     : " " + c.links[0].link.group_role,
                  c.links[0].rank, c.links[0].link.Gbps(),
                  100 * c.links[0].link.Gbps() / c.links[0].median_gbps, c.links[0].link.transport);
    table.columns = {{"rank", "Rank"},
                     {"step", "Step"},
                     {"op_type", "Type"},
                     {"group", "Group", 0, false},
                     {"src", "Src"},
                     {"dst", "Dst"},
                     {"global_src", "Global src"},
                     {"global_dst", "Global dst"},
                     {"group_role", "Role"},
                     {"ranks_from", "Global ranks from", 0, false},
                     {"transport", "Transport"},
                     {"mb", "MB", 3},
                     {"transit_ms", "Transit ms", 3},
                     {"gbps", "GB/s", 2},
                     {"median_gbps", "Median GB/s", 2},
                     {"pct_of_median", "% of median", 1},
                     {"slow", "Slow"}};
    const size_t shown =
        options.top == 0 ? c.links.size() : std::min<size_t>(c.links.size(), options.top);
    for (size_t i = 0; i < shown; ++i) {
      const analyze::AscendSlowLink& l = c.links[i];
      const double pct = l.median_gbps > 0 ? 100 * l.link.Gbps() / l.median_gbps : 0;
      const auto global = [](int r) { return r >= 0 ? Value{int64_t{r}} : Value{}; };
      table.AddRow({int64_t{l.rank}, l.link.step, l.link.op_type, l.link.group, int64_t{l.link.src},
                    int64_t{l.link.dst}, global(l.link.global_src), global(l.link.global_dst),
                    l.link.group_role.empty() ? Value{} : Value{l.link.group_role},
                    l.link.ranks_from.empty() ? Value{} : Value{l.link.ranks_from},
                    l.link.transport, l.link.bytes / 1e6, l.link.time_ns / 1e6, l.link.Gbps(),
                    l.median_gbps, pct,
                    std::string(pct < 100 * analyze::kSlowLinkRatio ? "yes" : "no")});
    }
    if (shown < c.links.size()) {
      table.notes.push_back(fmt::format("{} more (--top 0 lists all)", c.links.size() - shown));
    }
    table.notes.push_back(
        "Each link's 'total' entry (size and time summed over the operations of one type and "
        "group); source and destination are ranks within the group, and their global ranks come "
        "from profiler_metadata.json's parallel_group_info (the group found by the hash after "
        "'@'), else from each rank's own LOCAL link k-k (n/a: neither says). Links of a transport "
        "are "
        "compared when there are three or more that moved 1 MB or more (LOCAL copies left "
        "out); slow: below 80% of their median. A slow link points at its hardware path (a "
        "degraded HCCS/RoCE port, a PCIe switch) or at contention on it.");
    tables.push_back(std::move(table));
  }
}

}  // namespace

std::vector<ResultTable> AnalysisTables(const analyze::AnalyzedSet& set,
                                        const AnalysisTableOptions& options) {
  std::vector<ResultTable> tables;
  for (const analyze::AnalyzedTrace& t : set.traces) {
    AddFindingsAndOperators(t, options, tables);
    AddAnalyses(t.path, t.analysis, tables);
    AddMoreAnalyses(t.path, t.analysis, tables, options);
    AddAscendPipeline(t, options, tables);
    AddAscendMemory(t, options, tables);
    AddAscendSummaries(t, options, tables);
  }
  if (set.ranks) AddRanks(*set.ranks, tables);
  AddAscendSteps(set, tables);
  AddAscendCommunication(set, options, tables);
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
