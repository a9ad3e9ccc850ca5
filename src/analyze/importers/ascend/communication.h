// torch_npu's communication.json and communication_matrix.json (ascend.md, 3.5
// and 3.6), and what a cluster of them says: per collective, the time spent
// waiting for peers, moving data and synchronising; the rank the others wait
// for; per link, the bandwidth against the other links of its transport.
//
// Units as the files write them: times in ms, sizes in MB of 10^6 bytes,
// bandwidth in GB/s of 10^9 bytes (ascend.md, 2.4); kept here as ns and bytes.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_COMMUNICATION_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_COMMUNICATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/importers/ascend/parallel_groups.h"
#include "analyze/source.h"

namespace opscope::analyze {

struct AscendTransfer {
  std::string transport;  // RDMA, HCCS, PCIE, SIO (SDMA, their sum, is left out)
  int64_t bytes = 0, time_ns = 0;
};

// One collective or point-to-point operation of one rank.
struct AscendCollective {
  std::string step;   // "step50"; "step" when the run had no schedule steps
  std::string kind;   // "collective" or "p2p"
  std::string op;     // "hcom_allReduce__586_0_1"
  std::string group;  // the hash after '@' (the HCCL group), empty when absent
  int64_t start_ns = -1;
  int64_t elapse_ns = 0, transit_ns = 0, wait_ns = 0, sync_ns = 0, idle_ns = 0;
  std::vector<AscendTransfer> transfers;  // transports that moved bytes
};

// Throws Error(kInvalidInput) naming the file and the key path of a value that
// is missing or not a number, or Error(kInvalidInput) for text that is not JSON.
std::vector<AscendCollective> ReadCommunication(Source& source);

// One link of communication_matrix.json, from its "total" entries (size and
// time summed over the operations of one type and group).
struct AscendLink {
  std::string step, kind;
  std::string op_type;  // "allreduce", as the key names it (approximate: ascend.md 3.6)
  std::string group;
  int src = -1, dst = -1;  // ranks local to the communication group
  std::string transport;   // LOCAL, HCCS, PCIE, RDMA, SIO
  int64_t bytes = 0, time_ns = 0;
  // Set across ranks (CompareAscendCommunication): the global ranks of src and
  // dst (-1 unknown), the group's role ("dp", "tp"; empty unknown), and what
  // gave the ranks ("profiler_metadata.json", or "self-links": each rank's own
  // LOCAL link k-k says its local rank k in the group).
  int global_src = -1, global_dst = -1;
  std::string group_role;
  std::string ranks_from;
  double Gbps() const { return time_ns > 0 ? static_cast<double>(bytes) / time_ns : 0; }
};

std::vector<AscendLink> ReadCommunicationMatrix(Source& source);

// Shared by the JSON and the database forms of these files:
// a summary entry that sums the others ("Total Op Info"): left out, recomputed;
bool IsTotalEntry(std::string_view key);
// a rank as the files write it ("3"): up to 7 digits; nullopt for anything else.
std::optional<int> ParseRank(std::string_view text);

// ---- Across ranks ------------------------------------------------------------

struct AscendRankCommunication {
  int rank = -1;
  std::string path;
  int64_t collectives = 0;
  int64_t elapse_ns = 0, transit_ns = 0, wait_ns = 0, sync_ns = 0, idle_ns = 0;
  // Per transport: bytes and time summed over the rank's operations.
  std::vector<AscendTransfer> transports;
  // Operations shared with other ranks in which this rank waited least: it
  // arrived last, and the others waited for it.
  int64_t arrived_last = 0, shared = 0;
  int64_t others_waited_ns = 0;  // the others' mean wait in those operations, summed
};

struct AscendSlowLink {
  int rank = -1;  // whose file reported it
  AscendLink link;
  double median_gbps = 0;  // of the links of its transport
};

struct AscendCommunicationCluster {
  std::vector<AscendRankCommunication> ranks;  // by rank
  int waited_for_rank = -1;                    // the rank the others wait for most; -1 none
  // Links of one transport moving at least kMinLinkBytes, compared when there
  // are at least three; slow below kSlowLinkRatio of their median.
  std::vector<AscendSlowLink> links;  // every compared link, slowest (by ratio) first
  size_t slow_links = 0;              // how many of them are slow (they come first)
};

constexpr int64_t kMinLinkBytes = 1000000;
constexpr double kSlowLinkRatio = 0.8;

struct AscendCommunicationInput {
  int rank = -1;
  std::string path;
  const std::vector<AscendCollective>* collectives = nullptr;
  const std::vector<AscendLink>* links = nullptr;
  const std::vector<AscendGroup>* groups = nullptr;  // its profiler_metadata.json's
};

AscendCommunicationCluster CompareAscendCommunication(
    const std::vector<AscendCommunicationInput>& inputs);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_COMMUNICATION_H_
