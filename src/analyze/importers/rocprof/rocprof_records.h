// What rocprofv3's two outputs, its JSON document (rocprof_json_importer.h)
// and its rocpd database (importers/rocpd), spell alike: ROCprofiler-SDK's
// kernel symbols and memory copy operations.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ROCPROF_ROCPROF_RECORDS_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ROCPROF_ROCPROF_RECORDS_H_

#include <string_view>

#include "analyze/trace_model.h"

namespace opscope::analyze {

// A kernel symbol's name without the code object's symbol suffix: "foo.kd",
// and "foo(int) [clone .kd]" once demangled.
std::string_view KernelSymbolName(std::string_view name);

// A memory copy's direction from its operation's name
// (MEMORY_COPY_HOST_TO_DEVICE, ..._DEVICE_TO_HOST, ..._DEVICE_TO_DEVICE: peer
// to peer between two agents, ..._HOST_TO_HOST); kUnknown for another name.
CopyDirection MemoryCopyDirection(std::string_view operation, bool same_agent);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ROCPROF_ROCPROF_RECORDS_H_
