// Framework operators with the device time they caused: for each operator,
// each operator with one set of input shapes, and each module, the host self
// and total time and the device self and total time, as torch.profiler's
// key_averages() gives CUDA self/total per operator.
//
// A device task (kernel, copy, set) belongs to the framework operator that
// launched it (EventLinks::launcher: the operator of its External id, else the
// innermost operator enclosing its launch call of the same correlation id; on
// torch_npu, its async_npu flow). An operator's device self time is the time
// of the tasks it launched itself; its device total adds the tasks launched by
// the operators nested in it on its thread (so aten::linear's total holds the
// GEMM that aten::addmm inside it launched). Each task is counted once per
// enclosing operator call; per name the calls' figures are summed, so an
// operator nested in one of its own name counts that task twice, as
// key_averages() does.
//
// Modules are Kineto's `nn.Module: Name_N` Python events (with_modules, or
// with_stack) and opscope's own `module` argument; a module's path is the
// chain of modules around it ("Qwen2Model_0/Qwen2DecoderLayer_3/..."), its
// device total the tasks launched inside it, its device self those not inside
// a nested module.
#ifndef OPSCOPE_ANALYZE_PASSES_OP_DEVICE_H_
#define OPSCOPE_ANALYZE_PASSES_OP_DEVICE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analyze/passes/pass.h"

namespace opscope::analyze {

struct OpDeviceRow {
  std::string name;    // the operator, or the module's path
  std::string shapes;  // operators_by_shape: the input shapes as recorded ("" none)
  int64_t calls = 0;
  int64_t host_self_ns = 0, host_total_ns = 0;
  int64_t device_self_ns = 0, device_total_ns = 0;
  int64_t kernels = 0;        // device tasks it launched itself (modules: not in a nested one)
  int64_t kernels_total = 0;  // with those of the operators (modules) inside it
  // The device tasks behind its total, by name, the most time first: "name
  // x3 1.234 ms" for the first three, then how many more names.
  std::string top_kernels;
};

struct OpDeviceTime {
  // The trace has device tasks (kernels, copies, sets); without them every
  // device figure is not applicable.
  bool has_device = false;
  int64_t device_ns = 0;  // all device task time
  int64_t linked_ns = 0;  // the part launched by a framework operator
  int64_t tasks = 0, linked_tasks = 0;
  // Ranked by device self time when the trace has device work (then host
  // self), else by host self time.
  std::vector<OpDeviceRow> ops;
  std::vector<OpDeviceRow> by_shape;  // only operators whose calls record input shapes
  std::vector<OpDeviceRow> modules;   // ranked by device total, then host total
};

struct EventLinks;
OpDeviceTime ComputeOpDevice(const TraceModel& model, const EventLinks& links);
// The same with each event's self time given (SelfTimes).
OpDeviceTime ComputeOpDevice(const TraceModel& model, const EventLinks& links,
                             std::span<const int64_t> self);

// How much of the device time the operators' device columns hold: the note
// under every table of operators with device time.
std::string DeviceNote(const OpDeviceTime& d);

// Its entry in the pass table, with its tables (operators per input shapes,
// modules): needs "links".
Pass OpDevicePass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_OP_DEVICE_H_
