#include "devices/cuda/cupti_tracer.h"

#include <cupti.h>
#include <fmt/format.h>

#include <cstdlib>
#include <set>

#include "core/clock.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::cuda {
namespace {

void CheckCupti(CUptiResult result, const char* what) {
  if (result != CUPTI_SUCCESS) {
    const char* text = nullptr;
    cuptiGetResultString(result, &text);
    throw Error(result == CUPTI_ERROR_NOT_INITIALIZED || result == CUPTI_ERROR_NOT_SUPPORTED ||
                        result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
                    ? ErrorCode::kUnsupported
                    : ErrorCode::kInternal,
                fmt::format("CUPTI {}: {}", what, text != nullptr ? text : "unknown error"));
  }
}

// What the tracer records; a trace without the optional kinds is still useful,
// so a platform that refuses one gets a trace that says so.
struct Kind {
  CUpti_ActivityKind kind;
  const char* name;
  bool required;
};
constexpr Kind kKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels", true},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy", true},
    {CUPTI_ACTIVITY_KIND_MEMSET, "memset", true},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API", true},
    {CUPTI_ACTIVITY_KIND_DRIVER, "driver API", false},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronization", false},
    {CUPTI_ACTIVITY_KIND_CONTEXT, "contexts", false},
};

uint64_t CUPTIAPI MonotonicTimestamp() { return static_cast<uint64_t>(core::MonotonicNs()); }

// "cudaLaunchKernel" from "cudaLaunchKernel_v7000", as Kineto shows it.
std::string ApiName(bool driver, uint32_t cbid) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid,
                           &name) != CUPTI_SUCCESS ||
      name == nullptr) {
    return {};
  }
  std::string s(name);
  const size_t v = s.rfind("_v");
  if (v != std::string::npos && v + 2 < s.size() &&
      s.find_first_not_of("0123456789", v + 2) == std::string::npos) {
    s.resize(v);
  }
  return s;
}

}  // namespace

CuptiTracer& CuptiTracer::Instance() {
  static auto* tracer = new CuptiTracer();  // never destroyed: CUPTI may call back at exit
  return *tracer;
}

void CUPTIAPI CuptiTracer::BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  CuptiTracer& t = Instance();
  std::lock_guard lock(t.mutex_);
  *max_records = 0;
  if (t.free_buffers_.empty() && t.allocated_buffers_ < t.limits_.max_buffers) {
    void* p = std::aligned_alloc(8, t.limits_.buffer_bytes);
    if (p != nullptr) {
      t.free_buffers_.push_back(static_cast<uint8_t*>(p));
      ++t.allocated_buffers_;
    }
  }
  if (t.free_buffers_.empty()) {
    // Every buffer is in flight: CUPTI drops records and counts them.
    ++t.refused_buffers_;
    *buffer = nullptr;
    *size = 0;
    return;
  }
  *buffer = t.free_buffers_.back();
  t.free_buffers_.pop_back();
  *size = t.limits_.buffer_bytes;
}

void CUPTIAPI CuptiTracer::BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                           size_t, size_t valid) {
  Instance().Consume(context, stream_id, buffer, valid);
}

void CuptiTracer::Consume(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t valid) {
  std::lock_guard lock(mutex_);
  if (buffer == nullptr) return;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (trace_.events.size() >= limits_.max_events) {
      ++trace_.dropped;
      continue;
    }
    converter_.Convert(record, trace_);
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) {
    trace_.dropped += dropped;
  }
  free_buffers_.push_back(buffer);
}

void CuptiTracer::SampleClock() {
  uint64_t device = 0;
  const int64_t before = core::MonotonicNs();
  const CUptiResult result = cuptiGetTimestamp(&device);
  const int64_t after = core::MonotonicNs();
  if (result == CUPTI_SUCCESS) clock_.AddSample(before, device, after);
}

void CuptiTracer::Start() {
  std::lock_guard lock(mutex_);
  if (active_) throw Error(ErrorCode::kFailedPrecondition, "the CUDA tracer is already recording");
  trace_ = collect::DeviceTrace{};
  converter_ = RecordConverter(ApiName, nullptr);  // raw timestamps, aligned at Stop()
  clock_ = ClockAligner{};
  refused_buffers_ = 0;
  while (allocated_buffers_ < limits_.preallocated_buffers) {
    void* p = std::aligned_alloc(8, limits_.buffer_bytes);
    if (p == nullptr) break;
    free_buffers_.push_back(static_cast<uint8_t*>(p));
    ++allocated_buffers_;
  }
  if (!callbacks_registered_) {
    // System thread ids, so host calls land on the threads of the CPU events.
    CheckCupti(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "cuptiSetThreadIdType");
    own_clock_ = cuptiActivityRegisterTimestampCallback(MonotonicTimestamp) == CUPTI_SUCCESS;
    CheckCupti(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted),
               "cuptiActivityRegisterCallbacks");
    callbacks_registered_ = true;
  }
  refused_kinds_.clear();
  for (const Kind& k : kKinds) {
    const CUptiResult result = cuptiActivityEnable(k.kind);
    if (result == CUPTI_SUCCESS) continue;
    if (k.required) {
      for (const Kind& j : kKinds) cuptiActivityDisable(j.kind);
      CheckCupti(result, (std::string("cuptiActivityEnable (") + k.name + ")").c_str());
    }
    const char* text = nullptr;
    cuptiGetResultString(result, &text);
    refused_kinds_ += fmt::format("{}{} ({})", refused_kinds_.empty() ? "" : ", ", k.name,
                                  text != nullptr ? text : "refused");
  }
  active_ = true;
  SampleClock();
}

collect::DeviceTrace CuptiTracer::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (!active_) return {};
    SampleClock();
  }
  // Flushing calls BufferCompleted, which takes the mutex.
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (const Kind& k : kKinds) cuptiActivityDisable(k.kind);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(mutex_);
  active_ = false;
  collect::DeviceTrace out = std::move(trace_);
  trace_ = collect::DeviceTrace{};
  for (collect::DeviceEvent& e : out.events) {
    e.start_ns = clock_.ToHostNs(static_cast<uint64_t>(e.start_ns));
    e.end_ns = clock_.ToHostNs(static_cast<uint64_t>(e.end_ns));
  }
  converter_.ResolveDevices(out);
  uint32_t version = 0;
  cuptiGetVersion(&version);
  out.source = fmt::format("CUPTI activity API (version {})", version);
  if (!refused_kinds_.empty()) out.source += "; not recorded here: " + refused_kinds_;
  out.clock = own_clock_
                  ? "CUPTI stamps with CLOCK_MONOTONIC (timestamp callback); " + clock_.Describe()
                  : "CUPTI's clock mapped onto CLOCK_MONOTONIC: " + clock_.Describe();
  if (refused_buffers_ > 0) {
    out.clock += fmt::format("; {} buffer requests refused at the {}-buffer cap", refused_buffers_,
                             limits_.max_buffers);
  }
  std::set<uint32_t> devices;
  for (const collect::DeviceEvent& e : out.events) {
    if (!collect::OnHost(e.kind)) devices.insert(e.device);
  }
  for (const uint32_t d : devices) {
    if (!out.devices_json.empty()) out.devices_json += ',';
    out.devices_json += fmt::format("{{\"id\":\"cuda:{}\",\"type\":\"cuda\",\"name\":", d);
    core::AppendJsonString(out.devices_json, device_namer_ ? device_namer_(d) : std::string());
    out.devices_json += '}';
  }
  return out;
}

}  // namespace opscope::cuda
