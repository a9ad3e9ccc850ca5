// Nsight Systems' SQLite export (`nsys export --type sqlite`, or `nsys stats`'
// by-product), read from NVIDIA's published schema ("SQLite Export Schema
// Reference" and "Common SQLite examples" of the Nsight Systems
// documentation): every table is optional, and a missing one is named in the
// model's metadata ("nsys_missing"), never read as zeros.
//
// What is read:
// - CUPTI_ACTIVITY_KIND_KERNEL: kernels (demangledName through StringIds) on
//   their device and stream; NCCL's and other collectives' kernels as
//   communication (names.h IsCommunication);
// - CUPTI_ACTIVITY_KIND_MEMCPY / _MEMSET: copies with their direction
//   (copyKind) and host memory (srcKind / dstKind), sets, with their bytes;
//   the kinds' meanings from the database's own ENUM_CUDA_MEMCPY_OPER and
//   ENUM_CUDA_MEM_KIND tables; unified memory's page migrations
//   (CUDA_MEMCPY_KIND_UVM_*) as managed memory, named by their migrationCause
//   (ENUM_CUDA_UNIF_MEM_MIGRATION: a page fault, a prefetch);
// - CUPTI_ACTIVITY_KIND_RUNTIME: CUDA runtime calls on their threads (the
//   name's "_v<version>" suffix dropped), linked to their device work by
//   correlationId within their process;
// - CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: the synchronisations CUPTI records,
//   as Kineto's cuda_sync, named as Kineto names them ("Stream Sync");
// - NVTX_EVENTS: push/pop and start/end ranges on their threads: iteration
//   markers (names.h IsIterationMarker: ProfilerStep#N, "step 12")
//   as steps, PyTorch's emit_nvtx ranges ("aten::mm, seq = 12, op_id = 3")
//   as framework operators named without their arguments, others as
//   annotations; marks are counted as instant events;
// - COMPOSITE_EVENTS with SAMPLING_CALLCHAINS: CPU IP samples, each as its
//   call chain's leaf (stackDepth 0) function and module
//   (TraceModel::cpu_samples);
// - DIAGNOSTIC_EVENT: Nsight's own warnings and errors, in the import notes;
// - PROCESSES and ThreadNames for names, TARGET_INFO_GPU (or
//   TARGET_INFO_CUDA_DEVICE) for the device's name, META_DATA_EXPORT for the
//   schema version.
// globalTid holds the process id in bits 24-47 and the thread id in bits
// 0-23 (NVIDIA's "Serialized process and thread identifiers").
#ifndef OPSCOPE_ANALYZE_IMPORTERS_NSYS_NSYS_IMPORTER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_NSYS_NSYS_IMPORTER_H_

#include "analyze/importer.h"

namespace opscope::analyze {

Importer NsysImporter();
// True for an SQLite database that Nsight Systems exported (META_DATA_EXPORT
// names it, or it holds CUPTI activity or NVTX tables).
bool SniffNsys(Source& source);
// Throws Error(kUnsupported) for a database that is not a plain file, and
// Error(kInvalidInput) naming the file for one SQLite cannot read.
void ImportNsys(Source& source, TraceModel& model);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_NSYS_NSYS_IMPORTER_H_
