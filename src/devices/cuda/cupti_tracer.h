// The CUDA activity tracer: CUPTI's activity API with pre-allocated, bounded
// buffers. Records kernels, copies, memsets, runtime and driver calls and
// synchronization; counts what it drops. One per process (CUPTI's callbacks are
// global), registered with the profiler as the source of Activity::kCuda.
#ifndef OPSCOPE_DEVICES_CUDA_CUPTI_TRACER_H_
#define OPSCOPE_DEVICES_CUDA_CUPTI_TRACER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "collect/device_activity.h"
#include "devices/cuda/cupti_records.h"

namespace opscope::cuda {

struct TracerLimits {
  size_t buffer_bytes = size_t{8} << 20;  // one CUPTI buffer
  int preallocated_buffers = 4;           // allocated at Start()
  int max_buffers = 32;                   // in flight at once; past it CUPTI drops records
  size_t max_events = size_t{4} << 20;    // converted events kept; past it they are dropped
};

class CuptiTracer final : public collect::ActivitySource {
 public:
  // `device_name` names device N for the trace's metadata (may be empty).
  static CuptiTracer& Instance();
  void set_device_namer(std::function<std::string(uint32_t)> namer) {
    device_namer_ = std::move(namer);
  }
  void set_limits(const TracerLimits& limits) { limits_ = limits; }

  void Start() override;
  collect::DeviceTrace Stop() override;

 private:
  CuptiTracer() = default;
  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                       size_t size, size_t valid);
  void Consume(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t valid);
  void SampleClock();

  std::mutex mutex_;
  TracerLimits limits_;
  std::vector<uint8_t*> free_buffers_;
  int allocated_buffers_ = 0;
  uint64_t refused_buffers_ = 0;
  collect::DeviceTrace trace_;
  RecordConverter converter_{nullptr, nullptr};
  ClockAligner clock_;
  bool own_clock_ = false;  // CUPTI stamps with CLOCK_MONOTONIC through our callback
  bool active_ = false;
  bool callbacks_registered_ = false;
  std::string refused_kinds_;  // optional kinds this platform refused, for the trace
  std::function<std::string(uint32_t)> device_namer_;
};

}  // namespace opscope::cuda

#endif  // OPSCOPE_DEVICES_CUDA_CUPTI_TRACER_H_
