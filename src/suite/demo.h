// `opscope demo` as a step: a built-in multi-threaded workload profiled end to
// end with the public API (steps, scopes with arguments, counters, flows), its
// trace written by the profiler's default handler.
#ifndef OPSCOPE_SUITE_DEMO_H_
#define OPSCOPE_SUITE_DEMO_H_

#include <optional>
#include <string>

#include "opscope/opscope.h"
#include "suite/step.h"

namespace opscope::suite {

struct DemoOptions {
  int threads = 2;  // 1..256
  int steps = 5;    // 1..100000
  int size = 96;    // N of each step's N^3 matmul, 1..2048
  std::string output_dir = "opscope-report";
  std::optional<Schedule> schedule;
  bool gzip = false;
};

// Throws Error(kInvalidArgument) naming the option out of its range.
StepOutput Demo(const DemoOptions& options);

// "wait=1,warmup=1,active=2,repeat=1" (keys skip_first, wait, warmup, active,
// repeat); throws Error(kInvalidArgument) naming --schedule.
Schedule ParseSchedule(const std::string& text);

}  // namespace opscope::suite

#endif  // OPSCOPE_SUITE_DEMO_H_
