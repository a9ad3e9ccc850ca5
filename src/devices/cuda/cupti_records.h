// CUPTI activity records -> opscope device events, and the device clock ->
// CLOCK_MONOTONIC. Pure functions of the records: no CUPTI library, no GPU, so
// the conversion is unit-tested on synthetic records.
#ifndef OPSCOPE_DEVICES_CUDA_CUPTI_RECORDS_H_
#define OPSCOPE_DEVICES_CUDA_CUPTI_RECORDS_H_

#include <cupti_activity.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "collect/device_activity.h"

namespace opscope::cuda {

// Maps the tracer's timestamps onto CLOCK_MONOTONIC nanoseconds. Each sample is a
// device timestamp read between two host readings; the map is the line through
// the first and last samples' midpoints (offset only with one sample). With the
// timestamp callback registered, CUPTI stamps with our clock and the map is the
// identity, which the samples confirm.
class ClockAligner {
 public:
  void AddSample(int64_t host_before_ns, uint64_t device_ns, int64_t host_after_ns);
  int64_t ToHostNs(uint64_t device_ns) const;
  // Worst half-width of the samples' host windows: the alignment's uncertainty.
  int64_t uncertainty_ns() const { return uncertainty_ns_; }
  int samples() const { return samples_; }
  double rate() const { return rate_; }
  std::string Describe() const;

 private:
  int samples_ = 0;
  uint64_t first_device_ = 0, last_device_ = 0;
  double first_host_ = 0, last_host_ = 0;
  double rate_ = 1.0;
  int64_t uncertainty_ns_ = 0;
};

// Names a runtime (or driver) API callback id, e.g. "cudaLaunchKernel".
using ApiNamer = std::function<std::string(bool driver, uint32_t cbid)>;

// "void gemm<float>(...)" from "_Z4gemmIfEvv..."; names that are not mangled stay.
std::string DemangleKernelName(const char* name);
// Kineto's wording: "Memcpy HtoD (Pinned -> Device)", "Memset (Device)".
std::string MemcpyName(uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind);
std::string MemsetName(uint16_t memory_kind);
std::string SyncName(uint32_t sync_type);

class RecordConverter {
 public:
  RecordConverter(ApiNamer namer, const ClockAligner* clock)
      : namer_(std::move(namer)), clock_(clock) {}
  // Appends the event of one record; false for kinds it does not convert
  // (counted in skipped()).
  bool Convert(const CUpti_Activity* record, collect::DeviceTrace& trace);
  // Synchronization records name a context, not a device: fills in the device of
  // each from the context records seen (CUPTI_ACTIVITY_KIND_CONTEXT).
  void ResolveDevices(collect::DeviceTrace& trace) const;
  uint64_t skipped() const { return skipped_; }

 private:
  // Where and when a piece of device work ran: fields every such record has.
  template <typename R>
  void PlaceOnDevice(const R& r, collect::DeviceEvent& e) const {
    e.start_ns = Host(r.start);
    e.end_ns = Host(r.end);
    e.device = r.deviceId;
    e.context = r.contextId;
    e.stream = r.streamId;
    e.correlation = r.correlationId;
  }
  int64_t Host(uint64_t ts) const {
    return clock_ != nullptr ? clock_->ToHostNs(ts) : static_cast<int64_t>(ts);
  }
  ApiNamer namer_;
  const ClockAligner* clock_;
  uint64_t skipped_ = 0;
  std::unordered_map<uint32_t, uint32_t> device_of_context_;
};

}  // namespace opscope::cuda

#endif  // OPSCOPE_DEVICES_CUDA_CUPTI_RECORDS_H_
