// rocprofv3's JSON output (`rocprofv3 --output-format json`: the
// rocprofiler-sdk-tool document), read from the record types the
// ROCprofiler-SDK documents (rocprofiler_buffer_tracing_*_record_t):
// - one entry of "rocprofiler-sdk-tool" per profiled process: its metadata
//   (pid), agents (CPUs and GPUs: a GPU's product name is the device's name),
//   kernel_symbols (kernel_id -> demangled name), and strings.buffer_records,
//   the names of each record kind's operations (a record's "kind" and
//   "operation" index them);
// - buffer_records.kernel_dispatch: kernels on their GPU agent and queue
//   (RCCL's kernels as communication: names.h IsCommunication);
// - buffer_records.memory_copy: copies, their direction from the operation's
//   name (MEMORY_COPY_HOST_TO_DEVICE ...), their bytes;
// - buffer_records.hip_api and rccl_api: host calls on their threads, linked
//   to their device work by the internal correlation id within their process;
// - buffer_records.marker_api: ROCTx ranges on their threads, as annotations
//   (iteration markers, names.h IsIterationMarker, as steps).
// Timestamps are nanoseconds. The document is read whole (at most kMaxBytes).
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ROCPROF_ROCPROF_JSON_IMPORTER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ROCPROF_ROCPROF_JSON_IMPORTER_H_

#include "analyze/importer.h"

namespace opscope::analyze {

Importer RocprofJsonImporter();
// True for a JSON object whose first member is "rocprofiler-sdk-tool".
bool SniffRocprofJson(Source& source);
// Throws Error(kInvalidInput) naming the file for a document that is not
// JSON, lacks "rocprofiler-sdk-tool", or is larger than 2 GiB.
void ImportRocprofJson(Source& source, TraceModel& model);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ROCPROF_ROCPROF_JSON_IMPORTER_H_
