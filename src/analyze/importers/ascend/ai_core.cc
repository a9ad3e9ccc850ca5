#include "analyze/importers/ascend/ai_core.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <unordered_map>

#include "analyze/importers/ascend/ai_core_families.h"
#include "analyze/importers/ascend/fusible_sequences.h"
#include "analyze/importers/ascend/kernel_details_importer.h"
#include "analyze/importers/csv_reader.h"
#include "analyze/importers/timestamps.h"
#include "analyze/names.h"
#include "opscope/opscope.h"

namespace opscope::analyze {

namespace {

// Which core a PMU column describes: A2/A3 parts prefix aic_ (cube core) or
// aiv_ (vector core); older parts have one unprefixed set (docs/formats/ascend.md, 5.1.2).
enum class Core { kCube, kVector, kSingle };

struct PipeColumn {
  AiCorePipe pipe;
  Core core;
  const char* name;
};

// The times the fusible-run search reads (fusible_sequences.h), without the
// form's unit suffix, each with the name older single-core parts give it:
// data movement (MTE2 on either core; fixpipe or MTE3 out), then the cores'
// times. A task's MTE time is its larger MTE2 plus its larger way out, as
// msprof-analyze's FusibleOperatorChecker adds them; its core time the
// larger of the two cores'.
constexpr std::array<std::pair<const char*, const char*>, 6> kSequenceColumns = {{
    {"aic_mte2_time", "mte2_time"},
    {"aiv_mte2_time", ""},
    {"aic_fixpipe_time", "fixpipe_time"},
    {"aiv_mte3_time", "mte3_time"},
    {"aicore_time", ""},
    {"aiv_time", ""},
}};

// "mac" is the cube pipe's name in PipeUtilization; CANN's operator tools call
// the same cycles "cube" (aic_cube_ratio).
constexpr PipeColumn kPipeColumns[] = {
    {AiCorePipe::kCube, Core::kCube, "aic_mac_ratio"},
    {AiCorePipe::kCube, Core::kCube, "aic_cube_ratio"},
    {AiCorePipe::kCube, Core::kSingle, "mac_ratio"},
    {AiCorePipe::kVector, Core::kVector, "aiv_vec_ratio"},
    {AiCorePipe::kVector, Core::kSingle, "vec_ratio"},
    {AiCorePipe::kScalar, Core::kCube, "aic_scalar_ratio"},
    {AiCorePipe::kScalar, Core::kVector, "aiv_scalar_ratio"},
    {AiCorePipe::kScalar, Core::kSingle, "scalar_ratio"},
    {AiCorePipe::kMte1, Core::kCube, "aic_mte1_ratio"},
    {AiCorePipe::kMte1, Core::kSingle, "mte1_ratio"},
    {AiCorePipe::kMte2, Core::kCube, "aic_mte2_ratio"},
    {AiCorePipe::kMte2, Core::kVector, "aiv_mte2_ratio"},
    {AiCorePipe::kMte2, Core::kSingle, "mte2_ratio"},
    {AiCorePipe::kMte3, Core::kVector, "aiv_mte3_ratio"},
    {AiCorePipe::kMte3, Core::kSingle, "mte3_ratio"},
    {AiCorePipe::kFixpipe, Core::kCube, "aic_fixpipe_ratio"},
    {AiCorePipe::kFixpipe, Core::kSingle, "fixpipe_ratio"},
};

struct Sums {
  double weighted = 0, weight = 0;
  void Add(double value, double w) { weighted += value * w, weight += w; }
  double Mean() const { return weight > 0 ? weighted / weight : -1; }
};

struct OpAccumulator {
  std::string type, core;
  int64_t count = 0, total_ns = 0, measured = 0;
  Sums pipe[kAiCorePipes], cube_util, blocks, mix_blocks, l2_hit, l2_victim;
};

bool NotAvailable(std::string_view text) { return text.empty() || text == "N/A"; }

// A number as the CSV writes it; false for anything else (N/A included).
// Plain decimals of up to 15 digits ("0.552", "2910056") take the exact fast
// path: an integer below 2^53 divided by an exact power of ten is the correctly
// rounded value, the same double from_chars gives. Anything else goes to it.
bool ParseNumber(std::string_view text, double& value) {
  if (NotAvailable(text)) return false;
  {
    static constexpr double kPow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    size_t i = text[0] == '-' ? 1 : 0;
    int64_t mantissa = 0;
    int digits = 0, decimals = 0;
    bool dot = false, plain = i < text.size();
    for (; i < text.size() && plain; ++i) {
      const char c = text[i];
      if (c >= '0' && c <= '9') {
        mantissa = mantissa * 10 + (c - '0');
        decimals += dot;
        plain = ++digits <= 15;
      } else if (c == '.' && !dot) {
        dot = true;
      } else {
        plain = false;
      }
    }
    if (plain && digits > 0) {
      value = static_cast<double>(mantissa) / kPow10[decimals];
      if (text[0] == '-') value = -value;
      return true;
    }
  }
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && std::isfinite(value);
}

struct L2Rates {
  double hit = -1, victim = -1;
};

using L2Key = std::string;  // stream '\n' task '\n' name

L2Key KeyOf(std::string_view stream, std::string_view task, std::string_view name) {
  std::string key;
  key.reserve(stream.size() + task.size() + name.size() + 2);
  key.append(stream).push_back('\n');
  key.append(task).push_back('\n');
  key.append(name);
  return key;
}

// l2_cache.csv: [Device_id,] Stream Id, Task Id, Hit Rate, Victim Rate, Op Name.
// Task ids wrap in long runs, so rows of one (stream, task, name) are kept in
// order and handed to that key's kernels in order.
std::unordered_map<L2Key, std::deque<L2Rates>> ReadL2(Source& source) {
  const std::string& path = source.name();
  CsvReader csv(source);
  const CsvHeader header = ReadCsvHeader(csv, path);
  const size_t stream = header.Find("Stream Id"), task = header.Find("Task Id"),
               hit = header.Find("Hit Rate"), victim = header.Find("Victim Rate"),
               name = header.Find("Op Name");
  for (const auto& [col, what] :
       {std::pair{stream, "Stream Id"}, {task, "Task Id"}, {hit, "Hit Rate"}, {name, "Op Name"}}) {
    if (col == SIZE_MAX) {
      throw Error(ErrorCode::kInvalidInput, path + ": line 1: no '" + what + "' column");
    }
  }
  std::unordered_map<L2Key, std::deque<L2Rates>> out;
  std::vector<std::string> fields;
  while (header.NextRecord(csv, fields, path)) {
    L2Rates rates;
    const auto rate = [&](size_t col, const char* what) {
      double v = -1;
      if (col == SIZE_MAX || NotAvailable(TrimField(fields[col]))) return -1.0;
      // Victim Rate may exceed 1 on A2/A3 (docs/formats/ascend.md, 3.10); a negative or
      // non-numeric rate is a broken file.
      if (!ParseNumber(TrimField(fields[col]), v) || v < 0 || v > 100) {
        throw Error(ErrorCode::kInvalidInput,
                    fmt::format("{}: line {}: '{}' is not a rate: '{}'", path, csv.record_line(),
                                what, fields[col]));
      }
      return v;
    };
    rates.hit = rate(hit, "Hit Rate");
    rates.victim = rate(victim, "Victim Rate");
    out[KeyOf(TrimField(fields[stream]), TrimField(fields[task]), TrimField(fields[name]))]
        .push_back(rates);
  }
  return out;
}

void Judge(OpPipes& op) {
  int best = -1;
  for (int p = 0; p < kAiCorePipes; ++p) {
    if (op.ratio[p] >= 0 && (best < 0 || op.ratio[p] > op.ratio[best])) best = p;
  }
  if (best < 0) return;
  const auto pipe = static_cast<AiCorePipe>(best);
  std::string others;
  for (int p = 0; p < kAiCorePipes; ++p) {
    if (p == best || op.ratio[p] < 0) continue;
    others += fmt::format("{}{} {:.2f}", others.empty() ? "" : ", ",
                          Name(static_cast<AiCorePipe>(p)), op.ratio[p]);
  }
  const double mean_task_ns = op.count > 0 ? static_cast<double>(op.total_ns) / op.count : 0;
  if (op.ratio[best] >= kPipeBoundRatio) {
    switch (pipe) {
      case AiCorePipe::kCube: op.bound = "cube-bound"; break;
      case AiCorePipe::kVector: op.bound = "vector-bound"; break;
      case AiCorePipe::kScalar: op.bound = "scalar-bound"; break;
      default: op.bound = std::string("memory-bound (") + Name(pipe) + ")"; break;
    }
    op.evidence = fmt::format("{} {:.2f} of the cycles (>= {:.2f}){}{}", Name(pipe), op.ratio[best],
                              kPipeBoundRatio, others.empty() ? "" : "; ", others);
  } else if (mean_task_ns >= static_cast<double>(kNotBoundMinTaskNs)) {
    op.bound = "bound by no pipe";
    op.evidence = fmt::format(
        "every pipe below {:.2f} of the cycles (highest: {} {:.2f}{}{}) over a mean task of "
        "{:.1f} us: the cores wait (latency, dependencies, synchronisation){}",
        kPipeBoundRatio, Name(pipe), op.ratio[best], others.empty() ? "" : "; ", others,
        mean_task_ns / 1e3,
        op.mean_blocks >= 0 ? fmt::format("; {:.0f} blocks", op.mean_blocks) : std::string());
  } else {
    op.evidence = fmt::format(
        "highest pipe {} {:.2f} < {:.2f} and mean task {:.1f} us < {:.0f} us: too short to judge",
        Name(pipe), op.ratio[best], kPipeBoundRatio, mean_task_ns / 1e3, kNotBoundMinTaskNs / 1e3);
  }
}

// A task no fusible run crosses: communication or the AI CPU, by its core
// type or name (msprof-analyze's FusibleOperatorChecker: task types HCCL,
// COMMUNICATION and AI_CPU, names starting hcom, lccl or lcoc).
bool BreaksRuns(const PipelineTask& t) {
  for (const std::string_view v : {t.core, t.type}) {
    if (v == "AI_CPU" || v == "HCCL" || v == "COMMUNICATION") return true;
  }
  const std::string head = Lower(t.name.substr(0, 4));
  return head == "hcom" || head == "lccl" || head == "lcoc";
}

// The larger of two times, either NaN (not recorded).
double Larger(double a, double b) {
  if (std::isnan(a)) return b;
  return std::isnan(b) ? a : std::max(a, b);
}

}  // namespace

bool ParseAscendNumber(std::string_view text, double& value) { return ParseNumber(text, value); }

struct AiCorePipelineBuilder::Impl {
  struct Present {
    PipeColumn column;
    std::string name;
  };
  std::vector<Present> pipes;
  // Per core: the cycles column, else the time column, that says it ran ("" none).
  std::string cycles[3], time[3];
  // The metrics read per task, numbered: pipes[i] is slot i, then the cores'
  // cycles (kCycles + c) and times (kTime + c), then cube_utilization(%).
  size_t CyclesSlot(int c) const { return pipes.size() + static_cast<size_t>(c); }
  size_t TimeSlot(int c) const { return pipes.size() + 3 + static_cast<size_t>(c); }
  size_t CubeUtilSlot() const { return pipes.size() + 6; }
  // The cube core's time column beside its cycles column (the CSVs'
  // aicore_time(us)), read for the clock the two imply (ClockSample).
  size_t ClockTimeSlot() const { return pipes.size() + 7; }
  // The times the fusible-run search reads (kSequenceColumns), each slot ""
  // where the form lacks it.
  size_t SequenceSlot(int k) const { return pipes.size() + 8 + static_cast<size_t>(k); }
  std::array<std::string, kSequenceColumns.size()> sequence_column;
  const std::string cube_util_column = "cube_utilization(%)";
  std::string clock_time_column;  // "" where the form has no such pair
  int clock_core = -1;            // the core whose cycles slot pairs with it
  const std::string& SlotName(size_t slot) const {
    if (slot < pipes.size()) return pipes[slot].name;
    if (slot == CubeUtilSlot()) return cube_util_column;
    if (slot == ClockTimeSlot()) return clock_time_column;
    if (slot >= SequenceSlot(0)) return sequence_column[slot - SequenceSlot(0)];
    const size_t k = slot - pipes.size();
    return k < 3 ? cycles[k] : time[k - 3];
  }
  std::vector<size_t> slot_column;  // BindColumns: each slot's column, SIZE_MAX absent
  // The clock each AI_CORE task's cycles, time and blocks imply, in MHz:
  // how many tasks gave each (rounded) value.
  std::map<int64_t, int64_t> clock_mhz;
  std::map<std::string, OpAccumulator, std::less<>> ops;
  std::vector<OpAccumulator*> op_of_id;  // by PipelineTask::name_id
  std::unordered_map<L2Key, std::deque<L2Rates>> l2;
  PipeTable table;
  // The family rules' ratios (kFamilyRatioColumns): their slots, SIZE_MAX absent.
  std::array<size_t, kFamilyRatios> family_slot;
  AiCoreFamilies families;
  FusibleSequenceFinder fusible;
};

AiCorePipelineBuilder::AiCorePipelineBuilder(std::string source,
                                             const std::vector<std::string>& columns,
                                             std::string_view time_suffix)
    : impl_(std::make_unique<Impl>()) {
  impl_->table.source = std::move(source);
  const auto has = [&](const std::string& name) {
    return std::find(columns.begin(), columns.end(), name) != columns.end();
  };
  for (const PipeColumn& c : kPipeColumns) {
    if (has(c.name)) impl_->pipes.push_back({c, c.name});
  }
  impl_->table.has_pmu_columns = !impl_->pipes.empty();
  for (int k = 0; k < kFamilyRatios; ++k) {
    impl_->family_slot[k] = SIZE_MAX;
    for (size_t i = 0; i < impl_->pipes.size(); ++i) {
      if (impl_->pipes[i].name == kFamilyRatioColumns[k]) impl_->family_slot[k] = i;
    }
  }
  const std::pair<const char*, const char*> cores[3] = {{"aic_total_cycles", "aicore_time"},
                                                        {"aiv_total_cycles", "aiv_time"},
                                                        {"total_cycles", "aicore_time"}};
  for (size_t k = 0; k < kSequenceColumns.size(); ++k) {
    for (const char* name : {kSequenceColumns[k].first, kSequenceColumns[k].second}) {
      const std::string column = std::string(name) + std::string(time_suffix);
      if (*name != '\0' && impl_->sequence_column[k].empty() && has(column)) {
        impl_->sequence_column[k] = column;
      }
    }
  }
  const auto& seq = impl_->sequence_column;
  impl_->fusible.SetMteColumns(!seq[0].empty() && (!seq[2].empty() || !seq[3].empty()) &&
                               (!seq[4].empty() || !seq[5].empty()));
  for (int c = 0; c < 3; ++c) {
    const std::string time = std::string(cores[c].second) + std::string(time_suffix);
    if (has(cores[c].first)) {
      impl_->cycles[c] = cores[c].first;
      // The cube core's time in microseconds beside its cycles: the CSVs'
      // aicore_time(us) (docs/formats/ascend.md 3.2: the cycles over the
      // clock and the blocks). The database's time metrics carry no unit.
      if (c != 1 && time_suffix == "(us)" && has(time) && impl_->clock_core < 0) {
        impl_->clock_core = c;
        impl_->clock_time_column = time;
      }
    } else if (has(time)) {
      impl_->time[c] = time;
    }
  }
}

AiCorePipelineBuilder::~AiCorePipelineBuilder() = default;

void AiCorePipelineBuilder::ReadL2(Source& l2_cache) {
  impl_->l2 = ::opscope::analyze::ReadL2(l2_cache);
  impl_->table.l2_source = l2_cache.name();  // only once its rates are in
}

size_t AiCorePipelineBuilder::Slots() const {
  return impl_->SequenceSlot(static_cast<int>(kSequenceColumns.size()));
}

template <typename Value>
void AiCorePipelineBuilder::ParseWith(const Value& value, double* values,
                                      const std::function<std::string()>& where) const {
  const Impl& m = *impl_;
  const double absent = std::numeric_limits<double>::quiet_NaN();
  for (size_t slot = 0; slot < Slots(); ++slot) {
    values[slot] = absent;
    if (m.SlotName(slot).empty()) continue;  // a core without a cycles or time column
    const std::string_view t = value(slot);
    if (NotAvailable(t)) continue;
    double v = 0;
    const bool number = ParseNumber(t, v);
    if (slot < m.pipes.size()) {  // a ratio: a broken file when not a share of cycles
      if (!number || v < 0 || v > 1.5) {
        throw Error(ErrorCode::kInvalidInput,
                    fmt::format("{}: '{}' is not a share of cycles in [0, 1]: '{}'", where(),
                                m.SlotName(slot), t));
      }
    }
    if (number) values[slot] = v;  // cycles, times, cube utilisation: else as absent
  }
}

void AiCorePipelineBuilder::AddParsed(const PipelineTask& task, const double* values) {
  Impl& m = *impl_;
  ++m.table.tasks;
  if (task.start_ns >= 0) {
    const auto at = [&](int k) { return values[m.SequenceSlot(k)]; };  // NaN: absent
    const double in = Larger(at(0), at(1)), out = Larger(at(2), at(3));
    const double mte = std::isnan(in) && std::isnan(out)
                           ? std::numeric_limits<double>::quiet_NaN()
                           : (std::isnan(in) ? 0 : in) + (std::isnan(out) ? 0 : out);
    m.fusible.Add(task.name, task.shapes, task.start_ns, task.dur_ns, mte, Larger(at(4), at(5)),
                  BreaksRuns(task), task.name_id, task.shapes_id, task.in_graph);
  }
  // Ran on a core: its cycles (else its time) above zero; with neither
  // column, a ratio present is taken as measured.
  bool ran[3];
  for (int c = 0; c < 3; ++c) {
    if (!m.cycles[c].empty()) {
      ran[c] = values[m.CyclesSlot(c)] > 0;  // false for NaN
    } else if (!m.time[c].empty()) {
      ran[c] = values[m.TimeSlot(c)] > 0;
    } else {
      ran[c] = true;
    }
  }
  double ratio[kAiCorePipes];
  std::fill(std::begin(ratio), std::end(ratio), -1.0);
  bool any = false;
  for (size_t i = 0; i < m.pipes.size(); ++i) {
    const double v = values[i];
    if (std::isnan(v)) continue;
    const Impl::Present& p = m.pipes[i];
    if (!ran[static_cast<int>(p.column.core)]) continue;
    const int k = static_cast<int>(p.column.pipe);
    ratio[k] = std::max(ratio[k], std::min(v, 1.0));
    any = true;
  }
  OpAccumulator* found = nullptr;
  if (task.name_id < m.op_of_id.size()) found = m.op_of_id[task.name_id];
  if (found == nullptr) {
    auto it = m.ops.find(task.name);
    if (it == m.ops.end()) {
      it = m.ops.emplace(std::string(task.name), OpAccumulator{}).first;
      it->second.type = task.type == "N/A" ? "" : std::string(task.type);
      it->second.core = task.core == "N/A" ? "" : std::string(task.core);
    }
    found = &it->second;
    if (task.name_id != UINT32_MAX) {
      if (task.name_id >= m.op_of_id.size()) m.op_of_id.resize(task.name_id + 1, nullptr);
      m.op_of_id[task.name_id] = found;
    }
  }
  // The clock the task's cycles imply (MHz = cycles / (us x blocks)), for an
  // AI_CORE task that ran on a known number of blocks.
  if (m.clock_core >= 0 && task.core == "AI_CORE" && task.blocks > 0) {
    const double cycles = values[m.CyclesSlot(m.clock_core)];
    const double us = values[m.ClockTimeSlot()];
    if (cycles > 0 && us > 0) ++m.clock_mhz[std::llround(cycles / (us * task.blocks))];
  }
  OpAccumulator& op = *found;
  ++op.count;
  op.total_ns += task.dur_ns;
  m.table.task_ns += task.dur_ns;
  // Weighted by duration; a zero-length task still counts once.
  const double w = static_cast<double>(std::max<int64_t>(task.dur_ns, 1));
  if (task.blocks >= 0) op.blocks.Add(task.blocks, w);
  if (task.mix_blocks >= 0) op.mix_blocks.Add(task.mix_blocks, w);
  if (any) {
    ++op.measured;
    ++m.table.with_pmu;
    for (int k = 0; k < kAiCorePipes; ++k) {
      if (ratio[k] >= 0) op.pipe[k].Add(ratio[k], w);
    }
    const double util = values[m.CubeUtilSlot()];
    if (util >= 0) op.cube_util.Add(util, w);  // false for NaN
  }
  if (!task.shapes.empty()) {
    std::array<double, kFamilyRatios> family;
    for (int k = 0; k < kFamilyRatios; ++k) {
      family[k] = m.family_slot[k] == SIZE_MAX ? std::numeric_limits<double>::quiet_NaN()
                                               : values[m.family_slot[k]];
    }
    m.families.Add(task.name, task.type, task.core, task.shapes, task.dtype, task.dur_ns, family);
  }
  if (!m.l2.empty()) {
    const auto l2 = m.l2.find(KeyOf(task.stream, task.task, task.name));
    if (l2 != m.l2.end() && !l2->second.empty()) {
      const L2Rates r = l2->second.front();
      l2->second.pop_front();
      if (r.hit >= 0) op.l2_hit.Add(r.hit, w);
      if (r.victim >= 0) op.l2_victim.Add(r.victim, w);
    }
  }
}

void AiCorePipelineBuilder::Add(const PipelineTask& task,
                                const std::function<std::string_view(std::string_view)>& value,
                                const std::function<std::string()>& where) {
  std::vector<double> values(Slots());
  ParseWith([&](size_t slot) { return value(impl_->SlotName(slot)); }, values.data(), where);
  AddParsed(task, values.data());
}

void AiCorePipelineBuilder::BindColumns(const std::function<size_t(std::string_view)>& index_of) {
  Impl& m = *impl_;
  m.slot_column.assign(Slots(), SIZE_MAX);
  for (size_t slot = 0; slot < m.slot_column.size(); ++slot) {
    const std::string& name = m.SlotName(slot);
    if (!name.empty()) m.slot_column[slot] = index_of(name);
  }
}

void AiCorePipelineBuilder::ParseFields(const std::vector<std::string_view>& fields, double* values,
                                        const std::function<std::string()>& where) const {
  const std::vector<size_t>& column = impl_->slot_column;
  ParseWith(
      [&](size_t slot) {
        const size_t at = column[slot];
        return at < fields.size() ? TrimField(fields[at]) : std::string_view();
      },
      values, where);
}

void AiCorePipelineBuilder::AddFields(const PipelineTask& task,
                                      const std::vector<std::string_view>& fields,
                                      const std::function<std::string()>& where) {
  double values[64];
  std::vector<double> more;
  double* v = values;
  if (Slots() > 64) more.resize(Slots()), v = more.data();
  ParseFields(fields, v, where);
  AddParsed(task, v);
}

PipeTable AiCorePipelineBuilder::Finish() {
  Impl& m = *impl_;
  PipeTable table = std::move(m.table);
  m.fusible.Finish(table);
  // The median implied clock, and how many tasks lie within 1% of it.
  int64_t tasks = 0;
  for (const auto& [mhz, n] : m.clock_mhz) tasks += n;
  if (tasks > 0) {
    int64_t seen = 0;
    for (const auto& [mhz, n] : m.clock_mhz) {
      if ((seen += n) * 2 >= tasks) {
        table.implied_core_mhz = static_cast<double>(mhz);
        break;
      }
    }
    table.clock_tasks = tasks;
    for (const auto& [mhz, n] : m.clock_mhz) {
      if (std::abs(static_cast<double>(mhz) - table.implied_core_mhz) <=
          0.01 * table.implied_core_mhz) {
        table.clock_tasks_agreeing += n;
      }
    }
  }
  for (auto& [name, acc] : m.ops) {
    if (acc.measured == 0 && acc.l2_hit.weight == 0 && acc.l2_victim.weight == 0) continue;
    OpPipes op;
    op.name = name;
    op.type = acc.type;
    op.core = acc.core;
    op.count = acc.count;
    op.total_ns = acc.total_ns;
    op.measured = acc.measured;
    for (int k = 0; k < kAiCorePipes; ++k) op.ratio[k] = acc.pipe[k].Mean();
    op.cube_utilization_pct = acc.cube_util.Mean();
    op.mean_blocks = acc.blocks.Mean();
    op.mean_mix_blocks = acc.mix_blocks.Mean();
    op.l2_hit_rate = acc.l2_hit.Mean();
    op.l2_victim_rate = acc.l2_victim.Mean();
    Judge(op);
    table.ops.push_back(std::move(op));
  }
  std::stable_sort(table.ops.begin(), table.ops.end(),
                   [](const OpPipes& a, const OpPipes& b) { return a.total_ns > b.total_ns; });
  table.families = m.families.Finish(table.task_ns);
  return table;
}

PipeTable ReadAiCorePipeline(Source& kernel_details, Source* l2_cache) {
  const std::string& path = kernel_details.name();
  CsvReader csv(kernel_details);
  const CsvHeader header = ReadCsvHeader(csv, path);
  const auto find = [&](std::initializer_list<const char*> names) {
    for (const char* n : names) {
      if (const size_t at = header.Find(n); at != SIZE_MAX) return at;
    }
    return SIZE_MAX;
  };
  const size_t name_col = find({"Name", "Op Name"}),
               dur_col = find({"Duration(us)", "Task Duration(us)"}),
               type_col = find({"Type", "OP Type"}),
               core_col = find({"Accelerator Core", "Task Type"}), stream_col = find({"Stream ID"}),
               task_col = find({"Task ID"}), blocks_col = find({"Block Num", "Block Dim"}),
               mix_blocks_col = find({"Mix Block Num", "Mix Block Dim"}),
               in_shapes_col = find({"Input Shapes"}), out_shapes_col = find({"Output Shapes"}),
               in_types_col = find({"Input Data Types"}),
               out_types_col = find({"Output Data Types"});
  if (name_col == SIZE_MAX || dur_col == SIZE_MAX) {
    throw Error(ErrorCode::kInvalidInput,
                path +
                    ": line 1: no 'Name' and 'Duration(us)' columns (or op_summary's 'Op "
                    "Name' and 'Task Duration(us)')");
  }
  std::vector<std::string> columns;
  for (const auto& [name, at] : header.column) columns.push_back(name);
  AiCorePipelineBuilder builder(path, columns, "(us)");
  if (l2_cache != nullptr) builder.ReadL2(*l2_cache);
  builder.BindColumns([&](std::string_view name) { return header.Find(name); });
  std::vector<std::string_view> fields;
  while (header.NextRecord(csv, fields, path)) {
    const int line = csv.record_line();
    const auto text = [&](size_t col) {
      return col == SIZE_MAX ? std::string_view() : TrimField(fields[col]);
    };
    PipelineTask task;
    task.name = text(name_col);
    task.type = text(type_col);
    task.core = text(core_col);
    task.stream = text(stream_col);
    task.task = text(task_col);
    if (!MicrosToNs(text(dur_col), task.dur_ns) || task.dur_ns < 0) {
      throw Error(ErrorCode::kInvalidInput,
                  fmt::format("{}: line {}: '{}' is not a duration: '{}'", path, line,
                              header.Find("Duration(us)") != SIZE_MAX ? "Duration(us)"
                                                                      : "Task Duration(us)",
                              fields[dur_col]));
    }
    double blocks = 0;
    if (ParseNumber(text(blocks_col), blocks) && blocks >= 0) task.blocks = blocks;
    if (ParseNumber(text(mix_blocks_col), blocks) && blocks >= 0) task.mix_blocks = blocks;
    const std::string shapes =
        AscendInOut(AscendShapes(text(in_shapes_col)), AscendShapes(text(out_shapes_col)));
    const std::string dtype = AscendInOut(text(in_types_col), text(out_types_col));
    task.shapes = shapes, task.dtype = dtype;
    builder.AddFields(task, fields, [&] { return fmt::format("{}: line {}", path, line); });
  }
  return builder.Finish();
}

}  // namespace opscope::analyze
