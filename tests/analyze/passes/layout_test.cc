// The layout pass: conversions found by meaning (names.h), and copies by what
// they launched.
#include "analyze/passes/layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analyze/importers/ascend/op_type.h"
#include "analyze/model_builder.h"
#include "analyze/names.h"
#include "analyze/runtime_calls.h"

namespace opscope::analyze {
namespace {

using model_builder::Builder;

TEST(Layout, NamedKernelsAndLaunchesOfLayoutOperators) {
  Builder b;
  // Device: 100 us in all.
  b.Add(EventClass::kKernel,
        "void nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(int, "
        "int, int, int, float const*, float*, float, float)",
        0, 10)
      .Add(EventClass::kKernel,
           "void cutlass::Kernel<cutlass_80_tensorop_s1688fprop_optimized_tf32_64x64_16x10_nhwc_"
           "align4, NoPermute>(Params)",
           10, 60);
  // aten::contiguous > aten::clone > aten::copy_, whose copy kernel is 20 us.
  b.External(7)
      .Add(EventClass::kHostOp, "aten::contiguous", 100, 140)
      .Add(EventClass::kHostOp, "aten::clone", 101, 139)
      .External(8)
      .Add(EventClass::kHostOp, "aten::copy_", 102, 138)
      .Add(EventClass::kKernel, "void at::native::elementwise_kernel<128, 2>(int)", 140, 160);
  // A top-level copy_ whose work is a device-to-host memcpy: a transfer.
  b.External(9)
      .Add(EventClass::kHostOp, "aten::copy_", 200, 260)
      .Add(EventClass::kMemcpy, "Memcpy DtoH (Device -> Pageable)", 240, 260)
      .Copy(CopyDirection::kDeviceToHost, HostMemory::kPageable);
  // A sparse-data permute is not a memory-format change.
  b.External(-1).Add(EventClass::kHostOp, "fbgemm::permute_2D_sparse_data", 300, 400);
  const LayoutShare l = ComputeLayoutShare(b.model);
  // 10 us named + 20 us launched by contiguous, of 100 us of device time.
  EXPECT_EQ(l.device_ns, 30000);
  EXPECT_DOUBLE_EQ(l.device_pct, 30.0);
  // Host: contiguous 40 us of 40 + 60 + 100 us of top-level operators.
  EXPECT_EQ(l.host_ns, 40000);
  EXPECT_DOUBLE_EQ(l.host_pct, 20.0);
  ASSERT_EQ(l.top.size(), 3u);
  bool named = false, launched = false;
  for (const LayoutItem& item : l.top) {
    EXPECT_EQ(item.name.find("cutlass"), std::string::npos);
    EXPECT_EQ(item.name.find("permute"), std::string::npos);
    if (item.how == "layout kernel") named = item.family == "NCHW<->NHWC";
    if (item.how == "launched by aten::contiguous") launched = item.total_ns == 20000;
  }
  EXPECT_TRUE(named);
  EXPECT_TRUE(launched);
  // The copies: the contiguous nest launched a copy kernel; the copy_ a DtoH memcpy.
  ASSERT_EQ(l.copies.size(), 2u);
  for (const CopyUse& c : l.copies) {
    if (c.op == "aten::copy_") {
      EXPECT_EQ(c.what, "memcpy DtoH");
      EXPECT_EQ(c.device_ns, 20000);
    } else {
      EXPECT_EQ(c.op, "aten::contiguous");
      EXPECT_EQ(c.what, "copy kernel");
    }
  }
}

TEST(Layout, AscendTasksGroupedByOpType) {
  Builder b;
  for (int i = 0; i < 23; ++i) {
    b.Add(EventClass::kKernel, "trans_TransData_" + std::to_string(i), i * 10, i * 10 + 5);
    b.model.category.back() = b.model.Intern("TransData");
  }
  CompleteAscendModel(b.model);  // as the Ascend readers do
  const LayoutShare l = ComputeLayoutShare(b.model);
  ASSERT_EQ(l.top.size(), 1u);
  EXPECT_EQ(l.top[0].name, "TransData");
  EXPECT_EQ(l.top[0].count, 23);
  EXPECT_EQ(l.top[0].family, "TransData");
  EXPECT_EQ(l.top[0].caused_by, "");  // nothing links tasks to operators here
}

TEST(Layout, TransDataNamesTheOperatorsThatNeededIt) {
  Builder b;
  const auto trans = [&](int at) {
    b.Add(EventClass::kKernel, "trans_TransData_" + std::to_string(at), at, at + 2);
  };
  // Conv2D launched two (one through npu_format_cast, which only carries out
  // the conversion), MatMul one; one TransData is linked to no operator.
  b.External(1).Add(EventClass::kHostOp, "Conv2D", 0, 50);
  b.External(2).Add(EventClass::kHostOp, "aten::npu_format_cast", 10, 20);
  b.External(1);
  trans(100);
  b.External(2);
  trans(110);
  b.External(3).Add(EventClass::kHostOp, "aclnnMm", 60, 70);
  trans(120);
  b.External(-1);
  trans(130);
  CompleteAscendModel(b.model);  // as the Ascend readers do
  const LayoutShare l = ComputeLayoutShare(b.model);
  const auto kernel = std::find_if(l.top.begin(), l.top.end(),
                                   [](const LayoutItem& i) { return i.how == "layout kernel"; });
  ASSERT_NE(kernel, l.top.end());
  EXPECT_EQ(kernel->count, 4);
  EXPECT_EQ(kernel->caused_by,
            "Conv2D x2 (0.004 ms), aclnnMm x1 (0.002 ms); x1 not linked to an operator");
}

TEST(Names, MatchOnWordsAndExactOperators) {
  EXPECT_TRUE(IsLayoutKernel("aclnnMm_TransData_TransData", ""));
  EXPECT_TRUE(IsLayoutKernel("void nhwcToNchwKernel<__half>(int)", ""));
  EXPECT_TRUE(IsLayoutKernel("transpose_NCHW2NHWC", ""));
  EXPECT_FALSE(IsLayoutKernel("void cutlass::Kernel<conv_NoPermute_nhwc>(Params)", ""));
  EXPECT_FALSE(IsLayoutKernel("aten::conv2d", ""));
  EXPECT_TRUE(IsLayoutOperator("aten::contiguous"));
  EXPECT_TRUE(IsLayoutOperator("torch_npu::npu_format_cast"));
  EXPECT_FALSE(IsLayoutOperator("fbgemm::permute_2D_sparse_data"));
  EXPECT_FALSE(IsLayoutOperator("aten::permute"));  // a view: copies nothing
  EXPECT_TRUE(IsCommunication("hcom_allReduce_"));
  EXPECT_TRUE(IsCommunication("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)"));
  EXPECT_FALSE(IsCommunication("aten::broadcast_tensors"));
  EXPECT_TRUE(IsSyncCall("cudaStreamSynchronize"));
  EXPECT_TRUE(IsSyncCall("aten::item"));
  EXPECT_FALSE(IsSyncCall("cudaMemcpyAsync"));
  EXPECT_EQ(CompileKind("AscendCL@aclopCompileAndExecute"), "ACL operator compilation");
  EXPECT_EQ(CompileKind("_compile.compile_inner (dynamo_timed)"), "torch.compile");
  EXPECT_EQ(CompileKind("torch/_dynamo/convert_frame.py(1034): _compile"), "torch.compile");
  // The wrappers that run compiled code on every call are not compilation.
  EXPECT_EQ(CompileKind("torch/_dynamo/eval_frame.py(632): _fn"), "");
  EXPECT_EQ(CompileKind("torch/_inductor/runtime/triton_heuristics.py(1050): run"), "");
  EXPECT_EQ(CompileKind("cuModuleLoadData"), "module load");
  EXPECT_EQ(CompileKind("cudaMalloc"), "memory allocation");
  EXPECT_EQ(CompileKind("cudaMallocAsync"), "");
  EXPECT_EQ(CompileKind("aten::conv2d"), "");
  // Each family's allocations and frees, the driver's versioned entry points
  // and virtual memory management (issue 36 class 5: an OpenACC program's
  // cuMemHostAlloc and a TensorRT run's exit-time cuMemUnmap were judged
  // launch overhead); stream-ordered allocation and copies are not.
  for (const char* call : {"cuMemHostAlloc", "cuMemAllocHost_v2", "cuMemFreeHost", "cuMemAlloc_v2",
                           "cudaMallocManaged", "cudaMallocHost", "cudaFreeHost", "cudaHostAlloc",
                           "cuMemUnmap", "cuMemRelease", "cuMemCreate", "cuMemAddressReserve",
                           "hipHostMalloc", "hipExtMallocWithFlags", "hipFree", "aclrtFreeHost",
                           // CANN's calls as torch_npu names them, with their layer
                           "AscendCL@aclrtMalloc", "AscendCL@aclMallocMemInner",
                           "AscendCL@aclrtFreePhysical", "AscendCL@aclrtFree"}) {
    EXPECT_TRUE(IsMemoryAllocation(call)) << call;
  }
  EXPECT_EQ(WithoutLayer("AscendCL@aclrtFree"), "aclrtFree");
  EXPECT_EQ(WithoutLayer("aclrtFree"), "aclrtFree");
  for (const char* call :
       {"cuMemFreeAsync", "cudaMallocFromPoolAsync", "cuMemcpyHtoDAsync_v2", "cudaMemset",
        "cuMemGetInfo_v2", "cudaMemPrefetchAsync", "cuMemMapArrayAsync", "AscendCL@aclrtMemcpy",
        "Dequeue@aclnnInplaceAdd"}) {
    EXPECT_FALSE(IsMemoryAllocation(call)) << call;
  }
  // Teardown at exit is one-off like set-up, not launch overhead.
  for (const char* call :
       {"cuModuleUnload", "cuLibraryUnload", "hipModuleUnload", "cuCtxDestroy_v2",
        "cuDevicePrimaryCtxRelease_v2", "cudaDeviceReset", "cuMemUnmap", "cuMemHostAlloc"}) {
    EXPECT_EQ(RuntimeKindOf(call), RuntimeKind::kSetup) << call;
  }
  // An Ascend graph (model) loaded once is set-up; executing it is a launch.
  for (const char* call :
       {"ModelLoad", "aclmdlLoadFromFile", "aclmdlLoadFromMem", "aclmdlUnload"}) {
    EXPECT_EQ(RuntimeKindOf(call), RuntimeKind::kSetup) << call;
  }
  EXPECT_EQ(RuntimeKindOf("ModelExecute"), RuntimeKind::kLaunch);
  EXPECT_EQ(RuntimeKindOf("aclmdlExecute"), RuntimeKind::kLaunch);
  EXPECT_EQ(RuntimeKindOf("aclrtSynchronizeDeviceWithTimeout"), RuntimeKind::kBlocked);
  EXPECT_EQ(RuntimeKindOf("aclrtSynchronizeStreamWithTimeout"), RuntimeKind::kBlocked);
  EXPECT_EQ(RuntimeKindOf("cuLaunchKernel"), RuntimeKind::kLaunch);
  EXPECT_EQ(RuntimeKindOf("cudaMallocAsync"), RuntimeKind::kLaunch);
  EXPECT_EQ(RuntimeKindOf("cuModuleLoadDataEx"), RuntimeKind::kCompile);
  // The profiler's own start and stop, as each Python tracer names them.
  EXPECT_EQ(ProfilerControl("$profiler.py:101 start_trace"), 1);
  EXPECT_EQ(ProfilerControl("torch/profiler/profiler.py(199): start_trace"), 1);
  EXPECT_EQ(ProfilerControl("torch/autograd/profiler.py(358): _start_trace"), 1);
  EXPECT_EQ(ProfilerControl("$profiler.py:213 stop_trace"), -1);
  EXPECT_EQ(ProfilerControl("torch/profiler/profiler.py(235): stop_trace"), -1);
  EXPECT_EQ(ProfilerControl("torch/autograd/profiler.py(783): __enter__"), 0);  // record_function
  EXPECT_EQ(ProfilerControl("my_tools/trace.py(10): start_trace"), 0);
  EXPECT_EQ(BaseName("void foo::bar<int, (x)1>(int*)"), "foo::bar");
}

// The program's work span leaves out the profiler's start before the first
// device task and its stop after the last; a stop between device tasks (a
// second session) leaves the work around it in.
TEST(Names, WorkSpanLeavesOutTheProfilersOwnStartAndStop) {
  Builder b;
  b.Add(EventClass::kPython, "$profiler.py:101 start_trace", 0, 9000);
  b.Add(EventClass::kKernel, "gemm", 9100, 9500);
  b.Add(EventClass::kPython, "torch/profiler/profiler.py(235): stop_trace", 9600, 9700);
  b.Add(EventClass::kKernel, "gemm", 9800, 9900);
  b.Add(EventClass::kPython, "$profiler.py:213 stop_trace", 9950, 10000);
  const TraceSpan whole = SpanOf(b.model);
  const TraceSpan work = WorkSpanOf(b.model, whole);
  EXPECT_EQ(work.begin, 9000 * 1000);  // the builder takes microseconds
  EXPECT_EQ(work.end, 9950 * 1000);
  // Nothing left between them: the whole span.
  Builder only;
  only.Add(EventClass::kPython, "$profiler.py:101 start_trace", 0, 100);
  only.Add(EventClass::kPython, "$profiler.py:213 stop_trace", 50, 120);
  const TraceSpan all = SpanOf(only.model);
  EXPECT_EQ(WorkSpanOf(only.model, all).begin, all.begin);
  EXPECT_EQ(WorkSpanOf(only.model, all).end, all.end);
}

}  // namespace
}  // namespace opscope::analyze

namespace opscope::analyze {
namespace {

// Iteration markers by the names profilers and users give them; a range that
// only mentions a step is not one.
TEST(Names, IterationMarkers) {
  for (const char* yes : {"ProfilerStep#12", "step 3", "Step_4", "iteration 10", "ITER#7",
                          "train_step 2", "step:5"}) {
    EXPECT_TRUE(IsIterationMarker(yes)) << yes;
  }
  for (const char* no : {"step", "steps 3", "optimizer.step", "Optimizer.step#SGD.step",
                         "step 3 forward", "iteration", "stepper 2", "train_step", "", "3 step"}) {
    EXPECT_FALSE(IsIterationMarker(no)) << no;
  }
}

}  // namespace
}  // namespace opscope::analyze
