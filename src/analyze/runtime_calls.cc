// What a host runtime call does to the host and its device (runtime_calls.h).
#include "analyze/runtime_calls.h"

#include <string>

#include "analyze/names.h"
#include "core/text.h"

namespace opscope::analyze {

bool IsStreamWaitEvent(std::string_view name) {
  return Contains(Lower(BaseName(name)), "streamwaitevent");
}

RuntimeKind RuntimeKindOf(std::string_view name) {
  // An operator's execute call that compiles only on a cache miss
  // (aclopCompileAndExecute) is the launch path; a compilation it does
  // shows as its own nested call (opCompile).
  if (Contains(Lower(name), "compileandexecute")) return RuntimeKind::kLaunch;
  const std::string_view compile = CompileKind(name);
  if (compile == "memory allocation") return RuntimeKind::kSetup;
  if (!compile.empty()) return RuntimeKind::kCompile;
  const std::string n = Lower(BaseName(name));
  // Asynchronous: it enqueues a wait on the device; the host goes on.
  if (IsStreamWaitEvent(name) || Contains(n, "streamwaitvalue")) return RuntimeKind::kLaunch;
  if (Contains(n, "synchronize") || Contains(n, "eventquery") || Contains(n, "streamquery")) {
    return RuntimeKind::kBlocked;  // waits for the device, or polls it
  }
  if (Contains(n, "memcpy")) {
    return Contains(n, "async") ? RuntimeKind::kAsyncCopy : RuntimeKind::kBlocked;
  }
  // Set-up, and teardown at exit (modules unloaded, contexts destroyed):
  // once per run, not per step. A graph (model) loaded onto an Ascend
  // device is its instantiation: AscendCL's aclmdlLoad*, and CANN's
  // model-level ModelLoad that msprof and torch_npu record (GE's profiling
  // design, docs/en/design/features/profiling.md: "how long does model
  // loading take"); running it (ModelExecute, aclmdlExecute) is a launch.
  for (const std::string_view setup :
       {"streamcreate",     "streamdestroy", "eventcreate",       "eventdestroy",    "graphcreate",
        "graphinstantiate", "graphdestroy",  "graphexecdestroy",  "setdevice",       "devicereset",
        "ctxcreate",        "ctxdestroy",    "primaryctxrelease", "primaryctxreset", "moduleunload",
        "libraryunload",    "hostregister",  "hostunregister",    "createcontext",   "createstream",
        "modelload",        "modelunload",   "aclmdlload",        "aclmdlunload"}) {
    if (Contains(n, setup)) return RuntimeKind::kSetup;
  }
  return RuntimeKind::kLaunch;
}

bool CopyBlocks(const TraceModel& model, size_t task) {
  if (task == SIZE_MAX || model.cls[task] != EventClass::kMemcpy) return false;
  const CopyInfo copy = model.Copy(task);
  return copy.host_memory == HostMemory::kPageable ||
         (copy.direction == CopyDirection::kDeviceToHost &&
          copy.host_memory != HostMemory::kPinned);
}

size_t CorrelationIndex::Find(int64_t correlation) const {
  if (correlation < 0) return SIZE_MAX;
  uint32_t t = 0;
  if (dense_) {
    if (correlation >= lo_ && static_cast<size_t>(correlation - lo_) < table_.size()) {
      t = table_[static_cast<size_t>(correlation - lo_)];
    }
  } else if (const uint32_t* found = map_.Find(correlation)) {
    t = *found;
  }
  return t == 0 ? SIZE_MAX : t - 1;
}

}  // namespace opscope::analyze
