// What the host_waits pass (host_waits.cc) tells other rules: whether its rule
// reports the host's waits in synchronisation calls, so that a rule about the
// same calls stays silent rather than say it again, or differently (issue 36:
// "no finding contradicts another").
#ifndef OPSCOPE_ANALYZE_PASSES_HOST_WAITS_H_
#define OPSCOPE_ANALYZE_PASSES_HOST_WAITS_H_

namespace opscope::analyze {

struct Analysis;

// Whether the host_waits rule reports the synchronisation calls of its
// window (a host_blocked_synchronization finding).
bool SynchronizationsReported(const Analysis& analysis);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_HOST_WAITS_H_
