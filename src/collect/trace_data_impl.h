// What a TraceData holds: a snapshot of one closed collection.
#ifndef OPSCOPE_COLLECT_TRACE_DATA_IMPL_H_
#define OPSCOPE_COLLECT_TRACE_DATA_IMPL_H_

#include <memory>
#include <string>
#include <vector>

#include "collect/device_activity.h"
#include "collect/recorder.h"
#include "core/clock.h"
#include "opscope/opscope.h"

namespace opscope {

struct TraceData::Impl {
  struct Thread {
    std::shared_ptr<collect::ThreadBuffer> buffer;
    std::string name;
    std::vector<const detail::Record*> records;  // sorted by start, longest first
    uint64_t dropped = 0;
  };

  // Snapshots a closed collection: the records published so far, sorted per thread.
  ~Impl();

  static std::unique_ptr<Impl> Snapshot(const std::shared_ptr<collect::Collection>& collection,
                                        int64_t step, std::string process_name);

  std::shared_ptr<collect::Collection> collection;
  std::vector<Thread> threads;
  core::TickConverter clock;
  int64_t step = -1;
  std::string process_name;
  uint64_t event_count = 0;
  uint64_t dropped = 0;
  std::filesystem::path written_path;  // set by the default handler
  collect::DeviceTrace device;         // from the activity tracers, if any
};

// The tid of the track that holds ProfilerStep#N spans. Linux gives no thread tid 0.
constexpr int64_t kStepTrackTid = 0;

}  // namespace opscope

#endif  // OPSCOPE_COLLECT_TRACE_DATA_IMPL_H_
