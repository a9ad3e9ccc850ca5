// The tables of what producers reported beside their timelines (reported.h):
// per trace, its pipes, memory and summaries; across ranks, the reported step
// breakdowns and communication.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "analyze/side_files.h"
#include "report/analysis_tables.h"

namespace opscope::report {
namespace {

// A byte column whose values are MiB.
core::Column MibColumn(std::string key, std::string header) {
  return core::Column{.key = std::move(key),
                      .header = std::move(header),
                      .precision = 2,
                      .unit = Unit::kBytes,
                      .scale = 1024.0 * 1024};
}

double Us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

Value MsOrNone(int64_t ns) { return ns >= 0 ? Value{ns / 1e6} : Value{}; }

// The step components' means, in ms, as the ranks' and the stages' tables
// give them (step, computing, communication not overlapped, free, bubble).
void AppendStepMeanColumns(ResultTable& table) {
  for (const auto& [key, header] : {std::pair{"step_ns", "Mean step ms"},
                                    {"computing_ns", "Computing ms"},
                                    {"comm_not_overlapped_ns", "Comm not overlapped ms"},
                                    {"free_ns", "Free ms"},
                                    {"bubble_ns", "Bubble ms"}}) {
    table.columns.push_back(
        {.key = key, .header = header, .precision = 3, .unit = Unit::kTime, .scale = 1e6});
  }
}

// torch_npu's step_trace_time.csv of each rank, then the ranks compared by it.
void AddReportedSteps(const analyze::AnalyzedSet& set, std::vector<ResultTable>& tables) {
  for (const analyze::AnalyzedTrace& t : set.traces) {
    if (t.reported.steps.empty()) continue;
    ResultTable table;
    table.section = "reported_steps";
    table.title = "NPU time per step (step_trace_time.csv or analysis.db): " + t.path;
    table.columns = {
        {"trace", "Trace"},
        {"device", "Device"},
        {"step", "Step"},
        {.key = "step_ns", .header = "Step ms", .precision = 3, .unit = Unit::kTime, .scale = 1e6},
        {.key = "computing_ns",
         .header = "Computing ms",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e6},
        {.key = "comm_not_overlapped_ns",
         .header = "Comm not overlapped ms",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e6},
        {.key = "overlapped_ns",
         .header = "Comm overlapped ms",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e6},
        {.key = "free_ns", .header = "Free ms", .precision = 3, .unit = Unit::kTime, .scale = 1e6},
        {.key = "bubble_ns",
         .header = "Bubble ms",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e6},
        {.key = "preparing_ns",
         .header = "Preparing ms",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e6}};
    for (const auto& s : t.reported.steps) {
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
  if (!set.step_ranks || set.step_ranks->ranks.size() < 2) return;
  const analyze::ReportedStepRanks& c = *set.step_ranks;
  ResultTable table;
  table.section = "reported_step_ranks";
  table.title =
      c.slow_pct < 1
          ? std::string("Ranks by step_trace_time.csv: mean steps agree within 1%")
          : fmt::format(
                "Ranks by step_trace_time.csv: rank {} is the slowest, {:.1f}% above the "
                "median rank: {} {:.3f} ms over the median",
                c.slow_rank, c.slow_pct, c.slow_component, c.slow_component_excess_ns / 1e6);
  table.columns = {{"rank", "Rank"}, {"trace", "Trace"}, {"steps", "Steps"}};
  AppendStepMeanColumns(table);
  table.columns.push_back({.key = "preparing_ns",
                           .header = "Preparing ms",
                           .precision = 3,
                           .unit = Unit::kTime,
                           .scale = 1e6});
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
  if (c.stages.size() < 2) return;
  // Pipeline stages: the ranks at each position of the pp groups.
  ResultTable stages;
  stages.section = "reported_stages";
  const auto least = std::min_element(
      c.stages.begin(), c.stages.end(),
      [](const auto& a, const auto& b) { return a.computing_ns < b.computing_ns; });
  stages.title = fmt::format(
      "Pipeline stages (parallel_group_info's pp groups): stage {} computes {:.3f} ms more per "
      "step than stage {}; the other stages wait for it in the pipeline's bubbles",
      c.slow_stage, c.stage_imbalance_ns / 1e6, least->stage);
  stages.columns = {{"stage", "Stage"}, {"ranks", "Ranks"}};
  AppendStepMeanColumns(stages);
  for (const auto& s : c.stages) {
    std::string ranks;
    for (const int r : s.ranks) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    stages.AddRow({int64_t{s.stage}, ranks, MsOrNone(s.step_ns), MsOrNone(s.computing_ns),
                   MsOrNone(s.comm_not_overlapped_ns), MsOrNone(s.free_ns), MsOrNone(s.bubble_ns)});
  }
  stages.notes.push_back(
      "A rank's stage is its position among the sorted ranks of its pipeline-parallel group "
      "(profiler_metadata.json's parallel_group_info, role pp), as msprof-analyze maps them; a "
      "stage's figures are the means of its ranks' step means. Balance the stages' layers (or "
      "their micro-batch work) so that they compute alike: the slowest stage sets every "
      "stage's step.");
  tables.push_back(std::move(stages));
}

// The AI Core pipeline per operator from a rank's kernel_details.csv PMU columns.
void AddReportedPipeline(const analyze::AnalyzedTrace& t, const AnalysisTableOptions& options,
                         std::vector<ResultTable>& tables) {
  if (!t.reported.pipes || t.reported.pipes->ops.empty()) return;
  const analyze::PipeTable& p = *t.reported.pipes;
  ResultTable table;
  table.section = "core_pipes";
  table.title = fmt::format("AI Core pipeline per operator ({} of {} tasks with PMU ratios): {}",
                            p.with_pmu, p.tasks, p.source);
  table.columns = {
      {"trace", "Trace", 0, false},
      {"name", "Operator"},
      {"type", "Type"},
      {"core", "Core"},
      {.key = "count", .header = "Count", .unit = Unit::kCount},
      {.key = "total_ns", .header = "Total us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
      {.key = "pct_of_task_time",
       .header = "% of task time",
       .precision = 1,
       .unit = Unit::kPercent},
      {"measured", "Measured", 0, false},
      {"cube_ratio", "Cube", 2},
      {"vector_ratio", "Vector", 2},
      {"scalar_ratio", "Scalar", 2},
      {"mte1_ratio", "MTE1", 2},
      {"mte2_ratio", "MTE2", 2},
      {"mte3_ratio", "MTE3", 2},
      {"fixpipe_ratio", "Fixpipe", 2},
      {.key = "cube_utilization_pct",
       .header = "Cube util %",
       .precision = 1,
       .terminal = false,
       .unit = Unit::kPercent},
      {"mean_blocks", "Blocks", 1},
      {"l2_hit_rate", "L2 hit", 3},
      {"l2_victim_rate", "L2 victim", 3, false},
      {"bound", "Bound"},
      {"evidence", "Evidence", 0, false}};
  const auto ratio = [](double v) { return v >= 0 ? Value{v} : Value{}; };
  const size_t shown =
      options.top == 0 ? p.ops.size() : std::min<size_t>(p.ops.size(), options.top);
  for (size_t i = 0; i < shown; ++i) {
    const analyze::OpPipes& op = p.ops[i];
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
  if (p.families.empty()) return;
  ResultTable families;
  families.section = "ai_core_families";
  families.title = fmt::format(
      "AI Core operators by family, as msprof-analyze's advisor checks them ({} shapes): {}",
      p.families.size(), p.source);
  families.columns = {
      {"trace", "Trace", 0, false},
      {"family", "Family"},
      {"name", "Operator"},
      {"shapes", "Shapes (in->out)"},
      {"dtype", "Data types", 0, false},
      {.key = "count", .header = "Count", .unit = Unit::kCount},
      {.key = "total_ns", .header = "Total us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
      {"verdict", "Verdict"},
      {"detail", "Detail"},
      {"evidence", "Evidence", 0, false}};
  for (const analyze::FamilyVerdict& v : p.families) {
    families.AddRow({t.path, v.family, v.name, v.shapes, v.dtype, v.count, Us(v.total_ns),
                     v.verdict, v.detail, v.evidence});
  }
  families.notes.push_back(
      "As msprof-analyze's AICorePerformanceChecker with its rules/en/aicore_performance.yaml: "
      "matmuls on the AI Core whose calls of one shape move 100 MB or more (inner axes multiples "
      "of 256; bound by mac >= 0.8 and/or MTE2 >= 0.95), FlashAttentionScore (head dim and "
      "sequence multiples of 128; bound by MTE2 >= 0.8 and/or vec >= 0.75) and its grad (MTE2 >= "
      "0.8 and/or fixpipe >= 0.75), vector-core operators whose type takes 1% of task time or 1 "
      "s (bound by vec + MTE2 + MTE3 >= 0.9, else MTE2, MTE3 or vec >= 0.7); otherwise room to "
      "optimise, the largest gap to a threshold. Means of the tasks' ratios per operator and "
      "shapes.");
  families.notes.push_back(
      "Where opscope differs: the cube's mac test uses the rule file's mac threshold (0.8; "
      "msprof-analyze's code compares mac with the MTE2 threshold, 0.95); batched (3-D or more) "
      "ND matmuls are judged by their last dimensions (msprof-analyze calls them not affine); "
      "the forward FlashAttention's MTE2 bound is called MTE2 (its rule file names it mac); a "
      "grad's shapes are not judged for affinity.");
  tables.push_back(std::move(families));
}

// Runs of operators worth fusing (reported.h: FusibleSequence), wherever the
// rank's task list gave start times, with PMU ratios or without.
void AddFusibleSequences(const analyze::AnalyzedTrace& t, std::vector<ResultTable>& tables) {
  if (!t.reported.pipes || t.reported.pipes->fusible.empty()) return;
  const analyze::PipeTable& p = *t.reported.pipes;
  ResultTable table;
  table.section = "fusible_sequences";
  table.title = fmt::format(
      "Operator runs worth fusing, as msprof-analyze's advisor seeks them ({} runs): {}",
      p.fusible.size(), p.source);
  table.columns = {
      {"trace", "Trace", 0, false},
      {"operators", "Operators (in->out shapes)"},
      {.key = "length", .header = "Length", .unit = Unit::kCount},
      {.key = "count", .header = "Count", .unit = Unit::kCount},
      {.key = "first_row", .header = "First row", .unit = Unit::kCount},
      {.key = "wall_ns", .header = "Span", .precision = 3, .unit = Unit::kTime},
      {.key = "device_ns", .header = "Device", .precision = 3, .unit = Unit::kTime},
      {.key = "idle_ns", .header = "Idle", .precision = 3, .unit = Unit::kTime},
      {.key = "idle_pct", .header = "Idle % of span", .precision = 1, .unit = Unit::kPercent},
      {.key = "mte_pct", .header = "MTE % of core", .precision = 1, .unit = Unit::kPercent},
      {"bound", "Bound"}};
  for (const analyze::FusibleSequence& f : p.fusible) {
    const char* bound = f.host_bound && f.mte_bound ? "host and MTE"
                        : f.host_bound              ? "host"
                                                    : "MTE";
    table.AddRow({t.path, f.operators, static_cast<int64_t>(f.length), f.count, f.first_row,
                  f.wall_ns, f.device_ns, f.idle_ns,
                  f.wall_ns > 0 ? Value{100.0 * static_cast<double>(f.idle_ns) /
                                        static_cast<double>(f.wall_ns)}
                                : Value{},
                  f.mte_share >= 0 ? Value{100.0 * f.mte_share} : Value{}, bound});
  }
  table.notes.push_back(fmt::format(
      "Runs of {} to {} consecutive compute tasks in start order (no communication or AI CPU "
      "task among them) with the same names and shapes, recurring {} times or more: host-bound "
      "where, for more than {:.0f}% of the span from the first's start to the last's end, no "
      "compute task runs and the next operator waits for no other task (none ends within {} us "
      "before it starts) (Idle: it waits for the host to dispatch it; a graph model's task, "
      "launched with its graph, waits for no host), MTE-bound where data "
      "movement (MTE2 plus MTE3 or fixpipe) is over {:.0f}% of the cores' time{}; host-bound "
      "runs only where they take {:.0f}% or more of the tasks' span ({:.3f} ms). No task is in "
      "two runs. First row: the first occurrence's first task, its data row in the file from 0 "
      "(as msprof-analyze numbers them).",
      analyze::kFusibleMinLength, analyze::kFusibleMaxLength, analyze::kFusibleMinCount,
      100 * (1 - analyze::kFusibleHostShare), analyze::kFusibleDependencyNs / 1000,
      100 * analyze::kFusibleMteShare,
      p.sequence_mte_columns ? "" : " (this file records no MTE times: not judged)",
      100 * analyze::kFusibleSpanShare, static_cast<double>(p.sequence_span_ns) / 1e6));
  table.notes.push_back(
      "Where opscope differs from msprof-analyze's FusibleOperatorChecker: idle time is time "
      "the operators wait for the host (it compares the run's own tasks with the span, so a run "
      "whose operator waits for a collective, or that other streams' compute interleaves, is "
      "host-bound there); runs of 2 count (its "
      "loop records from 3, its rule file says 2); the MTE share is over the larger of the two "
      "cores' times (it divides by aicore_time, 0 on a vector-core task, so vector runs are "
      "never MTE-bound there); a run is judged on its occurrences summed, each task in one run "
      "(it keeps the last occurrence's flags and sums overlapping runs); spans in one unit (its "
      "op_summary reader scales start times to ns, not durations).");
  if (p.sequence_capped) {
    table.notes.push_back(fmt::format(
        "The search stopped recording new runs at {} distinct runs: runs first seen after that "
        "are not counted.",
        analyze::kFusibleMaxRuns));
  }
  tables.push_back(std::move(table));
}

// operator_memory.csv / memory_record.csv (or msprof's _*.csv): the peak and what held it.
void AddReportedMemory(const analyze::AnalyzedTrace& t, const AnalysisTableOptions& options,
                       std::vector<ResultTable>& tables) {
  if (!t.reported.memory) return;
  const analyze::ReportedMemory& m = *t.reported.memory;
  constexpr double kMiB = 1024.0 * 1024.0;
  if (m.peak_ns >= 0) {
    ResultTable table;
    table.section = "reported_memory_peak";
    table.title = fmt::format(
        "{} memory of rank {} ({}): peak {:.1f} MiB allocated ({} reserved) "
        "when {} allocated; at the peak {} hold {:.1f} MiB, by {}",
        m.device, t.rank, std::filesystem::path(m.source).filename().string(),
        m.peak_allocated_bytes / kMiB,
        m.peak_reserved_bytes >= 0 ? fmt::format("{:.1f} MiB", m.peak_reserved_bytes / kMiB)
                                   : std::string("n/a"),
        m.peak_operator, m.whole_state ? "the live blocks" : "the window's blocks",
        m.live_at_peak_bytes / kMiB, m.holder);
    std::string holder_header = m.holder;
    if (!holder_header.empty())
      holder_header[0] = static_cast<char>(std::toupper(holder_header[0]));
    table.columns = {
        {"rank", "Rank", 0, false},
        {"operator", holder_header},
        {"blocks", "Blocks"},
        {.key = "bytes",
         .header = "MiB",
         .precision = 2,
         .unit = Unit::kBytes,
         .scale = 1024.0 * 1024},
        {.key = "pct_of_peak", .header = "% of peak", .precision = 1, .unit = Unit::kPercent}};
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
    if (m.whole_state) {
      table.notes.push_back(fmt::format(
          "The peak is the highest total allocated (a block from its allocation to the request "
          "to free it, as torch.cuda.memory_allocated counts, at the size requested: the "
          "history records those, the allocator rounds each block up) over the recorded "
          "history of {} allocations ({:.1f} MiB in all), replayed from the state the "
          "snapshot's segments give at its end: {} blocks were live before the history began, "
          "and are in the peak and in this list (by their stack where the snapshot keeps it). "
          "A site is the innermost frame of the allocating stack in user code (outside "
          "torch/), else the innermost Python frame, else the operator called. MiB = 1024 x "
          "1024 bytes.",
          m.blocks, m.allocated_bytes / kMiB, m.before_window));
    } else {
      table.notes.push_back(fmt::format(
          "The peak is the highest total allocated (the allocator's own figure after each "
          "allocation and free) of the window's {} allocations "
          "({:.1f} MiB in all; {} rows freed blocks allocated before the window). Blocks live at "
          "the peak: allocated at or before it and not released by then; memory allocated before "
          "the window is in the peak but not in this list. KB = 1024 bytes, MB = 1024 KB.",
          m.blocks, m.allocated_bytes / kMiB, m.before_window));
    }
    for (const std::string& n : m.notes) table.notes.push_back(n);
    tables.push_back(std::move(table));
  }
  if (!m.pools.empty()) {
    ResultTable table;
    table.section = "reported_memory_pools";
    const analyze::MemoryPool& all = m.pools.back();
    table.title = fmt::format(
        "{} memory of rank {} at the snapshot, by pool: {:.1f} MiB reserved, {:.1f} MiB "
        "allocated, {:.1f} MiB cached free in {} blocks (the largest {:.1f} MiB)",
        m.device, t.rank, all.reserved_bytes / kMiB, all.allocated_bytes / kMiB,
        all.free_bytes / kMiB, all.free_blocks, all.largest_free_bytes / kMiB);
    table.columns = {{"rank", "Rank", 0, false},
                     {"pool", "Pool"},
                     {.key = "segments", .header = "Segments", .unit = Unit::kCount},
                     MibColumn("reserved_bytes", "Reserved MiB"),
                     MibColumn("allocated_bytes", "Allocated MiB"),
                     MibColumn("active_bytes", "Active MiB"),
                     MibColumn("free_bytes", "Cached free MiB"),
                     {.key = "free_blocks", .header = "Free blocks", .unit = Unit::kCount},
                     MibColumn("largest_free_bytes", "Largest free MiB")};
    for (const analyze::MemoryPool& p : m.pools) {
      table.AddRow({int64_t{t.rank}, p.pool, p.segments, p.reserved_bytes / kMiB,
                    p.allocated_bytes / kMiB, p.active_bytes / kMiB, p.free_bytes / kMiB,
                    p.free_blocks, p.largest_free_bytes / kMiB});
    }
    table.notes.push_back(
        "The caching allocator's segments as the snapshot left them: reserved is what it took "
        "from the device, allocated what tensors hold, active adds freed blocks still awaiting "
        "their streams' work, cached free is reserved and unused. Cached free split into many "
        "blocks, the largest much smaller than the whole, is fragmentation: a request larger "
        "than the largest free block reserves more (or fails) although the total would serve "
        "it (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets segments grow instead).");
    tables.push_back(std::move(table));
  }
  if (!m.ooms.empty()) {
    ResultTable table;
    table.section = "reported_memory_oom";
    table.title = fmt::format("{} memory of rank {}: {} allocation{} failed (out of memory)",
                              m.device, t.rank, m.ooms.size(), m.ooms.size() == 1 ? "" : "s");
    table.columns = {{"rank", "Rank", 0, false},
                     {"site", "Allocation site"},
                     MibColumn("bytes", "Requested MiB"),
                     MibColumn("device_free_bytes", "Device free MiB"),
                     MibColumn("allocated_bytes", "Allocated MiB"),
                     MibColumn("reserved_bytes", "Reserved MiB")};
    for (const analyze::MemoryOom& o : m.ooms) {
      table.AddRow({int64_t{t.rank}, o.site, o.bytes / kMiB,
                    o.device_free_bytes >= 0 ? Value{o.device_free_bytes / kMiB} : Value{},
                    o.allocated_bytes >= 0 ? Value{o.allocated_bytes / kMiB} : Value{},
                    o.reserved_bytes >= 0 ? Value{o.reserved_bytes / kMiB} : Value{}});
    }
    tables.push_back(std::move(table));
  }
  if (!m.components.empty()) {
    ResultTable table;
    table.section = "reported_memory_components";
    table.title = fmt::format("{} memory of rank {} by component ({})", m.device, t.rank,
                              std::filesystem::path(m.record_source).filename().string());
    table.columns = {{"rank", "Rank", 0, false},
                     {"component", "Component"},
                     {.key = "peak_allocated_bytes",
                      .header = "Peak allocated MiB",
                      .precision = 2,
                      .unit = Unit::kBytes,
                      .scale = 1024.0 * 1024},
                     {.key = "peak_reserved_bytes",
                      .header = "Peak reserved MiB",
                      .precision = 2,
                      .unit = Unit::kBytes,
                      .scale = 1024.0 * 1024}};
    for (const auto& c : m.components) {
      table.AddRow({int64_t{t.rank}, c.component,
                    c.peak_allocated_bytes >= 0 ? Value{c.peak_allocated_bytes / kMiB} : Value{},
                    c.peak_reserved_bytes >= 0 ? Value{c.peak_reserved_bytes / kMiB} : Value{}});
    }
    table.notes.push_back(
        m.device == "NPU"
            ? "PTA: torch_npu's caching allocator; GE: the graph engine; APP: the whole process as "
              "the driver sees it (reserved only)."
        : m.whole_state
            ? "The caching allocator's totals over the snapshot's recorded history: allocated is "
              "what live tensors requested, reserved what the allocator took from the device "
              "(its segments); reserved far above allocated is memory the allocator holds unused "
              "(fragmentation, or a freed peak)."
            : "The caching allocator's totals from PyTorch's memory events (profile_memory=True): "
              "allocated is what tensors hold, reserved what the allocator took from the device; "
              "reserved far above allocated is memory the allocator holds unused "
              "(fragmentation, or a freed peak).");
    tables.push_back(std::move(table));
  }
}

// A value of a summary file that may be absent (-1).
Value MsOrNa(int64_t ns) { return ns >= 0 ? Value{ns / 1e6} : Value{}; }
Value UsOrNa(int64_t ns) { return ns >= 0 ? Value{ns / 1e3} : Value{}; }
Value CountOrNa(int64_t n) { return n >= 0 ? Value{n} : Value{}; }

// op_statistic / communication_statistic: the file's own per-type totals.
void AddTypeStats(const analyze::AnalyzedTrace& t, const std::vector<analyze::ReportedTypeStat>& v,
                  const std::string& source, const char* section, const char* what,
                  const AnalysisTableOptions& options, std::vector<ResultTable>& tables) {
  if (v.empty()) return;
  ResultTable table;
  table.section = section;
  table.title = fmt::format("{} of rank {} ({})", what, t.rank, source);
  table.columns = {
      {"rank", "Rank", 0, false},
      {"device", "Device", 0, false},
      {"op_type", "Type"},
      {"core_type", "Core"},
      {.key = "count", .header = "Count", .unit = Unit::kCount},
      {.key = "total_ns", .header = "Total ms", .precision = 3, .unit = Unit::kTime, .scale = 1e6},
      {.key = "min_ns", .header = "Min us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
      {.key = "avg_ns", .header = "Mean us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
      {.key = "max_ns", .header = "Max us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
      {.key = "ratio_pct", .header = "% of total", .precision = 1, .unit = Unit::kPercent}};
  const size_t shown = Shown(v.size(), options, table);
  for (size_t i = 0; i < shown; ++i) {
    const analyze::ReportedTypeStat& s = v[i];
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
void AddReportedSummaries(const analyze::AnalyzedTrace& t, const AnalysisTableOptions& options,
                          std::vector<ResultTable>& tables) {
  const analyze::ReportedSummaries& s = t.reported.summaries;
  constexpr double kMiB = 1024.0 * 1024.0;
  AddTypeStats(t, s.op_types, s.op_types_source, "reported_op_types", "Operator types", options,
               tables);
  AddTypeStats(t, s.communication_types, s.communication_types_source,
               "reported_communication_types", "Communication operator types", options, tables);
  if (!s.apis.empty()) {
    std::vector<const analyze::ReportedApiStat*> apis;
    for (const auto& api : s.apis) apis.push_back(&api);
    std::stable_sort(apis.begin(), apis.end(),
                     [](const auto* a, const auto* b) { return a->total_ns > b->total_ns; });
    ResultTable table;
    table.section = "reported_apis";
    table.title =
        fmt::format("Host API calls of rank {} by total time ({})", t.rank, s.apis_source);
    table.columns = {
        {"rank", "Rank", 0, false},
        {"device", "Device", 0, false},
        {"level", "Level"},
        {"api", "API"},
        {"calls", "Calls"},
        {.key = "total_ns",
         .header = "Total ms",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e6},
        {.key = "avg_ns", .header = "Mean us", .precision = 3, .unit = Unit::kTime, .scale = 1e3},
        {.key = "min_ns",
         .header = "Min us",
         .precision = 3,
         .terminal = false,
         .unit = Unit::kTime,
         .scale = 1e3},
        {.key = "max_ns", .header = "Max us", .precision = 3, .unit = Unit::kTime, .scale = 1e3}};
    const size_t shown = Shown(apis.size(), options, table);
    for (size_t i = 0; i < shown; ++i) {
      const analyze::ReportedApiStat& a = *apis[i];
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
    table.section = "reported_framework_ops";
    table.title = fmt::format("Framework operators of rank {} by device self time ({})", t.rank,
                              s.framework_ops_source);
    table.columns = {{"rank", "Rank", 0, false},
                     {"operator", "Operator"},
                     {"rows", "Rows"},
                     {.key = "host_self_ns",
                      .header = "Host self ms",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e6},
                     {.key = "host_total_ns",
                      .header = "Host total ms",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e6},
                     {.key = "device_self_ns",
                      .header = "Device self ms",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e6},
                     {.key = "device_total_ns",
                      .header = "Device total ms",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e6},
                     {.key = "device_self_aicore_ns",
                      .header = "Device self AI Core ms",
                      .precision = 3,
                      .terminal = false,
                      .unit = Unit::kTime,
                      .scale = 1e6},
                     {.key = "device_total_aicore_ns",
                      .header = "Device total AI Core ms",
                      .precision = 3,
                      .terminal = false,
                      .unit = Unit::kTime,
                      .scale = 1e6}};
    const size_t shown = Shown(s.framework_ops.size(), options, table);
    for (size_t i = 0; i < shown; ++i) {
      const analyze::ReportedOp& op = s.framework_ops[i];
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
  const auto memory = [&](const std::vector<analyze::ReportedMemoryPeak>& v,
                          const std::string& source, const char* section, const char* what,
                          const char* note) {
    if (v.empty()) return;
    ResultTable table;
    table.section = section;
    table.title = fmt::format("{} of rank {} at its peak ({})", what, t.rank, source);
    table.columns = {{"rank", "Rank", 0, false},
                     {"device", "Device"},
                     {"name", "Series"},
                     {.key = "peak_bytes",
                      .header = "Peak MiB",
                      .precision = 2,
                      .unit = Unit::kBytes,
                      .scale = 1024.0 * 1024},
                     {.key = "peak_ns",
                      .header = "At us",
                      .precision = 3,
                      .terminal = false,
                      .unit = Unit::kTime,
                      .scale = 1e3},
                     {"samples", "Samples"}};
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
  memory(s.module_memory, s.module_memory_source, "reported_module_memory",
         "NPU memory reserved per driver module",
         "Total Reserved per component (SLOG, HCCL, RUNTIME, GE, ...); MiB = 1024 KiB. A value "
         "of -1 (only a release captured) is not a sample.");
  memory(s.device_memory, s.device_memory_source, "reported_device_memory", "NPU memory (npu_mem)",
         "app: this process; device: the whole NPU; ddr, hbm and their sum (memory); MiB = 1024 "
         "KiB.");
  if (!s.iterations.empty()) {
    ResultTable table;
    table.section = "reported_iterations";
    table.title = fmt::format("Graph-mode iterations of rank {} ({})", t.rank, s.iterations_source);
    table.columns = {{"rank", "Rank", 0, false},
                     {"device", "Device", 0, false},
                     {"model_id", "Model"},
                     {"iteration", "Iteration"},
                     {.key = "iteration_ns",
                      .header = "Iteration ms",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e6},
                     {.key = "fp_to_bp_ns",
                      .header = "FP to BP ms",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e6},
                     {.key = "refresh_ns",
                      .header = "Refresh ms",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e6},
                     {.key = "data_aug_ns",
                      .header = "Data wait ms",
                      .precision = 3,
                      .unit = Unit::kTime,
                      .scale = 1e6}};
    const size_t shown = Shown(s.iterations.size(), options, table);
    for (size_t i = 0; i < shown; ++i) {
      const analyze::ReportedIteration& it = s.iterations[i];
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
void AddReportedCommunication(const analyze::AnalyzedSet& set, const AnalysisTableOptions& options,
                              std::vector<ResultTable>& tables) {
  if (!set.communication) return;
  const analyze::CommunicationCluster& c = *set.communication;
  if (!c.ranks.empty()) {
    ResultTable table;
    table.section = "reported_communication";
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
    table.columns = {
        {"rank", "Rank"},
        {"trace", "Trace", 0, false},
        {"operations", "Operations"},
        {.key = "elapse_ns",
         .header = "Elapse ms",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e6},
        {.key = "transit_ns",
         .header = "Transit ms",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e6},
        {.key = "wait_ns", .header = "Wait ms", .precision = 3, .unit = Unit::kTime, .scale = 1e6},
        {.key = "sync_ns", .header = "Sync ms", .precision = 3, .unit = Unit::kTime, .scale = 1e6},
        {.key = "idle_ns", .header = "Idle ms", .precision = 3, .unit = Unit::kTime, .scale = 1e6},
        {"wait_ratio", "Wait ratio", 3},
        {"arrived_last", "Arrived last"},
        {"shared", "Shared ops"},
        {.key = "others_waited_ns",
         .header = "Others waited ms",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e6},
        {"transports", "Bandwidth by transport"}};
    for (const auto& r : c.ranks) {
      std::string transports;
      for (const auto& t : r.transports) {
        transports += fmt::format(
            "{}{} {:.2f} GB/s ({:.1f} MB)", transports.empty() ? "" : ", ", t.transport,
            t.time_ns > 0 ? static_cast<double>(t.bytes) / t.time_ns : 0.0, t.bytes / 1e6);
      }
      if (r.incomplete > 0) {
        table.notes.push_back(fmt::format(
            "rank {}: {} operation{} without some of their times in {} (NULL in the file): "
            "those values are left out of the sums",
            r.rank, r.incomplete, r.incomplete == 1 ? "" : "s", r.path));
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
    if (t.reported.collectives.empty()) continue;
    std::vector<const analyze::ReportedCollective*> ops;
    for (const auto& op : t.reported.collectives) ops.push_back(&op);
    std::stable_sort(ops.begin(), ops.end(),
                     [](const auto* a, const auto* b) { return a->elapse_ns > b->elapse_ns; });
    ResultTable table;
    table.section = "reported_collectives";
    table.title = fmt::format(
        "Communication operations of rank {} by elapse (communication.json or analysis.db)",
        t.rank);
    table.columns = {
        {"rank", "Rank", 0, false},
        {"step", "Step"},
        {"kind", "Kind"},
        {"operation", "Operation"},
        {"group", "Group", 0, false},
        {.key = "elapse_ns",
         .header = "Elapse ms",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e6},
        {.key = "transit_ns",
         .header = "Transit ms",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e6},
        {.key = "wait_ns", .header = "Wait ms", .precision = 3, .unit = Unit::kTime, .scale = 1e6},
        {.key = "sync_ns", .header = "Sync ms", .precision = 3, .unit = Unit::kTime, .scale = 1e6},
        {.key = "idle_ns", .header = "Idle ms", .precision = 3, .unit = Unit::kTime, .scale = 1e6},
        {"wait_ratio", "Wait ratio", 3},
        {"transport", "Main transport"},
        {.key = "bytes_per_s",
         .header = "GB/s",
         .precision = 2,
         .unit = Unit::kBytesPerSecond,
         .scale = 1e9},
        {.key = "bytes", .header = "MB", .precision = 3, .unit = Unit::kBytes, .scale = 1e6}};
    size_t missing = 0;  // operations whose file left a time out (NULL: -1)
    for (const analyze::ReportedCollective* op : ops) {
      missing += op->elapse_ns < 0 || op->transit_ns < 0 || op->wait_ns < 0 || op->sync_ns < 0 ||
                 op->idle_ns < 0;
    }
    if (missing > 0) {
      table.notes.push_back(fmt::format(
          "{} operation{} without some of their times in the file (NULL): those cells are empty",
          missing, missing == 1 ? "" : "s"));
    }
    const size_t shown = options.top == 0 ? ops.size() : std::min<size_t>(ops.size(), options.top);
    for (size_t i = 0; i < shown; ++i) {
      const analyze::ReportedCollective& op = *ops[i];
      const analyze::ReportedTransfer* main = nullptr;
      for (const auto& tr : op.transfers) {
        if (main == nullptr || tr.bytes > main->bytes) main = &tr;
      }
      // A time the file left out (NULL: -1) is absent, never a negative time.
      const auto ms = [](int64_t ns) { return ns >= 0 ? Value{ns / 1e6} : Value{}; };
      table.AddRow({int64_t{t.rank}, op.step, op.kind, op.op, op.group, ms(op.elapse_ns),
                    ms(op.transit_ns), ms(op.wait_ns), ms(op.sync_ns), ms(op.idle_ns),
                    op.wait_ns >= 0 && op.transit_ns >= 0 && op.wait_ns + op.transit_ns > 0
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
    table.section = "reported_links";
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
    table.columns = {
        {"rank", "Rank"},
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
        {.key = "bytes", .header = "MB", .precision = 3, .unit = Unit::kBytes, .scale = 1e6},
        {.key = "transit_ns",
         .header = "Transit ms",
         .precision = 3,
         .unit = Unit::kTime,
         .scale = 1e6},
        {.key = "bytes_per_s",
         .header = "GB/s",
         .precision = 2,
         .unit = Unit::kBytesPerSecond,
         .scale = 1e9},
        {.key = "median_bytes_per_s",
         .header = "Median GB/s",
         .precision = 2,
         .unit = Unit::kBytesPerSecond,
         .scale = 1e9},
        {.key = "pct_of_median", .header = "% of median", .precision = 1, .unit = Unit::kPercent},
        {"slow", "Slow"}};
    const size_t shown =
        options.top == 0 ? c.links.size() : std::min<size_t>(c.links.size(), options.top);
    for (size_t i = 0; i < shown; ++i) {
      const analyze::SlowLink& l = c.links[i];
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

void AddReportedTables(const analyze::AnalyzedTrace& t, const AnalysisTableOptions& options,
                       std::vector<ResultTable>& tables) {
  AddReportedPipeline(t, options, tables);
  AddFusibleSequences(t, tables);
  AddReportedMemory(t, options, tables);
  AddReportedSummaries(t, options, tables);
  // The tables of the readers that keep what they read in their own types.
  const analyze::TableContext context{.path = t.path, .top = options.top, .rank = t.rank};
  for (const analyze::SideFileReader& reader : analyze::SideFileReaders()) {
    if (reader.tables != nullptr) reader.tables(t.reported, context, tables);
  }
}

void AddReportedRankTables(const analyze::AnalyzedSet& set, const AnalysisTableOptions& options,
                           std::vector<ResultTable>& tables) {
  AddReportedSteps(set, tables);
  AddReportedCommunication(set, options, tables);
}

}  // namespace opscope::report
