// The idle-vs-load comparison of `opscope monitor`, as a library call: sample
// every device during an idle baseline, then while a load runs, and report the
// mean of each metric in both phases. The load is anything that can run on a
// thread until told to stop: the built-in workload, or a program
// (RunProgramLoad). When the load records operators (cpu_op scopes), the busy
// share they cover per sampling window is reported next to the sampled figures.
#ifndef OPSCOPE_MONITOR_LOAD_COMPARISON_H_
#define OPSCOPE_MONITOR_LOAD_COMPARISON_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "monitor/sampler.h"

namespace opscope::monitor {

struct LoadComparisonOptions {
  int64_t idle_ns = 1000000000;
  int64_t duration_ns = 3000000000;  // the load's time (the most a program may run)
  int64_t interval_ns = 100000000;   // at least 10 ms
  std::string trace_path;            // counter tracks and operators, when not empty
};

struct Load {
  std::string description;         // "the built-in workload matmul:2048 fp32", "`sleep`"
  bool records_operators = false;  // its work is traced as cpu_op scopes
  // Runs on its own thread until `stop` is set (or it ends by itself); the
  // samplers may be pointed at a process it starts. Returns a note on the work
  // it completed. An exception ends the comparison with its error.
  std::function<std::string(const std::atomic<bool>& stop,
                            std::vector<std::unique_ptr<Sampler>>& samplers)>
      run;
};

struct MetricComparison {
  std::string metric;  // "cpu cpu_utilization_percent"
  std::optional<double> idle, loaded;
  std::string unit;
  std::string note;  // why there is no value, when there is none
};

struct LoadComparison {
  std::string title;
  std::optional<MetricComparison> trace_busy;  // with records_operators
  std::vector<MetricComparison> metrics;
  std::vector<std::string> notes;
  double loaded_seconds = 0;
  bool idle_was_busy = false;  // other processes used over kBusyPercent of the CPUs
};

// Throws Error(kInvalidArgument) for an interval under 10 ms, and what the
// load throws, after sampling has stopped.
LoadComparison CompareIdleAndLoad(const LoadComparisonOptions& options, const Load& load);

// A program as a load: started when the load phase begins, watched by the
// samplers, stopped with SIGTERM at `stop`. Its note says how it ended.
Load ProgramLoad(std::vector<std::string> argv);

}  // namespace opscope::monitor

#endif  // OPSCOPE_MONITOR_LOAD_COMPARISON_H_
