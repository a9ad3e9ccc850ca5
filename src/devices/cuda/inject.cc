// libopscope_cuda_inject.so: traces an unmodified CUDA program. The CUDA driver
// loads the library named by CUDA_INJECTION64_PATH when the program initializes
// CUDA and calls InitializeInjection(); `opscope trace` sets the variable. The
// library starts a profiler with CUPTI's activity tracer and, when the program
// exits, writes <OPSCOPE_TRACE_DIR>/opscope_cuda.<pid>.json (.json.gz with
// OPSCOPE_TRACE_GZIP=1), which `opscope trace` collects.
#include <cuda.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>

#include "collect/device_activity.h"
#include "devices/cuda/cupti_tracer.h"
#include "opscope/opscope.h"

namespace {

opscope::Profiler* g_profiler = nullptr;

std::string DeviceName(uint32_t ordinal) {
  CUdevice device = 0;
  char name[256] = {0};
  if (cuDeviceGet(&device, static_cast<int>(ordinal)) != CUDA_SUCCESS ||
      cuDeviceGetName(name, sizeof name - 1, device) != CUDA_SUCCESS) {
    return {};
  }
  return name;
}

void Finish() {
  if (g_profiler == nullptr) return;
  try {
    g_profiler->Stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "opscope trace: writing the trace failed: %s\n", e.what());
  }
}

int Initialize() {
  const char* dir = std::getenv("OPSCOPE_TRACE_DIR");
  if (dir == nullptr || *dir == 0) {
    std::fprintf(stderr,
                 "opscope trace: OPSCOPE_TRACE_DIR is not set; run the program under "
                 "`opscope trace -o FILE -- CMD`\n");
    return 0;
  }
  const char* gzip = std::getenv("OPSCOPE_TRACE_GZIP");
  const bool compress = gzip != nullptr && std::string(gzip) == "1";
  auto& tracer = opscope::cuda::CuptiTracer::Instance();
  tracer.set_device_namer(DeviceName);
  opscope::collect::RegisterActivitySource(opscope::Activity::kCuda, &tracer);
  opscope::ProfilerOptions options;
  options.activities = {opscope::Activity::kCpu, opscope::Activity::kCuda};
  const std::string path = std::string(dir) + "/opscope_cuda." + std::to_string(::getpid()) +
                           (compress ? ".json.gz" : ".json");
  options.on_trace_ready = [path](opscope::TraceData& trace) { trace.Export(path); };
  g_profiler = new opscope::Profiler(std::move(options));
  g_profiler->Start();
  // Registered after the CUDA runtime's own exit handlers, so it runs before them.
  std::atexit(Finish);
  return 1;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;
  static int result = 0;
  std::call_once(once, [] {
    try {
      result = Initialize();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "opscope trace: cannot start CUDA tracing: %s\n", e.what());
      result = 0;
    }
  });
  return result;
}
