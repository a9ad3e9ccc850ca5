// The communication groups of a torch_npu run, from profiler_metadata.json's
// `parallel_group_info` (docs/formats/ascend.md 1.6): each HCCL group's name, its role
// ("dp", "tp", "pp", ...) and the global ranks in it. communication.json and
// communication_matrix.json name a group only by a hash of its HCCL name (the
// number after '@') and its links by ranks local to the group; these give the
// global ranks back, as msprof-analyze does (docs/formats/ascend.md 1.7).
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_PARALLEL_GROUPS_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_PARALLEL_GROUPS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/reported.h"
#include "analyze/source.h"

namespace opscope::analyze {

// The hash the communication files print after '@' (docs/formats/ascend.md 1.7): two
// 32-bit polynomial rolling hashes of the name's bytes, multipliers 29 (high
// word) and 131 (low word), each from 0 and modulo 2^32.
uint64_t HcclGroupHash(std::string_view hccl_name);

// Empty when the file has no parallel_group_info. Throws Error(kInvalidInput)
// naming the file and key for text that is not JSON or a group whose
// global_ranks is not a list of ranks.
std::vector<ReportedGroup> ReadParallelGroups(Source& profiler_metadata);

// The same file's groups and its ENV_VARIABLES (each variable's value as a
// string, "" where unset; a value that is not a string is written as JSON).
struct ProfilerMetadata {
  std::vector<ReportedGroup> groups;
  std::vector<std::pair<std::string, std::string>> environment;
};
ProfilerMetadata ReadProfilerMetadata(Source& profiler_metadata);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_PARALLEL_GROUPS_H_
