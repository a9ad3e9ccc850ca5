#include "devices/device.h"

#include <cstdlib>
#include <cstring>

#include "opscope/opscope.h"

namespace opscope::devices {

const char* Name(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHostToDevice: return "h2d";
    case CopyKind::kDeviceToHost: return "d2h";
    case CopyKind::kDeviceToDevice: return "d2d";
    case CopyKind::kBidirectional: return "bidir";
  }
  return "?";
}

std::string ComputeUnitsText(const DeviceProperties& p) {
  const char* unit = p.kind == "cpu"    ? "threads"
                     : p.kind == "cuda" ? "SMs"
                     : p.kind == "npu"  ? "AI Cores"
                                        : "compute units";
  return std::to_string(p.compute_units) + " " + unit;
}

const char* Name(HostMemory memory) {
  return memory == HostMemory::kPinned ? "pinned" : "pageable";
}

void* Device::AllocateHost(size_t bytes, HostMemory) {
  void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (p == nullptr) {
    throw Error(ErrorCode::kResourceExhausted,
                "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  }
  return p;
}

void Device::FreeHost(void* pointer, HostMemory) { std::free(pointer); }

void Device::Upload(void* device_dst, const void* host_src, size_t bytes) {
  if (bytes > 0) std::memcpy(device_dst, host_src, bytes);
}

void Device::Download(void* host_dst, const void* device_src, size_t bytes) {
  if (bytes > 0) std::memcpy(host_dst, device_src, bytes);
}

void Device::CopyBidirectional(void*, const void*, void*, const void*, size_t) {
  throw Error(ErrorCode::kUnsupported,
              properties().id + ": " + CopyApplicability(CopyKind::kBidirectional).text);
}

const char* Name(StreamOp op) {
  switch (op) {
    case StreamOp::kCopy: return "copy";
    case StreamOp::kScale: return "scale";
    case StreamOp::kAdd: return "add";
    case StreamOp::kTriad: return "triad";
  }
  return "?";
}

std::unique_ptr<Network> Device::CreateNetwork(const NetworkSpec&, const NetworkOptions&) {
  throw Error(ErrorCode::kUnsupported, properties().id + " has no network layers in this build");
}

int ArraysTouched(StreamOp op) { return op == StreamOp::kCopy || op == StreamOp::kScale ? 2 : 3; }

}  // namespace opscope::devices
