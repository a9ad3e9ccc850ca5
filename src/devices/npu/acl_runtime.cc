// AscendCL's runtime, loaded at run time (acl_runtime.h).
#include "devices/npu/acl_runtime.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>

#include "core/dlsym.h"
#include "opscope/opscope.h"

namespace opscope::npu {
namespace {

using core::LoadSymbol;

}  // namespace

std::string AclRuntime::Why(const char* call, aclError status) const {
  const char* text = GetRecentErrMsg != nullptr ? GetRecentErrMsg() : nullptr;
  return fmt::format("{} returned {}{}", call, status,
                     text != nullptr && *text != 0 ? std::string(": ") + text : std::string());
}

void AclRuntime::Check(aclError status, const char* call) const {
  if (status != 0) throw Error(ErrorCode::kInternal, "AscendCL: " + Why(call, status));
}

std::shared_ptr<AclRuntime> LoadAclRuntime(std::string* why) {
  static std::mutex mutex;
  static std::shared_ptr<AclRuntime> loaded;
  static std::string failure;
  std::lock_guard lock(mutex);
  if (loaded || !failure.empty()) {
    if (!loaded && why != nullptr) *why = failure;
    return loaded;
  }
  const core::OpenedLibrary lib = core::OpenLibrary("OPSCOPE_ACL_LIBRARY", {"libascendcl.so"});
  void* library = lib.handle;
  const std::string& path = lib.path;
  if (library == nullptr) {
    failure = "no AscendCL: " + lib.error;
  } else {
    auto api = std::make_shared<AclRuntime>();
    api->library = library;
    api->path = path;
    const bool ok = LoadSymbol(library, "aclInit", api->Init) &&
                    LoadSymbol(library, "aclrtGetDeviceCount", api->GetDeviceCount) &&
                    LoadSymbol(library, "aclrtSetDevice", api->SetDevice) &&
                    LoadSymbol(library, "aclrtResetDevice", api->ResetDevice) &&
                    LoadSymbol(library, "aclrtGetMemInfo", api->GetMemInfo) &&
                    LoadSymbol(library, "aclrtMalloc", api->Malloc) &&
                    LoadSymbol(library, "aclrtFree", api->Free) &&
                    LoadSymbol(library, "aclrtMallocHost", api->MallocHost) &&
                    LoadSymbol(library, "aclrtFreeHost", api->FreeHost) &&
                    LoadSymbol(library, "aclrtMemcpy", api->Memcpy) &&
                    LoadSymbol(library, "aclrtMemcpyAsync", api->MemcpyAsync) &&
                    LoadSymbol(library, "aclrtCreateStream", api->CreateStream) &&
                    LoadSymbol(library, "aclrtDestroyStream", api->DestroyStream) &&
                    LoadSymbol(library, "aclrtSynchronizeStream", api->SynchronizeStream) &&
                    LoadSymbol(library, "aclrtCreateEvent", api->CreateEvent) &&
                    LoadSymbol(library, "aclrtDestroyEvent", api->DestroyEvent) &&
                    LoadSymbol(library, "aclrtRecordEvent", api->RecordEvent) &&
                    LoadSymbol(library, "aclrtStreamWaitEvent", api->StreamWaitEvent) &&
                    LoadSymbol(library, "aclrtEventElapsedTime", api->EventElapsedTime);
    LoadSymbol(library, "aclrtGetSocName", api->GetSocName);
    LoadSymbol(library, "aclGetRecentErrMsg", api->GetRecentErrMsg);
    LoadSymbol(library, "aclrtGetDeviceInfo", api->GetDeviceInfo);
    LoadSymbol(library, "aclGetDeviceCapability", api->GetDeviceCapability);
    if (!ok) {
      const char* e = ::dlerror();
      failure =
          fmt::format("AscendCL at {} lacks a runtime function ({})", path, e != nullptr ? e : "");
      ::dlclose(library);
    } else if (const aclError s = api->Init(nullptr); s != 0 && s != kRepeatInitialize) {
      failure = "AscendCL: " + api->Why("aclInit", s);
      ::dlclose(library);
    } else {
      loaded = api;  // never unloaded: devices and the runtime live as long as the process
    }
  }
  if (!loaded && why != nullptr) *why = failure;
  return loaded;
}

const AclnnApi* LoadAclnn(std::string* why) {
  static std::mutex mutex;
  static AclnnApi api;
  static bool tried = false, ok = false;
  static std::string failure;
  std::lock_guard lock(mutex);
  if (!tried) {
    tried = true;
    const core::OpenedLibrary lib = core::OpenLibrary("OPSCOPE_ACLNN_LIBRARY", {"libopapi.so"});
    void* opapi = lib.handle;
    const std::string& ops = lib.path;
    if (opapi == nullptr) {
      failure = "no aclnn: " + lib.error;
    } else {
      void* base = opapi;
      if (::dlsym(opapi, "aclCreateTensor") == nullptr && !lib.overridden) {
        base = ::dlopen("libnnopbase.so", RTLD_NOW | RTLD_LOCAL);
      }
      ok = base != nullptr && LoadSymbol(base, "aclCreateTensor", api.CreateTensor) &&
           LoadSymbol(base, "aclDestroyTensor", api.DestroyTensor) &&
           LoadSymbol(opapi, "aclnnMatmulGetWorkspaceSize", api.MatmulGetWorkspaceSize) &&
           LoadSymbol(opapi, "aclnnMatmul", api.Matmul);
      if (ok) {  // optional: convolution
        const bool conv = LoadSymbol(base, "aclCreateIntArray", api.CreateIntArray) &&
                          LoadSymbol(base, "aclDestroyIntArray", api.DestroyIntArray) &&
                          LoadSymbol(opapi, "aclnnConvolutionGetWorkspaceSize",
                                     api.ConvolutionGetWorkspaceSize) &&
                          LoadSymbol(opapi, "aclnnConvolution", api.Convolution);
        if (!conv) api.Convolution = nullptr;
      }
      if (!ok) {
        failure = fmt::format(
            "aclnn at {} lacks aclCreateTensor, aclDestroyTensor, "
            "aclnnMatmulGetWorkspaceSize or aclnnMatmul",
            ops);
      }
    }
  }
  if (!ok && why != nullptr) *why = failure;
  return ok ? &api : nullptr;
}

}  // namespace opscope::npu
