#include "collect/device_activity.h"

#include <algorithm>
#include <mutex>
#include <numeric>

namespace opscope::collect {
namespace {

std::mutex& SourcesMutex() {
  static std::mutex mutex;
  return mutex;
}

ActivitySource*& Source(Activity activity) {
  static ActivitySource* sources[2] = {nullptr, nullptr};
  return sources[activity == Activity::kCuda ? 1 : 0];
}

}  // namespace

const char* Category(DeviceEventKind kind) {
  switch (kind) {
    case DeviceEventKind::kKernel: return "kernel";
    case DeviceEventKind::kMemcpy: return "gpu_memcpy";
    case DeviceEventKind::kMemset: return "gpu_memset";
    case DeviceEventKind::kRuntime: return "cuda_runtime";
    case DeviceEventKind::kDriver: return "cuda_driver";
    case DeviceEventKind::kSync: return "cuda_sync";
  }
  return "?";
}

uint32_t DeviceTrace::Intern(std::string_view name) {
  const auto [it, inserted] =
      index_.try_emplace(std::string(name), static_cast<uint32_t>(names.size()));
  if (inserted) names.emplace_back(name);
  return it->second;
}

void RegisterActivitySource(Activity activity, ActivitySource* source) {
  std::lock_guard lock(SourcesMutex());
  Source(activity) = source;
}

ActivitySource* FindActivitySource(Activity activity) {
  std::lock_guard lock(SourcesMutex());
  return Source(activity);
}

std::vector<int64_t> AttributeHostCalls(
    const DeviceTrace& trace,
    const std::unordered_map<uint32_t, std::vector<HostSpan>>& spans_by_thread) {
  std::vector<int64_t> owner(trace.events.size(), -1);
  // The host calls of each thread, by start.
  std::unordered_map<uint32_t, std::vector<size_t>> calls;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    if (OnHost(trace.events[i].kind)) calls[trace.events[i].thread_id].push_back(i);
  }
  for (auto& [thread, list] : calls) {
    const auto spans = spans_by_thread.find(thread);
    if (spans == spans_by_thread.end() || spans->second.empty()) continue;
    std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      return trace.events[a].start_ns < trace.events[b].start_ns;
    });
    // Sweep: the stack holds the spans open at the current call's start.
    std::vector<const HostSpan*> open;
    size_t next = 0;
    const std::vector<HostSpan>& s = spans->second;
    for (const size_t i : list) {
      const DeviceEvent& call = trace.events[i];
      while (next < s.size() && s[next].start_ns <= call.start_ns) {
        while (!open.empty() && open.back()->end_ns < s[next].start_ns) open.pop_back();
        open.push_back(&s[next++]);
      }
      while (!open.empty() && open.back()->end_ns < call.start_ns) open.pop_back();
      // The innermost open span; it must hold the whole call.
      for (auto it = open.rbegin(); it != open.rend(); ++it) {
        if ((*it)->end_ns >= call.end_ns) {
          owner[i] = (*it)->index;
          break;
        }
      }
    }
  }
  return owner;
}

}  // namespace opscope::collect
