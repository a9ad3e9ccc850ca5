#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <unordered_map>

#include "collect/chrome_trace_writer.h"
#include "collect/trace_data_impl.h"
#include "core/machine.h"
#include "core/output.h"
#include "core/text.h"
#include "core/trace_schema.h"
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

std::string StepName(const Record& r) {
  return std::string(core::trace_schema::kStepPrefix) + std::to_string(r.meta >> 8);
}

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

// Device activity as Kineto writes it: device work on pid = device, tid = stream;
// host calls on this process's threads; an "ac2g" flow from each call to the work
// it launched.
// Returns the number of events written (complete and flow).
uint64_t WriteDeviceEvents(collect::ChromeTraceWriter& writer, const collect::DeviceTrace& trace,
                           const std::vector<int64_t>& external_by_event, int64_t pid,
                           int64_t start_ns) {
  if (trace.events.empty()) return 0;
  uint64_t flows = 0;
  using collect::DeviceEventKind;
  std::set<uint32_t> devices;
  std::set<std::pair<uint32_t, uint32_t>> streams;
  std::unordered_map<uint32_t, const collect::DeviceEvent*> work_by_correlation;
  for (const collect::DeviceEvent& e : trace.events) {
    if (!collect::OnHost(e.kind)) {
      devices.insert(e.device);
      streams.insert({e.device, e.stream});
      if (e.kind != DeviceEventKind::kSync) work_by_correlation.emplace(e.correlation, &e);
    }
  }
  for (const uint32_t device : devices) {
    writer.ProcessName(device, "GPU " + std::to_string(device));
    writer.ProcessSortIndex(device, 1000 + device);
  }
  for (const auto& [device, stream] : streams) {
    const int64_t tid = stream == collect::kNoStream ? -1 : static_cast<int64_t>(stream);
    writer.ThreadName(device, tid,
                      tid < 0 ? std::string("context and event synchronization")
                              : "stream " + std::to_string(stream));
  }
  std::string extra;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const collect::DeviceEvent& e = trace.events[i];
    const std::string& name = trace.names[e.name];
    const int64_t ts = e.start_ns - start_ns;
    const int64_t dur = std::max<int64_t>(0, e.end_ns - e.start_ns);
    extra.clear();
    const auto member = [&](const char* key, int64_t value) {
      if (!extra.empty()) extra += ',';
      extra += '"';
      extra += key;
      extra += "\":";
      core::AppendInt(extra, value);
    };
    if (collect::OnHost(e.kind)) {
      member("correlation", e.correlation);
      writer.Complete(pid, e.thread_id, name, collect::Category(e.kind), ts, dur,
                      collect::EventArgs{.external_id = external_by_event[i], .extra = extra});
      if (work_by_correlation.count(e.correlation) != 0) {
        writer.Flow('s', pid, e.thread_id, e.correlation, "ac2g", ts);
        ++flows;
      }
      continue;
    }
    const int64_t tid = e.stream == collect::kNoStream ? -1 : static_cast<int64_t>(e.stream);
    member("device", e.device);
    member("context", e.context);
    member("stream", tid);
    member("correlation", e.correlation);
    if (e.kind == DeviceEventKind::kKernel) {
      extra += ",\"grid\":[";
      for (int k = 0; k < 3; ++k) {
        if (k > 0) extra += ',';
        core::AppendInt(extra, e.grid[k]);
      }
      extra += "],\"block\":[";
      for (int k = 0; k < 3; ++k) {
        if (k > 0) extra += ',';
        core::AppendInt(extra, e.block[k]);
      }
      extra += ']';
      member("registers per thread", e.registers);
      member("shared memory", e.shared_bytes);
    } else if (e.kind == DeviceEventKind::kMemcpy || e.kind == DeviceEventKind::kMemset) {
      member("bytes", static_cast<int64_t>(e.bytes));
      extra += ",\"memory bandwidth (GB/s)\":";
      core::AppendJsonNumber(extra, dur > 0 ? static_cast<double>(e.bytes) / dur : 0.0);
    } else if (e.event_id >= 0) {
      member("wait_on_cuda_event_id", e.event_id);
    }
    writer.Complete(e.device, tid, name, collect::Category(e.kind), ts, dur,
                    collect::EventArgs{.external_id = external_by_event[i], .extra = extra});
    if (e.kind != DeviceEventKind::kSync) {
      const auto it = work_by_correlation.find(e.correlation);
      // One flow end per correlation: the first piece of work it launched.
      if (it != work_by_correlation.end() && it->second == &e) {
        writer.Flow('f', e.device, tid, e.correlation, "ac2g", ts);
        ++flows;
      }
    }
  }
  return trace.events.size() + flows;
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
      const uint32_t count = c->Published();
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
  // Device activity: host calls attributed to the scopes that made them.
  const collect::DeviceTrace& device = d.device;
  std::vector<int64_t> external_by_record;  // by record ordinal; -1: none
  std::vector<int64_t> external_by_event;   // by device event; -1: none
  if (!device.events.empty()) {
    std::unordered_map<uint32_t, std::vector<collect::HostSpan>> spans;
    uint32_t ordinal = 0;
    for (const Impl::Thread& thread : d.threads) {
      auto& list = spans[thread.buffer->tid];
      for (const Record* r : thread.records) {
        const RecordKind k = KindOf(*r);
        if (k == RecordKind::kStaticScope || k == RecordKind::kDynamicScope) {
          list.push_back({d.clock.ToMonotonicNs(r->t0), d.clock.ToMonotonicNs(r->t1), ordinal});
        }
        ++ordinal;
      }
    }
    const std::vector<int64_t> owner = collect::AttributeHostCalls(device, spans);
    external_by_record.assign(ordinal, -1);
    external_by_event.assign(device.events.size(), -1);
    std::unordered_map<uint32_t, int64_t> external_by_correlation;
    int64_t next_external = 1;
    for (size_t i = 0; i < owner.size(); ++i) {
      if (owner[i] < 0) continue;
      int64_t& id = external_by_record[static_cast<size_t>(owner[i])];
      if (id < 0) id = next_external++;
      external_by_event[i] = id;
      external_by_correlation[device.events[i].correlation] = id;
    }
    for (size_t i = 0; i < device.events.size(); ++i) {
      if (collect::OnHost(device.events[i].kind)) continue;
      const auto it = external_by_correlation.find(device.events[i].correlation);
      if (it != external_by_correlation.end()) external_by_event[i] = it->second;
    }
  }

  std::string scratch;
  EventView v{};
  uint32_t ordinal = 0;
  for (const Impl::Thread& thread : d.threads) {
    for (const Record* r : thread.records) {
      Describe(*r, d.clock, d.collection->start_ns, thread.buffer->tid, scratch, v);
      const int64_t external = external_by_record.empty() ? -1 : external_by_record[ordinal];
      ++ordinal;
      switch (v.phase) {
        case EventPhase::kComplete:
          writer.Complete(
              pid, v.tid, v.name, v.category, v.ts_ns, v.dur_ns,
              collect::EventArgs{
                  v.shapes, v.dtype, v.flops, v.bytes, v.layout, v.module, external, {}});
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
  const uint64_t device_events =
      WriteDeviceEvents(writer, device, external_by_event, pid, d.collection->start_ns);

  collect::TraceMetadata metadata;
  metadata.base_time_ns = d.collection->start_realtime_ns;
  metadata.host = core::HostName();
  metadata.pid = pid;
  metadata.process_name = d.process_name;
  metadata.event_count = d.event_count + device_events;
  metadata.dropped_events = d.dropped + device.dropped;
  metadata.max_buffer_bytes = d.collection->budget().limit_bytes();
  metadata.step = d.step;
#if defined(__x86_64__) || defined(_M_X64)
  metadata.clock = "CLOCK_MONOTONIC (from the TSC)";
#else
  metadata.clock = "CLOCK_MONOTONIC";
#endif
  const core::MachineInfo& machine = core::GetMachineInfo();
  std::string devices = "[{\"id\":\"cpu\",\"type\":\"cpu\",\"name\":";
  core::AppendJsonString(devices, machine.cpu_model);
  devices += ",\"logical_cpus\":";
  core::AppendInt(devices, machine.logical_cpus);
  devices += ",\"memory_bytes\":";
  core::AppendUint(devices, machine.memory_bytes);
  if (!d.device.devices_json.empty()) {
    devices += "},";
    devices += d.device.devices_json;
    devices += "]";
  } else {
    devices += "}]";
  }
  metadata.extra_json.emplace_back("devices", std::move(devices));
  if (!d.device.source.empty() || !d.device.events.empty() || d.device.dropped > 0) {
    std::string tracer = "{\"source\":";
    core::AppendJsonString(tracer, d.device.source);
    tracer += ",\"clock\":";
    core::AppendJsonString(tracer, d.device.clock);
    tracer += ",\"events\":";
    core::AppendUint(tracer, d.device.events.size());
    tracer += ",\"dropped_records\":";
    core::AppendUint(tracer, d.device.dropped);
    tracer += '}';
    metadata.extra_json.emplace_back("device_tracer", std::move(tracer));
  }
  writer.End(metadata);
  out.Commit();
}

}  // namespace opscope
