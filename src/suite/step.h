// What one step of the suite gives: its tables, and why its figures cannot be
// trusted when some of its cases failed verification (the tables still show
// which). Every `opscope` command that measures is one step: the command line
// maps its flags to the step's options, and `opscope run` calls the same steps.
#ifndef OPSCOPE_SUITE_STEP_H_
#define OPSCOPE_SUITE_STEP_H_

#include <string>
#include <vector>

#include "report/result_table.h"

namespace opscope::suite {

struct StepOutput {
  std::vector<report::ResultTable> tables;
  std::string failure;  // empty when every case passed
};

// A note for the head of a benchmark's table: how busy other processes kept the
// machine over the 200 ms before it started, a warning above
// monitor::kBusyPercent (the figures are then doubtful).
struct BusyBefore {
  std::string note;
  bool busy = false;
  // Appended to a table's title when busy, so the warning heads the output.
  std::string TitleSuffix() const {
    return busy ? " -- WARNING: the machine was busy before the run (see the notes)" : "";
  }
};
BusyBefore MeasureBusyBefore();

}  // namespace opscope::suite

#endif  // OPSCOPE_SUITE_STEP_H_
