// Analysis pass "launch": Is the device waiting on kernel launches?
//
// Launch-bound is concluded only when all of these hold (each is evidence):
//  1. at least kMinKernels kernels, with a median under kShortKernelNs;
//  2. the device is busy under kMaxBusyPct of its window;
//  3. kernels start soon after their launch call: the median launch-to-start
//     delay is under kMaxDelayNs (a long delay means the queue is full: the
//     device, not the launches, is the bottleneck); without correlated launches
//     this cannot be checked and the rule does not fire;
//  4. during the device's idle time the traced host is busy at least
//     kMinHostBusyPct of it, and launch calls take at least kMinLaunchPct;
//  5. compilation/warm-up does not cover kMaxCompilePct or more of the idle
//     time (that is its own cause).
// `reason` says which precondition failed, or the evidence when all hold.
#ifndef OPSCOPE_ANALYZE_PASSES_LAUNCH_H_
#define OPSCOPE_ANALYZE_PASSES_LAUNCH_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct LaunchRules {
  int64_t min_kernels = 100;
  int64_t short_kernel_ns = 10000;
  double max_busy_pct = 50;
  int64_t max_delay_ns = 50000;
  double min_host_busy_pct = 50;
  double min_launch_pct = 10;
  double max_compile_pct = 25;
};

struct LaunchBound {
  int64_t kernels = 0;
  int64_t median_kernel_ns = 0;
  double busy_pct = 0;
  // Launch call to kernel start (by correlation id), else host-to-device flow
  // start to its first task's start (Ascend); -1: unknown.
  int64_t launch_delay_p50_ns = -1, launch_delay_p90_ns = -1;
  // Launches paired with their work, and those whose work starts before them
  // (the clocks disagree): left out of the delays, all of them when most are.
  int64_t launch_pairs = 0, backward_pairs = 0;
  int64_t idle_ns = 0;                // device idle time inside its window
  double host_busy_in_idle_pct = -1;  // traced host work during device idle time
  double launch_in_idle_pct = -1;     // launch calls during device idle time
  double compile_in_idle_pct = -1;    // compilation/warm-up during device idle time
  bool launch_bound = false;
  std::string reason;
};

LaunchBound ComputeLaunchBound(const TraceModel& model, double busy_pct,
                               const LaunchRules& rules = {});

// Its entry in the pass table (with its table and rule); its result is its
// slot of Analysis::results (no kernels where the compute device is the CPU).
inline constexpr std::string_view kLaunchPass = "launch";
Pass LaunchPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_LAUNCH_H_
