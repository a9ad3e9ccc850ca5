#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "collect/chrome_trace_writer.h"
#include "collect/trace_data_impl.h"
#include "core/machine.h"
#include "core/output.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope {
namespace {

using detail::Record;
using detail::RecordKind;

RecordKind KindOf(const Record& r) { return static_cast<RecordKind>(r.meta & 0xFF); }
bool IsSpan(RecordKind k) {
  return k == RecordKind::kStaticScope || k == RecordKind::kDynamicScope ||
         k == RecordKind::kStepSpan;
}

std::string StepName(const Record& r) { return "ProfilerStep#" + std::to_string(r.meta >> 8); }

// Fills `view` for `r`; `scratch` holds a name that has no storage of its own.
void Describe(const Record& r, const core::TickConverter& clock, int64_t start_ns, uint32_t tid,
              std::string& scratch, EventView& view) {
  view = EventView{};
  view.tid = tid;
  view.flops = -1;
  view.bytes = -1;
  view.ts_ns = clock.ToMonotonicNs(r.t0) - start_ns;
  switch (KindOf(r)) {
    case RecordKind::kStaticScope: {
      const auto* location = static_cast<const detail::SourceLocation*>(r.what);
      view.phase = EventPhase::kComplete;
      view.name = location->name;
      view.category = "user_annotation";
      view.dur_ns = std::max<int64_t>(0, clock.ToMonotonicNs(r.t1) - start_ns - view.ts_ns);
      break;
    }
    case RecordKind::kDynamicScope: {
      const auto* payload = static_cast<const collect::Payload*>(r.what);
      view.phase = EventPhase::kComplete;
      view.name = payload->name();
      view.category = payload->category;
      view.shapes = payload->shapes();
      view.dtype = payload->dtype();
      view.layout = payload->layout();
      view.module = payload->module();
      view.flops = payload->flops;
      view.bytes = payload->bytes;
      view.dur_ns = std::max<int64_t>(0, clock.ToMonotonicNs(r.t1) - start_ns - view.ts_ns);
      break;
    }
    case RecordKind::kStepSpan:
      scratch = StepName(r);
      view.phase = EventPhase::kComplete;
      view.name = scratch;
      view.category = "user_annotation";
      view.tid = kStepTrackTid;
      view.dur_ns = std::max<int64_t>(0, clock.ToMonotonicNs(r.t1) - start_ns - view.ts_ns);
      break;
    case RecordKind::kInstant:
      view.phase = EventPhase::kInstant;
      view.name = static_cast<const char*>(r.what);
      view.category = "instant";
      break;
    case RecordKind::kCounter:
      view.phase = EventPhase::kCounter;
      view.name = static_cast<const char*>(r.what);
      view.category = "counter";
      std::memcpy(&view.value, &r.t1, sizeof view.value);
      break;
    case RecordKind::kFlowStart:
    case RecordKind::kFlowEnd:
      view.phase =
          KindOf(r) == RecordKind::kFlowStart ? EventPhase::kFlowStart : EventPhase::kFlowEnd;
      view.name = static_cast<const char*>(r.what);
      view.category = view.name;
      view.flow_id = r.t1;
      break;
  }
}

}  // namespace

std::unique_ptr<TraceData::Impl> TraceData::Impl::Snapshot(
    const std::shared_ptr<collect::Collection>& collection, int64_t step,
    std::string process_name) {
  auto impl = std::make_unique<Impl>();
  impl->collection = collection;
  impl->clock = core::TickConverter::Calibrate();
  impl->step = step;
  impl->process_name = std::move(process_name);
  for (const auto& buffer : collection->Threads()) {
    Thread thread;
    thread.buffer = buffer;
    thread.name = buffer->name();
    thread.dropped = buffer->dropped.load(std::memory_order_relaxed);
    for (const collect::Chunk* c = buffer->head; c != nullptr;
         c = c->next.load(std::memory_order_acquire)) {
      const uint32_t count = c->published.load(std::memory_order_acquire);
      for (uint32_t i = 0; i < count; ++i) thread.records.push_back(c->records + i);
    }
    // Parents before children: by start, then the longer span first.
    std::stable_sort(thread.records.begin(), thread.records.end(),
                     [](const Record* a, const Record* b) {
                       if (a->t0 != b->t0) return a->t0 < b->t0;
                       const uint64_t da = IsSpan(KindOf(*a)) ? a->t1 - a->t0 : 0;
                       const uint64_t db = IsSpan(KindOf(*b)) ? b->t1 - b->t0 : 0;
                       return da > db;
                     });
    impl->event_count += thread.records.size();
    impl->dropped += thread.dropped;
    impl->threads.push_back(std::move(thread));
  }
  return impl;
}

// The trace has been handled: give its memory back, even for threads that live on.
TraceData::Impl::~Impl() { collection->ReleaseMemory(); }

TraceData::TraceData(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceData::~TraceData() = default;

uint64_t TraceData::EventCount() const { return impl_->event_count; }
uint64_t TraceData::DroppedCount() const { return impl_->dropped; }
int64_t TraceData::StepNumber() const { return impl_->step; }

void TraceData::ForEachEvent(const std::function<void(const EventView&)>& visit) const {
  std::string scratch;
  EventView view{};
  for (const Impl::Thread& thread : impl_->threads) {
    for (const Record* r : thread.records) {
      Describe(*r, impl_->clock, impl_->collection->start_ns, thread.buffer->tid, scratch, view);
      visit(view);
    }
  }
}

void TraceData::Export(const std::filesystem::path& path, const ExportOptions& options) const {
  core::AtomicFileOutput out(path, options.gzip || core::HasGzipExtension(path));
  collect::ChromeTraceWriter writer(out);
  const int64_t pid = ::getpid();
  const Impl& d = *impl_;
  writer.Begin();
  writer.ProcessName(pid, d.process_name);
  writer.ProcessSortIndex(pid, 0);
  bool has_steps = false;
  for (const Impl::Thread& thread : d.threads) {
    writer.ThreadName(pid, thread.buffer->tid, thread.name);
    writer.ThreadSortIndex(pid, thread.buffer->tid, thread.buffer->sort_index + 1);
    for (const Record* r : thread.records) has_steps |= KindOf(*r) == RecordKind::kStepSpan;
  }
  if (has_steps) {
    writer.ThreadName(pid, kStepTrackTid, "ProfilerSteps");
    writer.ThreadSortIndex(pid, kStepTrackTid, 0);
  }
  std::string scratch;
  EventView v{};
  for (const Impl::Thread& thread : d.threads) {
    for (const Record* r : thread.records) {
      Describe(*r, d.clock, d.collection->start_ns, thread.buffer->tid, scratch, v);
      switch (v.phase) {
        case EventPhase::kComplete:
          writer.Complete(
              pid, v.tid, v.name, v.category, v.ts_ns, v.dur_ns,
              collect::EventArgs{v.shapes, v.dtype, v.flops, v.bytes, v.layout, v.module});
          break;
        case EventPhase::kInstant: writer.Instant(pid, v.tid, v.name, v.category, v.ts_ns); break;
        case EventPhase::kCounter: writer.Counter(pid, v.name, v.ts_ns, v.value); break;
        case EventPhase::kFlowStart:
        case EventPhase::kFlowEnd:
          writer.Flow(v.phase == EventPhase::kFlowStart ? 's' : 'f', pid, v.tid, v.flow_id,
                      v.category, v.ts_ns);
          break;
      }
    }
  }
  collect::TraceMetadata metadata;
  metadata.base_time_ns = d.collection->start_realtime_ns;
  metadata.host = core::HostName();
  metadata.pid = pid;
  metadata.process_name = d.process_name;
  metadata.event_count = d.event_count;
  metadata.dropped_events = d.dropped;
  metadata.max_buffer_bytes = d.collection->budget().limit_bytes();
  metadata.step = d.step;
#if defined(__x86_64__) || defined(_M_X64)
  metadata.clock = "CLOCK_MONOTONIC (from the TSC)";
#else
  metadata.clock = "CLOCK_MONOTONIC";
#endif
  const core::MachineInfo& machine = core::GetMachineInfo();
  std::string device = "[{\"id\":\"cpu\",\"type\":\"cpu\",\"name\":";
  core::AppendJsonString(device, machine.cpu_model);
  device += ",\"logical_cpus\":";
  core::AppendInt(device, machine.logical_cpus);
  device += ",\"memory_bytes\":";
  core::AppendUint(device, machine.memory_bytes);
  device += "}]";
  metadata.extra_json.emplace_back("devices", std::move(device));
  writer.End(metadata);
  out.Commit();
}

}  // namespace opscope
