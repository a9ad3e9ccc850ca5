// An analysis pass: one question about a trace, answered from the trace model
// (and the results of the passes it names in `needs`) into its own result:
// its slot of Analysis::results, or for the few results most others read, a
// field of analysis.h. With its result a pass brings the tables it
// contributes to the report and the advisor rules that read it, so that one
// analysis is one file (passes/host_waits.cc, passes/launch.cc). Each pass is
// registered in registry.cc; the pipeline (analyze/pipeline.h) runs them,
// several at once where their needs allow. A pass reads the model and its
// needs' results only, and writes only its own result, so passes never race.
#ifndef OPSCOPE_ANALYZE_PASSES_PASS_H_
#define OPSCOPE_ANALYZE_PASSES_PASS_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/rule.h"
#include "analyze/table_context.h"
#include "analyze/trace_model.h"
#include "core/result_table.h"

namespace opscope::analyze {

struct Analysis;

struct Pass {
  std::string_view name;                // a stable key: "device_busy"
  std::string_view question;            // what it answers, for docs and --help
  std::vector<std::string_view> needs;  // passes whose results it reads
  void (*run)(const TraceModel& model, Analysis& analysis);
  // The tables it contributes to `opscope analyze` (terminal, JSON, CSV,
  // HTML, Python), in the passes' order after each trace's findings; not
  // called when the pass did not run. Values in the columns' base units
  // (core::Column). Null: none.
  void (*tables)(const Analysis& analysis, const TableContext& context,
                 std::vector<core::ResultTable>& out) = nullptr;
  // The advisor rules that read its result (advisor.h applies them all).
  std::vector<Rule> rules = {};
  // A result only the passes that need it read (a column the size of the
  // trace, in its slot of Analysis::results): the pipeline drops it once they
  // have all finished, so it is not held through the rest of the analysis.
  bool scratch = false;
};

// Every pass, in registration order.
const std::vector<Pass>& Passes();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_PASS_H_
