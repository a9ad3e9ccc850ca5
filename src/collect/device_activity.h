// Device activity in a trace: what an accelerator's tracer (CUPTI for CUDA)
// hands the profiler, in a form with no vendor types, so that the trace writer,
// the CPU-scope attribution and their tests need no SDK.
//
// A tracer registers itself as the ActivitySource of its Activity; a Profiler
// asked for that activity starts it with each collection and, when the
// collection closes, takes its events. Timestamps are CLOCK_MONOTONIC
// nanoseconds, the clock of the CPU events.
#ifndef OPSCOPE_COLLECT_DEVICE_ACTIVITY_H_
#define OPSCOPE_COLLECT_DEVICE_ACTIVITY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "opscope/opscope.h"

namespace opscope::collect {

// The categories are Kineto's, so that every reader of PyTorch traces reads ours.
enum class DeviceEventKind : uint8_t { kKernel, kMemcpy, kMemset, kRuntime, kDriver, kSync };
const char* Category(DeviceEventKind kind);  // "kernel", "gpu_memcpy", ... "cuda_sync"
// Runtime and driver calls run on a host thread; the rest on a device stream.
inline bool OnHost(DeviceEventKind kind) {
  return kind == DeviceEventKind::kRuntime || kind == DeviceEventKind::kDriver;
}

constexpr uint32_t kNoStream = 0xFFFFFFFFu;

struct DeviceEvent {
  DeviceEventKind kind = DeviceEventKind::kKernel;
  uint32_t name = 0;  // index into DeviceTrace::names
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t device = 0;
  uint32_t context = 0;
  uint32_t stream = kNoStream;
  uint32_t thread_id = 0;    // host calls: the OS thread id
  uint32_t correlation = 0;  // pairs a host call with the device work it launched
  uint64_t bytes = 0;        // copies and memsets
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int32_t registers = 0;     // kernels: per thread
  int32_t shared_bytes = 0;  // kernels: static + dynamic per block
  int64_t event_id = -1;     // synchronization on a CUDA event
};

struct DeviceTrace {
  std::vector<std::string> names;
  std::vector<DeviceEvent> events;
  uint64_t dropped = 0;      // records the tracer lost (buffer full), never silent
  std::string source;        // "CUPTI activity API 13.0"
  std::string clock;         // how device timestamps reached CLOCK_MONOTONIC
  std::string devices_json;  // members of otherData.devices, already encoded, or empty

  uint32_t Intern(std::string_view name);

 private:
  std::unordered_map<std::string, uint32_t> index_;
};

class ActivitySource {
 public:
  virtual ~ActivitySource() = default;
  // Begins recording; throws Error when the device cannot be traced.
  virtual void Start() = 0;
  // Ends recording: flushes and hands over everything recorded since Start().
  virtual DeviceTrace Stop() = 0;
};

// Registers the tracer of `activity` (nullptr unregisters). The source must
// outlive its registration. A Profiler with Activity::kCuda and no source throws.
void RegisterActivitySource(Activity activity, ActivitySource* source);
ActivitySource* FindActivitySource(Activity activity);

// One CPU span of a thread, for attributing host calls to the opscope scope that
// made them.
struct HostSpan {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t index;  // the caller's own handle
};

// For each host call of `trace` (runtime and driver), the innermost span of
// `spans_by_thread[thread_id]` that encloses it, as its `index`, or -1. Spans of
// one thread nest (scopes are blocks) and are sorted by start, the longer first.
std::vector<int64_t> AttributeHostCalls(
    const DeviceTrace& trace,
    const std::unordered_map<uint32_t, std::vector<HostSpan>>& spans_by_thread);

}  // namespace opscope::collect

#endif  // OPSCOPE_COLLECT_DEVICE_ACTIVITY_H_
