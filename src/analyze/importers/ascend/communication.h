// torch_npu's communication.json and communication_matrix.json (docs/formats/ascend.md, 3.5
// and 3.6), and what a cluster of them says: per collective, the time spent
// waiting for peers, moving data and synchronising; the rank the others wait
// for; per link, the bandwidth against the other links of its transport.
//
// Units as the files write them: times in ms, sizes in MB of 10^6 bytes,
// bandwidth in GB/s of 10^9 bytes (docs/formats/ascend.md, 2.4); kept here as ns and bytes.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_COMMUNICATION_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_COMMUNICATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/importers/ascend/parallel_groups.h"
#include "analyze/reported.h"
#include "analyze/source.h"

namespace opscope::analyze {

// Throws Error(kInvalidInput) naming the file and the key path of a value that
// is missing or not a number, or Error(kInvalidInput) for text that is not JSON.
std::vector<ReportedCollective> ReadCommunication(Source& source);

std::vector<ReportedLink> ReadCommunicationMatrix(Source& source);

// Shared by the JSON and the database forms of these files:
// a summary entry that sums the others ("Total Op Info"): left out, recomputed;
bool IsTotalEntry(std::string_view key);
// a rank as the files write it ("3"): up to 7 digits; nullopt for anything else.
std::optional<int> ParseRank(std::string_view text);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_COMMUNICATION_H_
