#include "devices/cuda/cupti_records.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <memory>

namespace opscope::cuda {

void ClockAligner::AddSample(int64_t host_before_ns, uint64_t device_ns, int64_t host_after_ns) {
  const double host =
      (static_cast<double>(host_before_ns) + static_cast<double>(host_after_ns)) / 2;
  const int64_t half_width = (host_after_ns - host_before_ns + 1) / 2;
  uncertainty_ns_ = std::max(uncertainty_ns_, half_width);
  if (samples_ == 0) {
    first_device_ = device_ns;
    first_host_ = host;
  }
  last_device_ = device_ns;
  last_host_ = host;
  ++samples_;
  const double span = static_cast<double>(last_device_) - static_cast<double>(first_device_);
  // A rate from samples closer than a millisecond is noise: keep 1.
  rate_ = span > 1e6 ? (last_host_ - first_host_) / span : 1.0;
}

int64_t ClockAligner::ToHostNs(uint64_t device_ns) const {
  if (samples_ == 0) return static_cast<int64_t>(device_ns);
  const double delta = static_cast<double>(static_cast<int64_t>(device_ns - first_device_));
  return static_cast<int64_t>(std::llround(first_host_ + delta * rate_));
}

std::string ClockAligner::Describe() const {
  if (samples_ == 0) return "device timestamps used as they are (no clock samples)";
  const double offset = first_host_ - static_cast<double>(first_device_);
  return fmt::format("CLOCK_MONOTONIC = device + {:.0f} ns, rate {:.9f} ({} samples, +-{} ns each)",
                     offset, rate_, samples_, uncertainty_ns_);
}

std::string DemangleKernelName(const char* name) {
  if (name == nullptr) return "(unnamed kernel)";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out != nullptr ? std::string(out.get()) : std::string(name);
}

namespace {

const char* MemoryKindName(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "Device Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "Managed Static";
    default: return "Unknown";
  }
}

const char* CopyKindName(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "Unknown";
  }
}

}  // namespace

std::string MemcpyName(uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind) {
  return fmt::format("Memcpy {} ({} -> {})", CopyKindName(copy_kind), MemoryKindName(src_kind),
                     MemoryKindName(dst_kind));
}

std::string MemsetName(uint16_t memory_kind) {
  return fmt::format("Memset ({})", MemoryKindName(memory_kind));
}

std::string SyncName(uint32_t sync_type) {
  switch (sync_type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "Event Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "Stream Wait Event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "Stream Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "Context Sync";
    default: return "Unknown Sync";
  }
}

bool RecordConverter::Convert(const CUpti_Activity* record, collect::DeviceTrace& trace) {
  using collect::DeviceEventKind;
  collect::DeviceEvent e;
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      e.kind = DeviceEventKind::kKernel;
      e.name = trace.Intern(DemangleKernelName(k->name));
      PlaceOnDevice(*k, e);
      e.grid[0] = k->gridX, e.grid[1] = k->gridY, e.grid[2] = k->gridZ;
      e.block[0] = k->blockX, e.block[1] = k->blockY, e.block[2] = k->blockZ;
      e.registers = k->registersPerThread;
      e.shared_bytes = k->staticSharedMemory + k->dynamicSharedMemory;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      e.kind = DeviceEventKind::kMemcpy;
      e.name = trace.Intern(MemcpyName(m->copyKind, m->srcKind, m->dstKind));
      PlaceOnDevice(*m, e);
      e.bytes = m->bytes;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      e.kind = DeviceEventKind::kMemset;
      e.name = trace.Intern(MemsetName(m->memoryKind));
      PlaceOnDevice(*m, e);
      e.bytes = m->bytes;
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      const bool driver = record->kind == CUPTI_ACTIVITY_KIND_DRIVER;
      e.kind = driver ? DeviceEventKind::kDriver : DeviceEventKind::kRuntime;
      std::string name = namer_ ? namer_(driver, a->cbid) : std::string();
      if (name.empty()) name = fmt::format("{} API {}", driver ? "driver" : "runtime", a->cbid);
      e.name = trace.Intern(name);
      e.start_ns = Host(a->start);
      e.end_ns = Host(a->end);
      e.thread_id = a->threadId;
      e.correlation = a->correlationId;
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      e.kind = DeviceEventKind::kSync;
      e.name = trace.Intern(SyncName(s->type));
      e.start_ns = Host(s->start);
      e.end_ns = Host(s->end);
      e.context = s->contextId;
      e.stream = s->streamId;
      e.correlation = s->correlationId;
      if (s->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE ||
          s->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT) {
        e.event_id = s->cudaEventId;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      const auto* c = reinterpret_cast<const CUpti_ActivityContext3*>(record);
      device_of_context_[c->contextId] = c->deviceId;
      return true;
    }
    default: ++skipped_; return false;
  }
  if (e.end_ns < e.start_ns) e.end_ns = e.start_ns;
  trace.events.push_back(e);
  return true;
}

void RecordConverter::ResolveDevices(collect::DeviceTrace& trace) const {
  for (collect::DeviceEvent& e : trace.events) {
    if (e.kind != collect::DeviceEventKind::kSync) continue;
    const auto it = device_of_context_.find(e.context);
    if (it != device_of_context_.end()) e.device = it->second;
  }
}

}  // namespace opscope::cuda
