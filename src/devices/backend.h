// Accelerator backends as plugins. A backend whose SDK libraries may be missing
// on a user's machine (CUDA) is built as its own shared object,
// libopscope_<kind>.so, loaded with dlopen the first time one of its devices is
// asked for: opscope itself starts and runs on the CPU without those libraries,
// and says why a backend cannot load when it cannot.
//
// The plugin resolves opscope's own symbols (Error, the profiler's registry of
// activity tracers) from the program that loads it, which exports them.
#ifndef OPSCOPE_DEVICES_BACKEND_H_
#define OPSCOPE_DEVICES_BACKEND_H_

#include <memory>
#include <string>

#include "devices/device.h"

namespace opscope::devices {

struct DeviceOptions;

constexpr int kBackendAbi = 1;

struct BackendApi {
  int abi = kBackendAbi;
  const char* kind = "";  // "cuda"
  // The devices present; 0 with *why set when there are none.
  int (*count_devices)(std::string* why) = nullptr;
  std::unique_ptr<Device> (*open_device)(int ordinal) = nullptr;
  // Registers the backend's activity tracer (Activity::kCuda) with the profiler.
  void (*enable_tracing)() = nullptr;
  // The injection library that traces unmodified programs, next to the plugin.
  const char* injection_library = "";
};

// The exported entry point of a backend plugin: extern "C" const BackendApi* opscope_backend_v1().
#define OPSCOPE_BACKEND_ENTRY "opscope_backend_v1"

// The backend of `kind`, loaded once; nullptr with *why set when it cannot load.
// Looks for libopscope_<kind>.so in $OPSCOPE_BACKEND_DIR, next to the program,
// and in ../lib/opscope relative to it.
const BackendApi* LoadBackend(const std::string& kind, std::string* why);
// Where LoadBackend found (or would look for) the plugin's directory.
std::string BackendDirectory(const std::string& kind);

}  // namespace opscope::devices

#endif  // OPSCOPE_DEVICES_BACKEND_H_
