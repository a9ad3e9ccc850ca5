// What the collectives and links that a job's ranks reported (reported.h) say
// together: per rank, the time spent waiting for peers, moving data and
// synchronising, and the rank the others wait for (in an operation shared by
// several ranks, the one that waited least arrived last); per link, its
// bandwidth against the other links of its transport, with the global ranks of
// its ends (from the run's communication groups, else from each rank's own
// LOCAL self-link).
#ifndef OPSCOPE_ANALYZE_COMMUNICATION_CLUSTER_H_
#define OPSCOPE_ANALYZE_COMMUNICATION_CLUSTER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/reported.h"

namespace opscope::analyze {

// Two ranks' waits in one operation closer than this tie: neither arrived
// last (as the scale-out merge's kLateNs).
inline constexpr int64_t kWaitTieNs = 20'000;

struct RankCommunication {
  int rank = -1;
  std::string path;
  int64_t collectives = 0;
  int64_t elapse_ns = 0, transit_ns = 0, wait_ns = 0, sync_ns = 0, idle_ns = 0;
  // Operations whose file left one of those times out (NULL, -1 in
  // ReportedCollective): the sums above leave the missing values out.
  int64_t incomplete = 0;
  // Per transport: bytes and time summed over the rank's operations.
  std::vector<ReportedTransfer> transports;
  // Operations shared with other ranks in which this rank waited least, by
  // kWaitTieNs or more: it arrived last, and the others waited for it (ranks
  // whose waits tie name no one).
  int64_t arrived_last = 0, shared = 0;
  int64_t others_waited_ns = 0;  // the others' mean wait in those operations, summed
};

struct SlowLink {
  int rank = -1;  // whose file reported it
  ReportedLink link;
  double median_gbps = 0;  // of the links of its transport
};

struct CommunicationCluster {
  std::vector<RankCommunication> ranks;  // by rank
  int waited_for_rank = -1;              // the rank the others wait for most; -1 none
  // Links of one transport moving at least kMinLinkBytes, compared when there
  // are at least three; slow below kSlowLinkRatio of their median.
  std::vector<SlowLink> links;  // every compared link, slowest (by ratio) first
  size_t slow_links = 0;        // how many of them are slow (they come first)
};

constexpr int64_t kMinLinkBytes = 1000000;
constexpr double kSlowLinkRatio = 0.8;

struct CommunicationInput {
  int rank = -1;
  std::string path;
  const std::vector<ReportedCollective>* collectives = nullptr;
  const std::vector<ReportedLink>* links = nullptr;
  const std::vector<ReportedGroup>* groups = nullptr;  // its communication groups
};

CommunicationCluster CompareCommunication(const std::vector<CommunicationInput>& inputs);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_COMMUNICATION_CLUSTER_H_
