// The part of AscendCL's runtime (libascendcl.so) the NPU backend calls,
// declared from Huawei's published AscendCL reference (function prototypes,
// aclrtMemcpyKind, aclrtMemMallocPolicy, aclrtMemAttr), loaded with dlopen at
// run time: nothing of the SDK is needed to build. OPSCOPE_ACL_LIBRARY
// overrides the library path (tests point it at a stand-in).
#ifndef OPSCOPE_DEVICES_NPU_ACL_RUNTIME_H_
#define OPSCOPE_DEVICES_NPU_ACL_RUNTIME_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace opscope::npu {

using aclError = int;
using aclrtStream = void*;
using aclrtEvent = void*;
// aclrtMemcpyKind.
constexpr int kMemcpyHostToDevice = 1, kMemcpyDeviceToHost = 2, kMemcpyDeviceToDevice = 3;
// aclrtMemMallocPolicy: ACL_MEM_MALLOC_HUGE_FIRST.
constexpr int kMallocHugeFirst = 0;
// aclrtMemAttr: ACL_HBM_MEM (on-chip memory; parts without it answer with DDR).
constexpr int kHbmMemory = 1;
// aclInit's "repeat initialize": another part of the process initialised it.
constexpr aclError kRepeatInitialize = 100002;

struct AclRuntime {
  void* library = nullptr;
  std::string path;
  aclError (*Init)(const char*) = nullptr;
  aclError (*GetDeviceCount)(uint32_t*) = nullptr;
  aclError (*SetDevice)(int32_t) = nullptr;
  aclError (*ResetDevice)(int32_t) = nullptr;
  const char* (*GetSocName)() = nullptr;
  aclError (*GetMemInfo)(int, size_t*, size_t*) = nullptr;
  aclError (*Malloc)(void**, size_t, int) = nullptr;
  aclError (*Free)(void*) = nullptr;
  aclError (*MallocHost)(void**, size_t) = nullptr;
  aclError (*FreeHost)(void*) = nullptr;
  aclError (*Memcpy)(void*, size_t, const void*, size_t, int) = nullptr;
  aclError (*MemcpyAsync)(void*, size_t, const void*, size_t, int, aclrtStream) = nullptr;
  aclError (*CreateStream)(aclrtStream*) = nullptr;
  aclError (*DestroyStream)(aclrtStream) = nullptr;
  aclError (*SynchronizeStream)(aclrtStream) = nullptr;
  aclError (*CreateEvent)(aclrtEvent*) = nullptr;
  aclError (*DestroyEvent)(aclrtEvent) = nullptr;
  aclError (*RecordEvent)(aclrtEvent, aclrtStream) = nullptr;
  aclError (*StreamWaitEvent)(aclrtStream, aclrtEvent) = nullptr;
  aclError (*EventElapsedTime)(float*, aclrtEvent, aclrtEvent) = nullptr;
  const char* (*GetRecentErrMsg)() = nullptr;
  // Optional, for the device's core counts: aclrtGetDeviceInfo (aclrtDevAttr:
  // 101 AI Cores, 201 Vector Cores), else the older aclGetDeviceCapability
  // (aclDeviceInfo: 0 AI Cores, 1 Vector Cores, 2 the L2 buffer's bytes).
  aclError (*GetDeviceInfo)(uint32_t, int, int64_t*) = nullptr;
  aclError (*GetDeviceCapability)(uint32_t, int, int64_t*) = nullptr;

  // "aclrtMalloc returned 207001: <aclGetRecentErrMsg's text>".
  std::string Why(const char* call, aclError status) const;
  // Throws Error(kDevice...) with Why() unless status is 0.
  void Check(aclError status, const char* call) const;
};

// The runtime, loaded and initialised once per process; nullptr with *why
// set when it cannot be ("no AscendCL: libascendcl.so cannot be loaded ...").
std::shared_ptr<AclRuntime> LoadAclRuntime(std::string* why);

// The aclnn operator API: tensors (libnnopbase.so) and matmul (libopapi.so),
// as the CANN operator API reference declares them: aclCreateTensor,
// aclDestroyTensor, aclnnMatmulGetWorkspaceSize (cubeMathType 0: keep the
// inputs' type), aclnnMatmul. OPSCOPE_ACLNN_LIBRARY names one library that
// holds them all (tests); else libopapi.so, with libnnopbase.so for the
// tensors where libopapi.so lacks them.
using aclTensor = void;
using aclOpExecutor = void;
// aclDataType (ACL_FLOAT, ACL_FLOAT16, ACL_BF16) and aclFormat.
constexpr int kAclFloat = 0, kAclFloat16 = 1, kAclBf16 = 27;
constexpr int kFormatNchw = 0, kFormatNd = 2;
struct AclnnApi {
  aclTensor* (*CreateTensor)(const int64_t*, uint64_t, int, const int64_t*, int64_t, int,
                             const int64_t*, uint64_t, void*) = nullptr;
  int (*DestroyTensor)(const aclTensor*) = nullptr;
  int (*MatmulGetWorkspaceSize)(const aclTensor*, const aclTensor*, aclTensor*, int8_t, uint64_t*,
                                aclOpExecutor**) = nullptr;
  int (*Matmul)(void*, uint64_t, aclOpExecutor*, aclrtStream) = nullptr;
  // Convolution (null where this aclnn lacks it): aclCreateIntArray,
  // aclDestroyIntArray, aclnnConvolutionGetWorkspaceSize(input, weight, bias,
  // stride, padding, dilation, transposed, outputPadding, groups, output,
  // cubeMathType, ...), aclnnConvolution.
  void* (*CreateIntArray)(const int64_t*, uint64_t) = nullptr;
  int (*DestroyIntArray)(const void*) = nullptr;
  int (*ConvolutionGetWorkspaceSize)(const aclTensor*, const aclTensor*, const aclTensor*,
                                     const void*, const void*, const void*, bool, const void*,
                                     int64_t, aclTensor*, int8_t, uint64_t*,
                                     aclOpExecutor**) = nullptr;
  int (*Convolution)(void*, uint64_t, aclOpExecutor*, aclrtStream) = nullptr;
};
// Loaded once; nullptr with *why set when it cannot be.
const AclnnApi* LoadAclnn(std::string* why);

}  // namespace opscope::npu

#endif  // OPSCOPE_DEVICES_NPU_ACL_RUNTIME_H_
