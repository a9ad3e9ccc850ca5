// What the host_waits pass (host_waits.cc) tells other rules: the cost of
// the host's waits in synchronisation calls, so that a rule about the same
// calls says what they cost as host_waits measured it (issue 36: "no finding
// contradicts another"), or stays silent where host_waits reports them.
#ifndef OPSCOPE_ANALYZE_PASSES_HOST_WAITS_H_
#define OPSCOPE_ANALYZE_PASSES_HOST_WAITS_H_

#include <cstdint>
#include <optional>
#include <string>

namespace opscope::analyze {

struct Analysis;

struct SynchronizationCost {
  int64_t blocked_ns = 0;  // the union of the synchronisation calls in the window
  int64_t idle_ns = 0;     // of it, the time the device neither worked nor held queued work
  int64_t window_ns = 0;   // host_waits' window: the complete steps, else the host's span
  bool reported = false;   // host_waits' rule reports them (host_blocked_synchronization)
  std::string window;      // the window in words: "the host's span (174.326 ms; ...)"
};

// The synchronisation calls' cost where the host_waits pass ran and found
// some in its window, else nothing.
std::optional<SynchronizationCost> SynchronizationCostOf(const Analysis& analysis);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_HOST_WAITS_H_
