// What an event's name says it is, matched on meaning: identifier words of a
// demangled name (template arguments and parameter lists left out, so a
// `NoPermute` template argument is not a permute) and exact operator names per
// vendor, never a bare substring of the whole name. Each test is evaluated
// once per distinct (interned) name of a model.
#ifndef OPSCOPE_ANALYZE_NAMES_H_
#define OPSCOPE_ANALYZE_NAMES_H_

#include <string>
#include <string_view>
#include <vector>

#include "analyze/trace_model.h"

namespace opscope::analyze {

// A kernel's or call's own name: the demangled name without template arguments
// (<...>), parameter lists ((...)) and a leading return type ("void ").
std::string_view BaseName(std::string_view name);
// The lower-cased identifier words of BaseName: split at every character that
// is not a letter or digit ("at::native::copy_kernel" -> at, native, copy, kernel).
std::vector<std::string> Words(std::string_view name);
// An operator's function name (after the last "::") and namespace (before it).
std::string_view FunctionOf(std::string_view op);
std::string_view NamespaceOf(std::string_view op);
// A call named with its layer, as torch_npu names CANN's calls
// ("AscendCL@aclrtMalloc"): the call after the last '@'; else the name whole.
std::string_view WithoutLayer(std::string_view name);
// A framework operator's name: a library namespace in lower case, as
// PyTorch's operator libraries are named ("aten::mm", "c10d::allreduce_",
// "npu::npu_format_cast", "mylib::op"), not a runtime's C++ method
// ("BufferSequencingEvent::Execute") or a Python frame.
bool IsFrameworkOperator(std::string_view name);

// Device kernels that only convert a tensor's layout: cuDNN's nchwToNhwc /
// nhwcToNchw kernels, MIOpen's transpose_NCHW2NHWC-style kernels, Ascend's
// TransData / Transpose(D) tasks (by name or by op type), oneDNN reorders.
bool IsLayoutKernel(std::string_view name, std::string_view op_type);
// Framework operators whose purpose is a layout change: aten::contiguous and
// the npu_format_cast family (aten, npu, torch_npu). Views (permute,
// transpose) copy nothing and are not conversions; fbgemm's permute of sparse
// data is not a memory-format change.
bool IsLayoutOperator(std::string_view name);
// Operators that copy a tensor (copy_, clone, to, _to_copy, contiguous): what
// such a copy is (a transfer, a device copy kernel, host work) is decided by
// what it launched.
bool IsCopyOperator(std::string_view name);
bool IsCommunication(std::string_view name);
// A collective's task that waits for another rank's signal (Ascend HCCL's
// "Notify Wait"): the device waits on a peer, it moves no data.
bool IsPeerWait(std::string_view name);
// Host calls that wait for the device or another thread: *synchronize*,
// *wait*, .item() / _local_scalar_dense, blocking cudaMemcpy/hipMemcpy.
bool IsSyncCall(std::string_view name);
bool IsDataLoading(std::string_view name);
// A host span of the DataLoader's iterator, as record_function names it
// ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__") and as
// with_stack's Python frames show it (".../torch/utils/data/dataloader.py(631):
// __next__"): EventClass::kDataLoading, whichever producer recorded it.
bool IsDataLoaderSpan(std::string_view name);
// The span of a DataLoader that loads in worker processes (num_workers > 0:
// "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"): the
// batches are prepared beside the step already, and a wait in it means the
// workers do not keep up.
bool IsWorkerDataLoaderSpan(std::string_view name);
// A Python frame that waits rather than works, as with_stack's Python events
// name them: the standard library's waits ("threading.py(359): wait",
// "threading.py(1116): _wait_for_tstate_lock", join, "queue.py(171): get",
// "selectors.py(416): select") and the built-ins they block in ("<built-in
// method acquire of _thread.lock object at 0x...>", "<built-in function
// sleep>"). A thread in one explains no time of the device (a progress bar's
// monitor thread sleeps through every step).
bool IsPythonWait(std::string_view name);
// The profiler's own start or stop call as its Python tracer records it:
// +1 for a start (torch/profiler/profiler.py(N): start_trace,
// torch/autograd/profiler.py(N): _start_trace, JAX's "$profiler.py:101
// start_trace"), -1 for a stop (stop_trace, _stop_trace), 0 for any other
// name. At a trace's edges they are the profiler's set-up and teardown (JAX's
// start_trace can span seconds), not the program's work.
int ProfilerControl(std::string_view name);
// A range that marks one iteration of a training or inference loop, by the
// names profilers and users give them: "ProfilerStep#12" (PyTorch), and a
// range named only "step", "iteration", "iter" or "train_step" with its
// number ("step 12", "Iteration_3", "iter#7"), case aside.
bool IsIterationMarker(std::string_view name);
// What compilation or first-use set-up a host call is, or "" when none:
// "ACL operator compilation", "torch.compile", "module load", "memory allocation".
std::string_view CompileKind(std::string_view name);
// A host runtime call that allocates or frees device, pinned host or managed
// memory, or maps it (cudaMalloc, cuMemFreeHost_v2, cuMemUnmap, hipHostMalloc,
// aclrtFree, also named with its layer as torch_npu names it:
// AscendCL@aclMallocMemInner); the stream-ordered ones (cudaMallocAsync) are
// not.
bool IsMemoryAllocation(std::string_view name);
// A driver or runtime entry point without its "_v<version>" suffix:
// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel", "cuMemAlloc_v2" -> "cuMemAlloc".
std::string_view WithoutVersion(std::string_view name);

std::string Lower(std::string_view s);
bool Contains(const std::string& haystack, std::string_view needle);

// A name test evaluated once per distinct (interned) name of the model.
std::vector<bool> ClassifyNames(const TraceModel& model, bool (*test)(std::string_view));

// Whether the trace records a PyTorch program: PyTorch's profiler wrote it
// (TraceModel::written_by_pytorch), or it holds its
// operators (aten::, also as emit_nvtx ranges), ProfilerStep#N or
// torch_npu's names. Advice names
// PyTorch's levers (pin_memory=True, torch.profiler's schedule) only there;
// elsewhere the runtime's own (cudaMallocHost, a capture range).
bool RecordsPyTorch(const TraceModel& model);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_NAMES_H_
