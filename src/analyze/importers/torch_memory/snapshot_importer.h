// PyTorch's CUDA caching-allocator snapshot (torch.cuda.memory._snapshot(),
// written by torch.cuda.memory._dump_snapshot as a pickle; the same from
// torch_npu and ROCm builds), read as PyTorch documents it (the docstring of
// torch.cuda.memory._snapshot and the "Understanding CUDA Memory Usage"
// page):
// - "segments": the memory the allocator reserved from the device at the
//   snapshot, one entry per segment ("device", "address", "total_size",
//   "segment_type" large or small, ...) with its "blocks" ("address",
//   "size", "state": active_allocated, active_pending_free (documented as
//   active_awaiting_free) or inactive, and the "frames" of the stack that
//   allocated an active block);
// - "device_traces": per device, the allocator's recorded history (what
//   torch.cuda.memory._record_memory_history keeps, its last max_entries):
//   entries with an "action" (alloc, free_requested, free_completed, free in
//   older versions, segment_alloc, segment_free, segment_map,
//   segment_unmap, oom, snapshot), "addr", "size", "stream", "frames",
//   "time_us" where recorded, and "device_free" for an oom.
//
// Allocated memory is PyTorch's own (torch.cuda.memory_allocated): a block
// counts from its alloc to its free_requested. The history is replayed back
// from the state the segments give at its end, so memory allocated before
// the history began (the history is a ring buffer) is counted; the peak, the
// blocks live at it by allocation site (the innermost stack frame in user
// code), every allocation by site, the pools at the end (reserved, allocated,
// cached free and its largest block: fragmentation) and out-of-memory errors
// become the model's ReportedMemory. The model holds no events.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_TORCH_MEMORY_SNAPSHOT_IMPORTER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_TORCH_MEMORY_SNAPSHOT_IMPORTER_H_

#include "analyze/importer.h"

namespace opscope::analyze {

Importer TorchMemorySnapshotImporter();
// True for a pickle (protocol 2 to 5) whose top-level dict starts with the
// key "segments" or "device_traces".
bool SniffTorchMemorySnapshot(Source& source);
// Throws Error(kInvalidInput) naming the file for a malformed pickle or one
// whose top level is not a dict of "segments" and "device_traces".
void ImportTorchMemorySnapshot(Source& source, TraceModel& model);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_TORCH_MEMORY_SNAPSHOT_IMPORTER_H_
