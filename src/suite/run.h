// `opscope run` as a library call: the whole suite on one device into one
// report folder (index.html, results.json, summary.csv, ceilings.json,
// traces/, analysis/). Each step is a function call of this library; the
// report names the equivalent `opscope` command line of each step, so every
// figure can be reproduced. A step that fails is reported and the run goes on.
#ifndef OPSCOPE_SUITE_RUN_H_
#define OPSCOPE_SUITE_RUN_H_

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace opscope::suite {

struct SuiteOptions {
  std::string device;  // empty: the best device present
  std::filesystem::path out = "opscope-report";
  bool quick = false;                     // small sizes: seconds, not a minute
  std::vector<std::string> extra_traces;  // analysed too (e.g. PyTorch's)
  // Called before and after each step (for progress on a terminal).
  std::function<void(size_t index, size_t count, const report::RunStep& step, bool done)> on_step;
};

struct SuiteResult {
  std::vector<report::RunStep> steps;
  std::filesystem::path index_html;
  int failed = 0;
};

// Throws before any step for an unknown device, a missing extra trace or an
// unwritable report folder; afterwards, failures are recorded in the steps.
SuiteResult RunSuite(const SuiteOptions& options);

}  // namespace opscope::suite

#endif  // OPSCOPE_SUITE_RUN_H_
