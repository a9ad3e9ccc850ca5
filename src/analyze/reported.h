// What a profiler reported about a run beside its timeline, as typed model
// tables: per-step breakdowns, collectives and links, communication groups,
// memory, per-operator hardware-counter (pipe) figures, operator-type and
// host-API statistics, graph iterations, the chip's properties and how the
// run was recorded. Producers
// write them in files of their own (side files: side_files.h); the reader of
// each lowers it into these tables (TraceModel::reported), in base units
// (nanoseconds, bytes), so that analyses, rules and reports read one shape
// whichever tool wrote them. Which reader fills which table, and from what, is
// said by each reader (importers/<vendor>/) and in docs/formats/.
//
// -1 in a figure means the producer did not record it.
#ifndef OPSCOPE_ANALYZE_REPORTED_H_
#define OPSCOPE_ANALYZE_REPORTED_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyze/slots.h"

namespace opscope::analyze {

// ---- Steps -------------------------------------------------------------------

// One step of one device as the producer broke it down: the time it computed,
// communicated without and with overlap, was free, spent in pipeline bubbles
// (waiting to receive) and preparing (from the framework step's start to its
// first device task).
struct ReportedStep {
  std::string device;  // the producer's device id; empty when not recorded
  std::string step;    // empty when the run had no schedule steps
  int64_t computing_ns = -1;
  int64_t communication_ns = -1;
  int64_t comm_not_overlapped_ns = -1;  // communication during which nothing computed
  int64_t overlapped_ns = -1;           // communication - comm_not_overlapped
  int64_t free_ns = -1;                 // neither computing nor communicating
  int64_t stage_ns = -1;
  int64_t bubble_ns = -1;
  int64_t preparing_ns = -1;

  // The step's wall time as the breakdown composes it: computing +
  // communication not overlapped + free; -1 when one of them is absent.
  int64_t StepNs() const;
};

// The per-step breakdowns summed over the steps that have one (StepNs() > 0
// and a not-overlapped figure): `step_ns` includes Preparing, so it is the
// same time as the timeline's step spans.
struct ReportedStepTotals {
  int64_t steps = 0;
  int64_t step_ns = 0, exposed_ns = 0, communication_ns = 0, overlapped_ns = 0, computing_ns = 0,
          free_ns = 0, preparing_ns = 0;
};
ReportedStepTotals SumReportedSteps(const std::vector<ReportedStep>& steps);

// ---- Communication -----------------------------------------------------------

struct ReportedTransfer {
  std::string transport;  // RDMA, HCCS, PCIE, SIO, NVLink, ... (a sum of others left out)
  int64_t bytes = 0, time_ns = 0;
};

// One collective or point-to-point operation of one rank.
struct ReportedCollective {
  std::string step;   // "step50"; "step" when the run had no schedule steps
  std::string kind;   // "collective" or "p2p"
  std::string op;     // the operation as the producer names it ("hcom_allReduce__586_0_1")
  std::string group;  // the producer's key of its communication group; empty when absent
  int64_t start_ns = -1;
  // Its time, and of that: moving data, waiting for peers, synchronising, idle.
  int64_t elapse_ns = 0, transit_ns = 0, wait_ns = 0, sync_ns = 0, idle_ns = 0;
  std::vector<ReportedTransfer> transfers;  // transports that moved bytes

  // The bytes and time it moved over one transport ("RDMA", "HCCS", ...);
  // "SDMA" sums HCCS, PCIE and SIO, as the producer's SDMA entry does (the
  // readers keep the three and leave that sum out).
  std::pair<int64_t, int64_t> Moved(std::string_view transport) const;
};

// One link: bytes and time summed over the operations of one type and group
// between two ranks.
struct ReportedLink {
  std::string step, kind;
  std::string op_type;  // "allreduce", as the producer keys it
  std::string group;
  int src = -1, dst = -1;  // ranks local to the communication group
  std::string transport;   // LOCAL (a copy within the rank), HCCS, PCIE, RDMA, SIO, ...
  int64_t bytes = 0, time_ns = 0;
  // Set across ranks (CompareCommunication): the global ranks of src and dst
  // (-1 unknown), the group's role ("dp", "tp"; empty unknown), and what gave
  // the ranks (the groups' file, or "self-links": each rank's own LOCAL link
  // k-k says its local rank k in the group).
  int global_src = -1, global_dst = -1;
  std::string group_role;
  std::string ranks_from;
  double Gbps() const { return time_ns > 0 ? static_cast<double>(bytes) / time_ns : 0; }
};

// A communication group: its name in the communication library, its role in
// the parallel layout, the key the communication tables name it by, and its
// global ranks.
struct ReportedGroup {
  std::string library_name;       // "10.174.216.241%enp189s0f1_55000_0_1738895486152654"
  std::string role;               // "dp", "tp", ...; empty when absent
  std::string hash;               // the key collectives and links name the group by
  std::vector<int> global_ranks;  // sorted: a group-local rank is an index into it
  std::string source;             // the file that gave it
};

// ---- Pipes of the compute cores (hardware counters per operator) ---------------

// The pipes of a core whose counters give each pipe's share of the cycles:
// matrix (cube), vector, scalar, the memory-transfer engines (MTE1: L1 -> L0,
// MTE2: global memory -> core, MTE3: core -> global memory) and fixpipe (L0C
// -> global memory / L1). In the order reports list them.
enum class AiCorePipe { kCube, kVector, kScalar, kMte1, kMte2, kMte3, kFixpipe };
constexpr int kAiCorePipes = 7;
const char* Name(AiCorePipe pipe);  // "cube", "vector", "scalar", "MTE1", ...

// Shares of cycles at or above this bound an operator; an operator whose mean
// task is shorter than kNotBoundMinTaskNs is not called "bound by none".
constexpr double kPipeBoundRatio = 0.8;
constexpr int64_t kNotBoundMinTaskNs = 20000;

struct OpPipes {
  std::string name;  // kernel name
  std::string type;  // operator type; empty when not recorded
  std::string core;  // the core type of its first task
  int64_t count = 0, total_ns = 0;
  int64_t measured = 0;  // tasks with at least one pipe ratio
  // Duration-weighted mean over its measured tasks; -1 where no task has it.
  double ratio[kAiCorePipes] = {-1, -1, -1, -1, -1, -1, -1};
  double cube_utilization_pct = -1;              // weighted the same way
  double mean_blocks = -1;                       // blocks (thread groups) per task
  double mean_mix_blocks = -1;                   // a MIX operator's vector blocks per task
  double l2_hit_rate = -1, l2_victim_rate = -1;  // weighted; -1 not recorded
  // "cube-bound", "vector-bound", "scalar-bound", "memory-bound (MTE2)", ...,
  // "bound by no pipe", or "" when not judged (no ratios, or short and no pipe
  // at 80%); `evidence` says why in figures.
  std::string bound;
  std::string evidence;
};

// An operator shape's verdict as msprof-analyze's advisor checks the AI Core
// operators of three families (its rules/en/aicore_performance.yaml and
// AICorePerformanceChecker): matmuls on the AI Core whose calls of one shape
// move 100 MB or more, FlashAttentionScore and its grad, and vector-core
// operators whose type takes 1% of the task time or 1 s. Per (operator,
// input and output shapes): the mean of each task's ratios, then
//  - cube: inner axes (the last dimension of both inputs in ND, the product
//    of the middle two in NZ) multiples of 256, else "not affine"; bound by
//    mac (mac >= 0.8), MTE2 (mte2 >= 0.95) or both; else room to optimise,
//    the largest gap to a threshold;
//  - FlashAttention: head dim D and sequence S multiples of 128 (S from the
//    softmax output [B, N, S, 8], D the last input dimension, or H / N for
//    a 3-D input), else "not affine"; forward bound by MTE2 (aic >= 0.8)
//    and/or vector (aiv >= 0.75), grad by MTE2 (>= 0.8) and/or fixpipe
//    (>= 0.75);
//  - vector: bound by vec + MTE2 + MTE3 together (>= 0.9), else MTE2, MTE3
//    or vec alone (>= 0.7), else room to optimise.
// Where opscope differs (stated in the table's notes): the cube's mac test
// uses the mac threshold (msprof-analyze's second test compares mac with the
// MTE2 threshold, 0.95); batched (3-D or more) ND matmuls are judged by their
// last dimensions (msprof-analyze calls them not affine); the forward FA's
// MTE2 bound is called MTE2 (its rule file names it "mac"); a grad's shapes
// are not judged for affinity.
struct FamilyVerdict {
  std::string family;  // "cube", "FlashAttention", "FlashAttention grad", "vector"
  std::string name, type, shapes, dtype;  // shapes: "in->out"
  int64_t count = 0, total_ns = 0;
  std::string verdict;   // "not affine", "bound", "room to optimise"
  std::string detail;    // the bound's pipes, the axes, or the gap
  double gap_pct = 0;    // room to optimise: the largest gap to a threshold, in points
  std::string evidence;  // the mean ratios
};

// A run of operators that recurs in the device's task order and is worth
// fusing, as msprof-analyze's advisor looks for them (its rules/en/
// fusible_operator.yaml and FusibleOperatorChecker): 2 to 10 consecutive
// compute tasks (no communication or AI CPU task among them) with the same
// names and shapes each time, recurring more than 5 times, either host-bound
// (for more than 60% of the span from the run's first start to its last end,
// the AI Cores compute nothing and the next operator waits for no other task
// (none ends within kFusibleDependencyNs before it starts): it waits for the
// host to dispatch it; single-operator mode only: a graph model's tasks are
// launched with their graph) or MTE-bound (data movement, MTE2
// plus MTE3 or fixpipe, over 80% of the cores' time), taking 1% or more of
// the tasks' span where only host-bound. Counted without overlaps: no task
// belongs to two reported runs (fusible_sequences.h: where and why opscope
// differs from msprof-analyze).
// msprof-analyze's fusible_operator.yaml.
inline constexpr int kFusibleMinLength = 2, kFusibleMaxLength = 10;
inline constexpr int64_t kFusibleMinCount = 6;  // "more than 5" (sequence_count_threshold)
inline constexpr double kFusibleHostShare = 0.4, kFusibleMteShare = 0.8;
inline constexpr double kFusibleSpanShare = 0.01;  // sequence_duration_threshold
// A gap that ends within this of another task's end waits for that task.
inline constexpr int64_t kFusibleDependencyNs = 50'000;
// The runs the search keeps while counting, at most (about 80 bytes each);
// past it, new runs are not recorded and the table says so.
inline constexpr size_t kFusibleMaxRuns = size_t{1} << 21;

struct FusibleSequence {
  std::string operators;  // "Name [in->out shapes] -> Name [...] -> ..."
  int length = 0;         // operators in the run
  int64_t count = 0;      // occurrences, none sharing a task with another run
  int64_t first_row = 0;  // the first occurrence's first task: its data row, from 0, in file order
  int64_t first_start_ns = 0;
  int64_t wall_ns = 0;    // summed over the occurrences: first start to last end
  int64_t device_ns = 0;  // the tasks' summed durations
  int64_t idle_ns = 0;    // the part of wall_ns spent waiting for the host (above)
  double mte_share = -1;  // summed MTE time over summed core time; -1 not recorded
  bool host_bound = false, mte_bound = false;
};
// What a run puts at stake, the most fusing it could save: the idle time
// between its operators where it is host-bound, and its operators' device
// time where it is MTE-bound (both where both). Runs are ranked by it.
inline int64_t FusibleStake(const FusibleSequence& f) {
  return (f.host_bound ? f.idle_ns : 0) + (f.mte_bound ? f.device_ns : 0);
}

struct PipeTable {
  std::string source;  // the file the counters came from
  std::string l2_source;
  int64_t tasks = 0;     // rows read
  int64_t task_ns = 0;   // their summed durations
  int64_t with_pmu = 0;  // rows with a pipe ratio
  bool has_pmu_columns = false;
  // The AI Cores' clock the AI_CORE tasks' cycles, time and block counts
  // imply (MHz = aic_total_cycles / (aicore_time(us) x Block Dim): the clock
  // the producer converted cycles to time with), their median; 0 where the
  // form lacks one of the three. How many tasks gave one, and how many lie
  // within 1% of the median.
  double implied_core_mhz = 0;
  int64_t clock_tasks = 0, clock_tasks_agreeing = 0;
  std::vector<OpPipes> ops;             // by total time, descending; only ops with ratios
  std::vector<FamilyVerdict> families;  // by family, then total time, descending
  // Runs of operators worth fusing, by FusibleStake, descending; the span of
  // the tasks they were sought in (the first task's start to the last end),
  // whether the form records MTE times (the MTE-bound test needs them), and
  // whether the search stopped recording new runs at its memory bound.
  std::vector<FusibleSequence> fusible;
  int64_t sequence_span_ns = 0;
  bool sequence_mte_columns = false, sequence_capped = false;
};

// ---- Memory --------------------------------------------------------------------

struct MemoryHolder {
  std::string name;  // the operator that allocated
  int64_t blocks = 0, bytes = 0;
};

struct MemoryComponent {
  std::string component;  // the allocator or framework layer ("PTA", "GE", "APP", ...)
  int64_t peak_allocated_bytes = -1, peak_reserved_bytes = -1;
  int64_t peak_reserved_ns = -1;
};

// A memory pool of the allocator as a snapshot left it (PyTorch's caching
// allocator: "large" and "small" segments): what it reserved from the device,
// what tensors hold, and the cached free blocks, the largest among them.
struct MemoryPool {
  std::string pool;
  int64_t segments = 0, reserved_bytes = 0, allocated_bytes = 0;
  int64_t active_bytes = 0;  // allocated, and freed blocks still awaiting their streams
  int64_t free_bytes = 0, free_blocks = 0, largest_free_bytes = 0;
};

// An allocation the allocator could not serve (an out-of-memory error).
struct MemoryOom {
  int64_t ns = -1;                 // when, where recorded
  int64_t bytes = 0;               // what was asked for
  int64_t device_free_bytes = -1;  // what the device had free then, where recorded
  int64_t allocated_bytes = -1, reserved_bytes = -1;  // the allocator's totals then
  std::string site;
};

// The allocations of a run's window: how high memory went, when, and which
// operators held it at that moment.
struct ReportedMemory {
  std::string source, record_source;
  std::string device = "NPU";   // whose memory: "NPU", "GPU 0"
  int64_t blocks = 0;           // allocations in the window (positive sizes)
  int64_t before_window = 0;    // blocks allocated before the window (released in it)
  int64_t allocated_bytes = 0;  // the window's allocations summed
  // The highest total allocated and when, with the operator whose allocation
  // reached it, and the reserved total then.
  int64_t peak_allocated_bytes = -1, peak_ns = -1, peak_reserved_bytes = -1;
  std::string peak_operator;
  // Blocks of the window live at the peak (allocated at or before it, not yet
  // released), per operator, the largest first; and their sum.
  std::vector<MemoryHolder> live_at_peak;
  int64_t live_at_peak_bytes = 0;
  // Every operator's allocations in the window, the largest total first.
  std::vector<MemoryHolder> by_operator;
  std::vector<MemoryComponent> components;  // over time, per component, by name
  // What holds memory: "operator" (the framework operator around the
  // allocation), "allocation site" (the innermost user frame of its stack).
  std::string holder = "operator";
  // True where the producer also gave the state before the window (a
  // snapshot's segments): live_at_peak then covers the whole peak, blocks
  // allocated before the window included.
  bool whole_state = false;
  std::vector<MemoryPool> pools;  // at the end (a snapshot's segments); empty: not given
  std::vector<MemoryOom> ooms;
  // Sentences the reader adds to the peak table (what it could not use).
  std::vector<std::string> notes;
};

// ---- Summaries ------------------------------------------------------------------

// Per operator type (or collective type) and core type: the producer's own
// totals, to set beside the timeline's.
struct ReportedTypeStat {
  std::string device;  // empty when not recorded
  std::string op_type;
  std::string core_type;  // the core that ran it (AI_CORE, AI_CPU, ...); empty for collectives
  int64_t count = -1;
  int64_t total_ns = -1, min_ns = -1, avg_ns = -1, max_ns = -1;
  double ratio_pct = -1;  // the type's share of the file's total, as the file says
};

// Host API calls per level (acl, runtime, node, model, communication).
struct ReportedApiStat {
  std::string device;  // "host" for host APIs; empty when not recorded
  std::string level;
  std::string api;
  int64_t total_ns = -1, count = -1, avg_ns = -1, min_ns = -1, max_ns = -1;
};

// A framework operator as the producer summed it (over input shapes and call
// stacks): its host and device time.
struct ReportedOp {
  std::string name;
  int64_t rows = 0;
  int64_t host_self_ns = 0, host_total_ns = 0;
  int64_t device_self_ns = 0, device_total_ns = 0;
  int64_t device_self_aicore_ns = 0, device_total_aicore_ns = 0;  // on the matrix cores
};

// The highest value a memory series reached, and when.
struct ReportedMemoryPeak {
  std::string device;
  std::string name;  // the component, or the event and kind ("app hbm")
  int64_t peak_bytes = -1, peak_ns = -1;
  int64_t samples = 0;
};

// A graph-mode iteration.
struct ReportedIteration {
  std::string device, model_id, iteration;
  int64_t iteration_ns = -1;
  int64_t fp_to_bp_ns = -1;  // forward and backward
  int64_t refresh_ns = -1;   // the update after backward
  int64_t data_aug_ns = -1;  // waiting for data before forward
};

// A rank's summaries, each with the file it came from; empty where the rank
// has no such file.
struct ReportedSummaries {
  std::vector<ReportedTypeStat> op_types;
  std::string op_types_source;
  std::vector<ReportedTypeStat> communication_types;
  std::string communication_types_source;
  std::vector<ReportedApiStat> apis;
  std::string apis_source;
  std::vector<ReportedOp> framework_ops;
  std::string framework_ops_source;
  std::vector<ReportedMemoryPeak> module_memory;
  std::string module_memory_source;
  std::vector<ReportedMemoryPeak> device_memory;
  std::string device_memory_source;
  std::vector<ReportedIteration> iterations;
  std::string iterations_source;
};

// ---- The chip -------------------------------------------------------------------

// The chip as the run recorded it, and the peaks its reader works out from
// that (cores x clock x work per core cycle), which replace the datasheet's
// for those data types.
struct ReportedChip {
  std::string source;    // the file
  int cores = 0;         // compute cores of the kind the peaks are for
  int vector_cores = 0;  // AI Vector cores (info.json's aiv_num); 0 not recorded
  double core_mhz = 0;
  std::string core_kind;                           // what the cores are ("AI Core")
  std::map<std::string, double> flops_per_second;  // by dtype ("fp16", "bf16", "int8")
  std::string derivation;  // how the peaks follow, in figures, with the formula's source
};

// A sample of the AI Core's clock (torch_npu's "AI Core Freq" counter in
// trace_view.json, msprof's AICORE_FREQ table): from `ns` until the next
// sample the cores ran at `mhz`.
struct ReportedClockSample {
  int64_t ns = 0;
  double mhz = 0;
};

// ---- How the run was recorded ----------------------------------------------------

// ---- All of them ----------------------------------------------------------------

struct ReportedTables {
  std::vector<ReportedStep> steps;
  std::vector<ReportedCollective> collectives;
  std::vector<ReportedLink> links;
  std::vector<ReportedGroup> groups;
  std::optional<PipeTable> pipes;
  std::optional<ReportedMemory> memory;
  ReportedSummaries summaries;
  std::optional<ReportedChip> chip;
  std::vector<ReportedClockSample> core_clock;  // by time
  // The environment variables the producer recorded for the run, as written
  // (profiler_metadata.json's ENV_VARIABLES; "" a variable that was unset).
  std::vector<std::pair<std::string, std::string>> environment;
  std::string environment_source;
  // What a side-file reader keeps in a type of its own file, by the reader's
  // name (side_files.h: SideFileReader::tables shows it), so a new reader
  // changes no shared header: importers/ascend/profiler_info.h.
  Slots own;
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_REPORTED_H_
