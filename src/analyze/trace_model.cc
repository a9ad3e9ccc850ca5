#include "analyze/trace_model.h"

namespace opscope::analyze {

const char* Name(EventClass cls) {
  switch (cls) {
    case EventClass::kHostOp: return "host_op";
    case EventClass::kAnnotation: return "annotation";
    case EventClass::kStep: return "step";
    case EventClass::kKernel: return "kernel";
    case EventClass::kMemcpy: return "memcpy";
    case EventClass::kMemset: return "memset";
    case EventClass::kRuntime: return "runtime";
    case EventClass::kSync: return "sync";
    case EventClass::kDeviceAnnotation: return "device_annotation";
    case EventClass::kPython: return "python";
    case EventClass::kDerived: return "derived";
    case EventClass::kOther: return "other";
  }
  return "?";
}

bool IsDevice(EventClass cls) {
  return cls == EventClass::kKernel || cls == EventClass::kMemcpy || cls == EventClass::kMemset;
}

uint32_t TraceModel::Intern(std::string_view text) {
  if (strings_.empty()) {
    storage_.emplace_back();
    strings_.push_back(&storage_.back());
    ids_.emplace(storage_.back(), 0);
  }
  const auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  storage_.emplace_back(text);
  const auto id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(&storage_.back());
  ids_.emplace(storage_.back(), id);
  return id;
}

uint32_t TraceModel::TrackFor(std::string_view pid, std::string_view tid) {
  // Consecutive events mostly share a track: skip the lookup then.
  if (last_track_ != UINT32_MAX && tracks[last_track_].pid == pid &&
      tracks[last_track_].tid == tid) {
    return last_track_;
  }
  auto key = std::make_pair(std::string(pid), std::string(tid));
  const auto it = track_ids_.find(key);
  if (it != track_ids_.end()) return last_track_ = it->second;
  const auto id = static_cast<uint32_t>(tracks.size());
  tracks.push_back(Track{key.first, key.second, key.first, key.second});
  track_ids_.emplace(std::move(key), id);
  return last_track_ = id;
}

}  // namespace opscope::analyze
