// The analysis passes opscope runs, one line each: the only place a new pass is
// registered, with its tables and rules (passes/pass.h). The pipeline runs
// each pass after the passes it needs, several at once where they allow.
#include "analyze/passes/attribution.h"
#include "analyze/passes/cpu_fallback.h"
#include "analyze/passes/critical_path.h"
#include "analyze/passes/device_busy.h"
#include "analyze/passes/device_time.h"
#include "analyze/passes/fusion.h"
#include "analyze/passes/launch.h"
#include "analyze/passes/layout.h"
#include "analyze/passes/links.h"
#include "analyze/passes/long_tail.h"
#include "analyze/passes/op_device.h"
#include "analyze/passes/op_stats.h"
#include "analyze/passes/pass.h"
#include "analyze/passes/roofline.h"
#include "analyze/passes/steps.h"
#include "analyze/passes/timeline.h"
#include "analyze/passes/transfers.h"

namespace opscope::analyze {

// Passes whose whole analysis is one file (its result, tables and rules)
// declare their entry here, beside their registration.
Pass BandwidthContentionPass();  // bandwidth_contention.cc
Pass ByteAlignmentPass();        // byte_alignment.cc
Pass CoreClockPass();            // core_clock.cc
Pass FirstCallsPass();           // first_calls.cc
Pass HostPracticesPass();        // host_practices.cc
Pass AffinityApisPass();         // affinity_apis.cc
Pass HostWaitsPass();            // host_waits.cc
Pass ImportNotesPass();          // import_notes.cc

const std::vector<Pass>& Passes() {
  // The report lists each trace's tables in this order, and the advisor
  // applies the passes' rules in it.
  static const std::vector<Pass> passes = {
      ImportNotesPass(),
      SelfTimesPass(),
      LinksPass(),
      OpStatsPass(),
      OpDevicePass(),
      DeviceBusyPass(),
      StepsPass(),
      TransfersPass(),
      LayoutPass(),
      LongTailPass(),
      CpuFallbackPass(),
      LaunchPass(),
      RooflinePass(),
      FusionPass(),
      DeviceTimePass(),
      TimelinePass(),
      HostWaitsPass(),
      FirstCallsPass(),
      ByteAlignmentPass(),
      BandwidthContentionPass(),
      CriticalPathGraphPass(),
      AttributionPass(),
      CriticalPathPass(),
      CoreClockPass(),
      HostPracticesPass(),
      AffinityApisPass(),
  };
  return passes;
}

}  // namespace opscope::analyze
