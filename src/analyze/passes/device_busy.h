// Analysis pass "device_busy": Is the compute device busy, and what fills its
// idle gaps? The compute device is the trace's device when it records device
// work, otherwise the CPU threads that run operators (analyze/compute_device.h).
//
// A gap's cause, the first that holds:
//  - "data loading": a data-loading call covers half the gap or more;
//  - "compilation/warm-up": compilation or first-use set-up calls (ACL op
//    compile, torch.compile, module load, device memory allocation) cover
//    half the gap or more;
//  - "synchronization wait": a host call that waits covers half the gap;
//  - "host-bound": the traced host threads were busy half the gap or more;
//  - "host partly busy": busy 10-50% of the gap: part of the time is host work,
//    the rest is untraced (other processes, threads, or Python not traced);
//  - "no host activity": busy under 10% of the gap;
//  - "unknown": the trace records no host events.
// On the CPU the gaps are time between operators: "outside operators" (the
// interpreter and framework code between operators) unless data loading,
// compilation or a wait covers half of it.
#ifndef OPSCOPE_ANALYZE_PASSES_DEVICE_BUSY_H_
#define OPSCOPE_ANALYZE_PASSES_DEVICE_BUSY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/compute_device.h"
#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct IdleGap {
  int64_t begin_ns, duration_ns;
  std::string cause;     // one of the causes above
  std::string evidence;  // the host events behind the cause
  double host_busy_pct = 0;
};

struct DeviceBusy {
  bool has_device = false;          // a compute timeline exists (device or CPU)
  std::string compute_on = "none";  // "device" or "cpu"
  bool scopes_are_work = false;     // on the CPU, the annotation scopes (ScopesAreTheWork)
  int64_t window_begin_ns = 0, window_end_ns = 0;  // from the first to the last compute event
  int64_t busy_ns = 0;
  double busy_pct = 0;
  int64_t gap_ns = 0;                // idle time in gaps of at least min_gap_ns
  std::vector<IdleGap> gaps;         // the longest first
  std::vector<double> timeline_pct;  // busy % per equal slice of the window
  // Host time in compilation and first-use set-up, by kind ("torch.compile", ...).
  std::vector<std::pair<std::string, int64_t>> compile_ns;
  // Events whose category opscope does not understand: counted, never dropped quietly.
  std::vector<std::pair<std::string, int64_t>> unclassified;  // category -> events
};

// Gaps shorter than min_gap_ns are not listed; at most max_gaps are.
DeviceBusy ComputeDeviceBusyOn(const TraceModel& model, ComputeOn on, int64_t min_gap_ns = 50000,
                               size_t max_gaps = 10, int slices = 50);
// The same on the trace's own compute device (ComputeDeviceOf).
DeviceBusy ComputeDeviceBusy(const TraceModel& model, int64_t min_gap_ns = 50000,
                             size_t max_gaps = 10, int slices = 50);

// What to do about compilation or first-use set-up of `kind` (DeviceBusy::compile_ns).
std::string CompileAction(std::string_view kind);

// Its entry in the pass table, with its tables (the compute device, its idle
// gaps) and its rules (idle time, compilation, events not understood).
Pass DeviceBusyPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_DEVICE_BUSY_H_
