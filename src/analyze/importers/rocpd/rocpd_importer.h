// rocprofv3's default output, the rocpd SQLite database (`%pid%_results.db`),
// read from ROCprofiler-SDK's published rocpd schema (schema_version 3): each
// profiled process writes a set of tables whose names end in the set's uuid
// (`rocpd_kernel_dispatch_<uuid>`), and the database's unsuffixed views join
// the sets. The views are never read (a view can join without end: issue 39);
// every set's tables are, each optional, a missing one named in "What the
// reader left out", never read as zeros.
//
// What is read, per set:
// - rocpd_string: the text of every name_id and category_id;
// - rocpd_info_agent: GPUs (their product name is the device's), and which
//   agents are CPUs (a copy's direction where its name does not say it);
// - rocpd_info_process and rocpd_info_thread: the host threads' pid and tid;
// - rocpd_info_kernel_symbol: kernel names (display_name, else kernel_name,
//   without the ".kd" symbol suffix);
// - rocpd_kernel_dispatch: kernels on their GPU and queue; RCCL's kernels as
//   communication (names.h IsCommunication);
// - rocpd_memory_copy: copies with their bytes and direction (the name's
//   MEMORY_COPY_HOST_TO_DEVICE ..., else the two agents' types);
// - rocpd_region: host calls on their threads (HIP, HSA, RCCL: runtime
//   calls), ROCTx ranges (a MARKER category: annotations, iteration markers
//   as steps); a zero-length marker is an instant event;
// - rocpd_event: each record's internal correlation id (its event_id's
//   stack_id: rocprofv3 writes the record's correlation_id.internal there,
//   the ancestor's in parent_stack_id and the external id, 0 unless the
//   program set one, in correlation_id), which links a launch call to its
//   device work within the set; a table without stack_id links by
//   correlation_id. An id of 0 links nothing.
// Times are nanoseconds.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ROCPD_ROCPD_IMPORTER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ROCPD_ROCPD_IMPORTER_H_

#include "analyze/importer.h"

namespace opscope::analyze {

Importer RocpdImporter();
// True for an SQLite database holding rocpd's string and dispatch or region
// tables (of any set).
bool SniffRocpd(Source& source);
// Throws Error(kInvalidInput) naming the file for a database without any
// rocpd table set, or with a value that is not what the schema says.
void ImportRocpd(Source& source, TraceModel& model);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ROCPD_ROCPD_IMPORTER_H_
