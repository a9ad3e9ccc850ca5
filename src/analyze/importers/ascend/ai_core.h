// The AI Core pipeline of each Ascend operator, from the PMU columns that
// kernel_details.csv (torch_npu) and op_summary_*.csv (msprof) carry when the
// run collected aic_metrics=PipeUtilization (docs/formats/ascend.md, 3.2 and 5.1.2), and the
// L2 cache rates of l2_cache.csv (docs/formats/ascend.md, 3.10).
//
// Each `*_ratio` column is the share of a core's cycles spent in one pipe's
// instructions (CANN's PipeUtilization reference): aic_* on the cube core
// (mac/cube, scalar, MTE1 L1->L0A/L0B, MTE2 GM->AI Core, fixpipe L0C->GM/L1),
// aiv_* on the vector core (vec, scalar, MTE2, MTE3 AI Core->GM). A core's
// ratios count only for tasks that ran on it (its total cycles, or else its
// time, above 0): an AI_VECTOR_CORE task writes 0.0 in every aic_* column.
//
// The bound verdict follows msprof-analyze's advisor: a pipe at 80% or more of
// the cycles bounds the operator ("mte2 ratio is more than 80%"), and an
// operator of 20 us or more whose every pipe is below 80% is bound by none of
// them ("operator no bound"): it waits (latency, dependencies, too few blocks).
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_AI_CORE_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_AI_CORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/reported.h"
#include "analyze/source.h"

namespace opscope::analyze {

// One task's fields for the builder below (views valid during Add).
struct PipelineTask {
  std::string_view name, type, core, stream, task;
  int64_t dur_ns = 0;
  int64_t start_ns = -1;   // -1 unknown: the task is then in no fusible run (PipeTable::fusible)
  double blocks = -1;      // Block Dim / Block Num; -1 unknown
  double mix_blocks = -1;  // Mix Block Dim / Mix Block Num (a MIX task's vector blocks); -1
  // The name's id where the caller interns names (a trace model's): the
  // operator is then found by it, not by its text. UINT32_MAX: none.
  uint32_t name_id = UINT32_MAX;
  // Input and output shapes as "in->out" (AscendInOut of the Input and
  // Output Shapes columns, each "d,d;d,d"), the data types the same way; ""
  // unknown: the task is then in no family verdict (reported.h).
  std::string_view shapes, dtype;
  uint32_t shapes_id = UINT32_MAX;  // the shapes' id where the caller interns them, as name_id
  // A task of a graph model (a Model ID other than the single-operator one):
  // the host launched the graph, not this operator (no fusible run of such
  // tasks is host-bound).
  bool in_graph = false;
};

// Whether a task's Model ID (op_summary's and kernel_details' Model ID,
// TASK.modelId) is a graph model's: present (not negative) and not
// 4294967295, the id of an operator run on its own (docs/formats/ascend.md).
inline bool InGraphModel(double model_id) { return model_id >= 0 && model_id != 4294967295.0; }

// The per-operator accumulation behind ReadAiCorePipeline, for every form that
// carries PMU metrics (kernel_details.csv, op_summary, the SQLite export's
// TASK_PMU_INFO): `columns` are the metric names present, their time columns
// named with `time_suffix` ("(us)" in the CSVs, "" in the database).
class AiCorePipelineBuilder {
 public:
  AiCorePipelineBuilder(std::string source, const std::vector<std::string>& columns,
                        std::string_view time_suffix);
  ~AiCorePipelineBuilder();
  void ReadL2(Source& l2_cache);
  // `value(column)`: the task's text for a metric ("" or "N/A": absent);
  // `where()`: the task's place for errors ("kernel_details.csv: line 7").
  void Add(const PipelineTask& task, const std::function<std::string_view(std::string_view)>& value,
           const std::function<std::string()>& where);
  // The same for a CSV record: the metrics' columns are found once by
  // BindColumns (`index_of(name)`: the column, SIZE_MAX when absent), then read
  // from `fields` (trimmed here) by position.
  void BindColumns(const std::function<size_t(std::string_view)>& index_of);
  void AddFields(const PipelineTask& task, const std::vector<std::string_view>& fields,
                 const std::function<std::string()>& where);
  // AddFields in two halves, for parsers running at once: a record's metrics
  // as Slots() numbers (NaN: absent), a ratio that is not a share of cycles
  // thrown as an error naming `where` (const: any thread may call it once
  // the columns are bound); then the task added with them, in file order.
  size_t Slots() const;
  void ParseFields(const std::vector<std::string_view>& fields, double* values,
                   const std::function<std::string()>& where) const;
  void AddParsed(const PipelineTask& task, const double* values);
  PipeTable Finish();

 private:
  struct Impl;
  // `value(slot)` gives the text of one of the metrics the builder reads
  // (slots numbered in Impl).
  template <typename Value>
  void ParseWith(const Value& value, double* values,
                 const std::function<std::string()>& where) const;
  std::unique_ptr<Impl> impl_;
};

// A number as Ascend's CSVs write it ("0.552", "2910056", "1e-3"); false for
// anything else, N/A and empty included.
bool ParseAscendNumber(std::string_view text, double& value);

// Throws Error(kInvalidInput) naming the file, line and column of a ratio that
// is not a number in [0, 1.5] (or N/A), or a header without Name and Duration.
// `l2_cache` may be null.
PipeTable ReadAiCorePipeline(Source& kernel_details, Source* l2_cache);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_AI_CORE_H_
