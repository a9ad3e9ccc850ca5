// XPlane: the XSpace protobuf (`*.xplane.pb`) that the XLA profiler writes for
// JAX and TensorFlow on GPUs and TPUs, read from the wire format by the field
// numbers of the published xplane.proto (XSpace planes=1; XPlane name=2
// lines=3 event_metadata=4 stat_metadata=5; XLine name=2 timestamp_ns=3
// events=4 display_name=11; XEvent metadata_id=1 offset_ps=2 duration_ps=3
// stats=4 num_occurrences=5; XStat metadata_id=1 and its value 2-7;
// XEventMetadata id=1 name=2 display_name=4; XStatMetadata id=1 name=2).
//
// What is read:
// - device planes ("/device:GPU:N", "/device:TPU:N"): where a plane has
//   stream lines ("Stream #N(...)"), their events are its tasks (kernels,
//   copies and sets by name, collectives by names.h IsCommunication) and its
//   other lines (XLA Ops, XLA Modules, Steps) are device annotations; where
//   it has none (a TPU), the "XLA Ops" line holds its tasks;
// - "/host:CPU": each line a thread; Python frames ("$file.py:12 fn") as
//   Python (JAX's block_until_ready, the wait for the device, as a
//   synchronisation), CUDA/HIP runtime calls (cuda*, cu*, hip*) as runtime
//   calls, the runtime's other scopes as framework operators;
// - the "correlation_id" stat, which links a launch to its kernel.
// Events without a time (aggregated by num_occurrences) are left out and
// counted. A damaged file (a text conversion that replaced bytes with U+FFFD,
// a truncated copy) is refused with the offset where it stops being
// protobuf, and the number of U+FFFD sequences it holds.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_XPLANE_XPLANE_IMPORTER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_XPLANE_XPLANE_IMPORTER_H_

#include "analyze/importer.h"

namespace opscope::analyze {

Importer XPlaneImporter();
// True for a file named *.xplane.pb, or one whose first plane's name is a
// host's or a device's ("/host:", "/device:").
bool SniffXPlane(Source& source);
// Throws Error(kInvalidInput) naming the file and the byte offset for a file
// that is not a valid XSpace.
void ImportXPlane(Source& source, TraceModel& model);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_XPLANE_XPLANE_IMPORTER_H_
