// Comparing two traces of the same program as a measurement: did it get
// slower beyond the noise between steps, and where.
#ifndef OPSCOPE_ANALYZE_DIFF_H_
#define OPSCOPE_ANALYZE_DIFF_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/passes/op_stats.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct OpDelta {
  std::string name;
  EventClass cls;
  int64_t before_count = 0, after_count = 0;
  int64_t before_ns = 0, after_ns = 0;  // total time
  std::string change;     // "added", "removed", "faster", "slower", "same" (within 2%)
  double change_pct = 0;  // of the before total; 0 when added or removed
};

// A framework operator (by name, or by name and input shapes) on both sides,
// with the device time it caused (passes/op_device.h): the unit that compares
// across devices and vendors, whose kernels differ in name.
struct FrameworkOpDelta {
  std::string name, shapes;  // shapes "" in the by-name list
  int64_t before_calls = 0, after_calls = 0;
  int64_t before_device_ns = 0, after_device_ns = 0;              // device self
  int64_t before_device_total_ns = 0, after_device_total_ns = 0;  // with nested operators
  int64_t before_host_ns = 0, after_host_ns = 0;                  // host self
  std::string before_kernels, after_kernels;                      // the kernels behind it
  std::string change;  // "added", "removed", "faster", "slower", "same" (device self, 2%)
  double change_pct = 0;
};

// Device time of one class on each side: compute kernels, communication
// kernels, memory (copies and sets), idle (the compute window less busy time).
struct ClassDelta {
  std::string cls;
  int64_t before_ns = 0, after_ns = 0;
};

// Fewer complete steps than this on either side: no noise estimate.
inline constexpr int kMinStepsForInterval = 3;

struct TraceDiff {
  // What "time" means: "median complete step" when both traces have complete
  // steps (passes/steps.h: only steps of status complete), else "trace span".
  std::string basis;
  int64_t before_ns = 0, after_ns = 0;
  double change_pct = 0;                               // positive: slower
  int64_t before_steps = 0, after_steps = 0;           // complete steps compared
  int64_t before_all_steps = 0, after_all_steps = 0;   // every step span
  std::vector<int64_t> before_step_ns, after_step_ns;  // the complete steps, in order
  // With kMinStepsForInterval complete steps on each side: a 95% bootstrap
  // confidence interval of the change of the median (2000 resamples, fixed
  // seed) and the two-sided Mann-Whitney U test's p-value (MannWhitneyP).
  bool has_interval = false;
  double ci_low_pct = 0, ci_high_pct = 0;
  double p_value = -1;
  std::string verdict;  // "slower", "faster", "no change beyond noise", "noise unknown: ..."
  std::vector<OpDelta> operators;  // the largest absolute change first
  // The devices each trace names ("" unknown); when they differ (or one is
  // unknown and the other not), every figure compares the devices as well as
  // the program, and `devices_note` says so.
  std::string before_device, after_device;
  bool devices_differ = false;
  std::string devices_note;
  // Time by class on the compute device; on the CPU when neither trace has
  // device work (on_cpu), the operators' time (a trace's own scopes where it
  // records nothing else).
  bool on_cpu = false;
  std::vector<ClassDelta> by_class;
  // Framework operators matched by name, and by name and input shapes: the
  // largest absolute change of device self time first (host self where
  // neither side has device work).
  std::vector<FrameworkOpDelta> framework_ops, framework_ops_by_shape;
};

TraceDiff DiffTraces(const TraceModel& before, const TraceModel& after);

// The statistics alone, on two samples of step times.
void CompareSamples(const std::vector<int64_t>& before, const std::vector<int64_t>& after,
                    TraceDiff& d);
// The two-sided Mann-Whitney U test's p-value: exact for up to
// kExactMannWhitneyMax values in all (every split of the pooled mid-ranks
// enumerated, ties included: at most C(20, 10) = 184,756), else the normal
// approximation with continuity and tie corrections.
inline constexpr size_t kExactMannWhitneyMax = 20;
double MannWhitneyP(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// Whether the gate `--fail-if-slower threshold_pct` fails: the change is above
// the threshold and, when the noise is known, the whole confidence interval is
// above zero (a slowdown beyond noise).
bool Regressed(const TraceDiff& d, double threshold_pct);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_DIFF_H_
