// An analysis pass: one question about a trace, answered from the trace model
// (and the results of the passes it names in `needs`) into its own fields of
// Analysis. Each pass lives in one file of this folder and is registered in
// registry.cc; the pipeline (analyze/pipeline.h) runs them, several at once
// where their needs allow. A pass reads the model and its needs' results only,
// and writes only its own fields, so passes never race.
#ifndef OPSCOPE_ANALYZE_PASSES_PASS_H_
#define OPSCOPE_ANALYZE_PASSES_PASS_H_

#include <string_view>
#include <vector>

#include "analyze/trace_model.h"

namespace opscope::analyze {

struct Analysis;

struct Pass {
  std::string_view name;                // a stable key: "device_busy"
  std::string_view question;            // what it answers, for docs and --help
  std::vector<std::string_view> needs;  // passes whose results it reads
  void (*run)(const TraceModel& model, Analysis& analysis);
};

// Every pass, in registration order.
const std::vector<Pass>& Passes();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_PASS_H_
