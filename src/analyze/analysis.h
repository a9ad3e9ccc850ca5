// The results of every analysis pass over one trace, and what the pipeline is
// given. The passes most others read (operators, device busy, steps, the
// operators' device time, the timeline) keep a field here; every other pass
// keeps its result type in its own header and its result in its slot of
// `results` (passes/pass.h), so an edit of such a pass rebuilds only what reads it.
#ifndef OPSCOPE_ANALYZE_ANALYSIS_H_
#define OPSCOPE_ANALYZE_ANALYSIS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "analyze/ceilings.h"
#include "analyze/compute_device.h"
#include "analyze/links.h"
#include "analyze/passes/device_busy.h"
#include "analyze/passes/op_device.h"
#include "analyze/passes/op_stats.h"
#include "analyze/passes/steps.h"
#include "analyze/passes/timeline.h"
#include "analyze/slots.h"

namespace opscope::analyze {

struct AnalysisOptions {
  // Measured ceilings (ceilings.json); without them, datasheet figures for a
  // device the trace names, else none (the roofline shows no bound).
  std::optional<RooflineCeilings> ceilings;
  // Passes run at once at most; 0: one per core.
  int threads = 0;
  // Only these passes and what they need (by name); empty: every pass.
  std::vector<std::string_view> passes;
};

// The results of the passes that keep their result type in their own file
// (passes/pass.h), one slot per pass by name. The pipeline makes every
// pass's slot before any runs, so a pass setting its own while others run
// changes no shared structure.
using PassResults = Slots;

struct Analysis {
  std::optional<RooflineCeilings> ceilings;  // resolved before any pass runs
  std::string ceilings_note;                 // why given ceilings were not used, or none apply
  std::string device;                        // the device the trace names ("" unknown)
  int compute_major = -1;                    // CUDA compute capability, -1 unknown
  std::string format;                        // the importer's format name
  bool pytorch = false;                      // RecordsPyTorch, resolved before any pass runs
  ComputeOn compute_on = ComputeOn::kNone;   // resolved before any pass runs
  // The program's work: SpanOf the trace less the profiler's own start and
  // stop at its edges (WorkSpanOf), resolved before any pass runs.
  TraceSpan span;
  int64_t profiler_ns = 0;              // what WorkSpanOf left out of the trace's span
  EventLinks links;                     // links: parents and launchers, shared
  std::vector<OpStats> operators;       // op_stats
  std::vector<TypeStats> kernel_types;  // op_stats: Ascend tasks by operator type
  OpDeviceTime op_device;               // op_device: operators with their device time
  DeviceBusy busy;                      // device_busy
  std::vector<StepBreakdown> steps;     // steps
  StepSummary step_summary;             // steps: the complete steps
  TimelineSummary timeline;             // timeline: a bounded summary to draw
  int64_t device_ns = 0;                // device_time: all device event time
  int64_t fp32_gemm_ns = 0;             // device_time: device time in fp32 GEMM kernels (sgemm)
  PassResults results;                  // the passes whose result type is their own file's
  // The wall time of each pass, in the order they finished (passes run at once
  // on several threads, so these overlap): for --timings.
  std::vector<std::pair<std::string_view, double>> pass_ms;

  // Whether pass `pass` ran (AnalysisOptions::passes); an analysis that
  // records no pass timings (one built by hand) counts as having run them all.
  bool Ran(std::string_view pass) const {
    for (const auto& [name, ms] : pass_ms) {
      if (name == pass) return true;
    }
    return pass_ms.empty();
  }
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_ANALYSIS_H_
