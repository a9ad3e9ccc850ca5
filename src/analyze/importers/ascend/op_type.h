// What an Ascend device task is and which operator type it runs, decided once
// in the Ascend readers and kept in the model (TraceModel::op_type), so the
// analyses read a fact of the model, never the format's name.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_OP_TYPE_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_OP_TYPE_H_

#include <string>
#include <string_view>

#include "analyze/trace_model.h"

namespace opscope::analyze {

// An Ascend task's operator type: the `Type` column where the file has one
// (kernel_details.csv puts it in the category), else from the kernel name
// torch_npu writes, "<api>_<kernel>_<type>[_<n>]": the last '_'-separated part
// that is not a number ("aclnnMatmul_MatMulCommon_MatMulV2" -> MatMulV2,
// "trans_TransData_9" -> TransData). A name that carries no type (Level0's
// "Conv2D1") is its own type: digits cannot be told from a version ("MatMulV2").
std::string AscendOpType(std::string_view name, std::string_view category);

// What an Ascend device task is (kernel_details.csv, op_summary, the DB's
// TASK table, trace_view's "Ascend Hardware" lane), from its name, its op type
// and its task type (trace_view's "Task Type", kernel_details' "Accelerator
// Core"; the names of the tasks that are not kernels are their task types:
// docs/formats/ascend.md, trace_view):
// - a collective: task type COMMUNICATION (older HCCL), or HCCL's operation
//   names ("hcom_allReduce__586_0_1");
// - a device wait: the waits and signals by which streams and ranks
//   synchronise ("Notify Wait", "Write Value", EVENT_WAIT, EVENT_RECORD);
// - DMA: HCCL's "SDMA" tasks (its data movement on its own stream; a copy the
//   runtime issued is MEMCPY_ASYNC);
// - a device annotation: the profiler's own markers (PLACE_HOLDER_SQE:
//   PROFILING_ENABLE, PROFILING_DISABLE);
// - a memory set when its op type is MemSet or its name ends in "_MemSet"
//   (Level0 writes no type: aclnnMm_MatMulCommon_MemSet), a copy for the
//   MEMCPY_ASYNC task or a MemCopy type; otherwise a kernel. Sets and copies
//   are not compute (docs/formats/ascend.md, issue 15).
EventClass AscendTaskClass(std::string_view name, std::string_view op_type,
                           std::string_view task_type = {});

// What every Ascend reader adds to the model it read: the operator type
// (AscendOpType of its name and category) of every device task that has none,
// once per (name, category); and the device family the files imply
// (TraceModel::implied_device: "Ascend 910B", the chips torch_npu and msprof
// profile), for when they name no device the datasheet holds; the run's
// info.json refines its peaks; and torch_npu's fused optimizers
// (TraceModel::fused_optimizers).
void CompleteAscendModel(TraceModel& model);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_OP_TYPE_H_
