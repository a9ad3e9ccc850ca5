#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <system_error>

#include "collect/device_activity.h"
#include "collect/recorder.h"
#include "collect/trace_data_impl.h"
#include "core/clock.h"
#include "core/machine.h"

namespace opscope {
namespace {

// The collection the active Profiler records into; one at a time per process.
std::shared_ptr<collect::Collection>& ActiveCollection() {
  static std::shared_ptr<collect::Collection> collection;
  // In a forked child the parent's collection is never released (it would
  // wait on the parent's threads; recorder.cc), so a profiler the child
  // starts itself finds none.
  static const int fork_handler = ::pthread_atfork(nullptr, nullptr, [] {
    static auto* const parents = new std::shared_ptr<collect::Collection>();  // never released
    if (collection) *parents = std::move(collection);
  });
  (void)fork_handler;
  return collection;
}

std::string ProgramName() {
  std::ifstream in("/proc/self/comm");
  std::string name;
  std::getline(in, name);
  return name.empty() ? "process" : name;
}

std::string DefaultWorkerName() { return core::HostName() + "_" + std::to_string(::getpid()); }

void Warn(const std::string& message) {
  std::fprintf(stderr, "opscope: warning: %s\n", message.c_str());
}

}  // namespace

const char* ToString(ProfilerAction action) noexcept {
  switch (action) {
    case ProfilerAction::kNone: return "NONE";
    case ProfilerAction::kWarmup: return "WARMUP";
    case ProfilerAction::kRecord: return "RECORD";
    case ProfilerAction::kRecordAndSave: return "RECORD_AND_SAVE";
  }
  return "?";
}

void Schedule::Validate() const {
  if (skip_first < 0 || wait < 0 || warmup < 0 || repeat < 0 || active < 1) {
    throw Error(ErrorCode::kInvalidArgument,
                "invalid profiler schedule: skip_first, wait, warmup and repeat must be >= 0 "
                "and active >= 1 (got skip_first=" +
                    std::to_string(skip_first) + ", wait=" + std::to_string(wait) +
                    ", warmup=" + std::to_string(warmup) + ", active=" + std::to_string(active) +
                    ", repeat=" + std::to_string(repeat) + ")");
  }
}

ProfilerAction Schedule::operator()(int64_t step) const {
  if (step < skip_first) return ProfilerAction::kNone;
  step -= skip_first;
  const int64_t cycle = wait + warmup + active;
  if (repeat > 0 && step / cycle >= repeat) return ProfilerAction::kNone;
  const int64_t position = step % cycle;
  if (position < wait) return ProfilerAction::kNone;
  if (position < wait + warmup) return ProfilerAction::kWarmup;
  return position < cycle - 1 ? ProfilerAction::kRecord : ProfilerAction::kRecordAndSave;
}

TraceReadyHandler DefaultTraceHandler(std::filesystem::path output_dir, bool gzip,
                                      std::string worker_name) {
  return [dir = std::move(output_dir), gzip, worker = std::move(worker_name)](TraceData& trace) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      throw Error(ErrorCode::kIo,
                  "cannot create trace directory '" + dir.string() + "': " + ec.message());
    }
    const std::string base = (worker.empty() ? DefaultWorkerName() : worker) + "." +
                             std::to_string(core::RealtimeNs() / 1000000);
    const std::string extension = gzip ? ".opscope.json.gz" : ".opscope.json";
    std::filesystem::path path = dir / (base + extension);
    // Two traces ready within one millisecond must not overwrite each other.
    for (int n = 1; std::filesystem::exists(path); ++n) {
      path = dir / (base + "_" + std::to_string(n) + extension);
    }
    trace.Export(path, ExportOptions{gzip});
    trace.impl().written_path = path;
  };
}

Profiler::Profiler(ProfilerOptions options) : options_(std::move(options)) {
  if (options_.schedule) options_.schedule->Validate();
  if (options_.max_buffer_bytes < collect::kMinBudgetBytes) {
    throw Error(ErrorCode::kInvalidArgument,
                "ProfilerOptions::max_buffer_bytes must be at least " +
                    std::to_string(collect::kMinBudgetBytes) +
                    " bytes (one small chunk of records and one block of runtime names)");
  }
  for (const Activity activity : options_.activities) {
    if (activity == Activity::kCuda && collect::FindActivitySource(activity) == nullptr) {
      throw Error(ErrorCode::kUnsupported,
                  "Activity::kCuda: no CUDA activity tracer is loaded in this process (it comes "
                  "with opscope's CUDA backend: open a cuda device first, or run the program "
                  "under `opscope trace`)");
    }
  }
  if (options_.process_name.empty()) options_.process_name = ProgramName();
  // As torch does, a schedule implies step spans; without one, they appear once the
  // program calls Step().
  record_steps_ = options_.schedule.has_value();
}

// In a child forked from the process that started this profiler, whatever
// state it was in (running, stopping on another thread, stopped): its state is
// the parent's copy, its mutex possibly held by a thread the child does not
// have (a Stop() in progress has already cleared started_), its collection
// read by threads the child does not have either. It is made inert, its
// references to the parent's objects left unreleased (releasing them would
// wait on those threads).
bool Profiler::Forked() {
  if (pid_ == 0 || pid_ == ::getpid()) return false;
  started_ = false;
  collecting_ = false;
  // Never released, kept where a static reaches it (no leak to a leak checker).
  static auto* const parents = new std::vector<std::shared_ptr<PendingSave>>();
  if (pending_) parents->push_back(std::move(pending_));
  return true;
}

Profiler::~Profiler() {
  if (!started_ || Forked()) return;
  try {
    Stop();
  } catch (const std::exception& e) {
    Warn(std::string("stopping the profiler failed: ") + e.what());
  }
}

struct Profiler::PendingSave {
  std::shared_ptr<collect::Collection> collection;
  collect::DeviceTrace device;
  int64_t step = 0;
};

void Profiler::Start() {
  if (Forked())
    throw Error(ErrorCode::kFailedPrecondition, "Profiler::Start: a forked child's copy");
  std::lock_guard lock(mutex_);
  if (started_) throw Error(ErrorCode::kFailedPrecondition, "Profiler::Start: already started");
  if (ActiveCollection() || IsRecording()) {
    throw Error(ErrorCode::kFailedPrecondition,
                "Profiler::Start: another opscope profiler is already recording in this process");
  }
  started_ = true;
  pid_ = ::getpid();
  action_ = options_.schedule ? (*options_.schedule)(step_num_) : ProfilerAction::kRecord;
  Transition(ProfilerAction::kNone, action_, /*stopping=*/false);
  BeginStepSpan();
}

void Profiler::Step() {
  if (Forked()) return;
  std::lock_guard lock(mutex_);
  if (!started_) throw Error(ErrorCode::kFailedPrecondition, "Profiler::Step: not started");
  // A window that ended at the previous Step(): its open scopes have had a step to end.
  FinishPendingSave();
  record_steps_ = true;
  EndStepSpan();
  const ProfilerAction previous = action_;
  ++step_num_;
  action_ = options_.schedule ? (*options_.schedule)(step_num_) : ProfilerAction::kRecord;
  Transition(previous, action_, /*stopping=*/false);
  BeginStepSpan();
}

void Profiler::Stop() {
  if (Forked()) return;
  std::lock_guard lock(mutex_);
  if (!started_) return;
  EndStepSpan(/*final_step=*/true);
  started_ = false;
  FinishPendingSave();
  // A scheduled window that recorded nothing (the loop ended as the window
  // began, after its last Step()) is not a trace: none is written. Without a
  // schedule the one trace asked for is always written; with a device tracer
  // the device may have recorded what the host did not, so that window is kept.
  const bool host_only = std::all_of(options_.activities.begin(), options_.activities.end(),
                                     [](Activity a) { return a == Activity::kCpu; });
  if (options_.schedule && collecting_ && host_only && ActiveCollection() &&
      (action_ == ProfilerAction::kRecord || action_ == ProfilerAction::kRecordAndSave) &&
      !collect::RecordedAnything(*ActiveCollection())) {
    EndCollection(/*save=*/false);
  }
  Transition(action_, ProfilerAction::kNone, /*stopping=*/true);
}

// The transition table of torch.profiler.profile, with warm-up events discarded.
void Profiler::Transition(ProfilerAction from, ProfilerAction to, bool stopping) {
  using A = ProfilerAction;
  const bool from_recording = from == A::kRecord || from == A::kRecordAndSave;
  const bool to_collecting = !stopping && to != A::kNone;
  const bool to_recording = !stopping && (to == A::kRecord || to == A::kRecordAndSave);
  if (stopping) {
    if (from_recording) EndCollection(/*save=*/true);
    if (from == A::kWarmup) EndCollection(/*save=*/false);
    return;
  }
  if (from == A::kRecordAndSave) {
    EndCollection(/*save=*/true, /*defer=*/true);
  } else if (from == A::kRecord && !to_recording) {
    Warn(std::string("incorrect schedule: RECORD followed by ") + ToString(to));
    EndCollection(/*save=*/true, /*defer=*/true);
  } else if (from == A::kWarmup && to == A::kNone) {
    Warn("incorrect schedule: WARMUP followed by NONE");
    EndCollection(/*save=*/false);
  }
  if (to_collecting && !collecting_) {
    BeginCollection();
  } else if (from == A::kWarmup && to_recording) {
    // Warm-up paid the recording overhead; its events are not part of the trace.
    EndCollection(/*save=*/false);
    BeginCollection();
  }
}

namespace {

std::vector<collect::ActivitySource*> DeviceSources(const std::vector<Activity>& activities) {
  std::vector<collect::ActivitySource*> sources;
  for (const Activity activity : activities) {
    if (activity == Activity::kCpu) continue;
    collect::ActivitySource* source = collect::FindActivitySource(activity);
    if (source == nullptr) {
      throw Error(ErrorCode::kFailedPrecondition,
                  "Profiler: the device activity tracer was unregistered while in use");
    }
    sources.push_back(source);
  }
  return sources;
}

}  // namespace

void Profiler::BeginCollection() {
  for (collect::ActivitySource* source : DeviceSources(options_.activities)) source->Start();
  ActiveCollection() = collect::BeginCollection(options_.max_buffer_bytes, options_.record_shapes);
  collecting_ = true;
}

void Profiler::EndCollection(bool save, bool defer) {
  if (!collecting_) return;
  std::shared_ptr<collect::Collection> collection = std::move(ActiveCollection());
  ActiveCollection().reset();
  collecting_ = false;
  collect::DeviceTrace device;
  if (save && defer) {
    collect::DetachCollection(collection);
    // Activity::kCuda is the one device activity there is.
    for (collect::ActivitySource* source : DeviceSources(options_.activities)) {
      device = source->Stop();
    }
    pending_ = std::make_shared<PendingSave>(
        PendingSave{std::move(collection), std::move(device), step_num_});
    return;
  }
  collect::EndCollection(collection);
  for (collect::ActivitySource* source : DeviceSources(options_.activities)) {
    device = source->Stop();
  }
  if (!save) {
    collection->ReleaseMemory();
    return;
  }
  pending_ = std::make_shared<PendingSave>(
      PendingSave{std::move(collection), std::move(device), step_num_});
  FinishPendingSave();
}

void Profiler::FinishPendingSave() {
  if (!pending_) return;
  const std::shared_ptr<PendingSave> pending = std::move(pending_);
  pending_.reset();
  std::shared_ptr<collect::Collection> collection = pending->collection;
  collect::EndCollection(collection);
  TraceData trace(TraceData::Impl::Snapshot(collection, pending->step, options_.process_name));
  trace.impl().device = std::move(pending->device);
  if (trace.impl().device.dropped > 0) {
    Warn(std::to_string(trace.impl().device.dropped) +
         " device activity records dropped by the tracer (" + trace.impl().device.source +
         "); the trace records the count in otherData.device_tracer.dropped_records");
  }
  if (trace.DroppedCount() > 0) {
    Warn(std::to_string(trace.DroppedCount()) + " events dropped: the profiler's buffer cap of " +
         std::to_string(options_.max_buffer_bytes >> 20) +
         " MiB was reached (raise ProfilerOptions::max_buffer_bytes); the trace records the "
         "count in otherData.dropped_events");
  }
  if (options_.on_trace_ready) {
    options_.on_trace_ready(trace);
  } else {
    DefaultTraceHandler(options_.output_dir, options_.gzip, options_.worker_name)(trace);
  }
  if (!trace.impl().written_path.empty()) files_.push_back(trace.impl().written_path);
}

void Profiler::BeginStepSpan() {
  step_generation_ = detail::g_generation.load(std::memory_order_relaxed);
  step_begin_ = detail::Ticks();
}

void Profiler::EndStepSpan(bool final_step) {
  if (step_generation_ == 0 || !collecting_ || !record_steps_) return;
  // The span the last Step() opened, closed by Stop(): written only if
  // something was recorded in it (a loop that calls Step() at the end of each
  // iteration leaves it empty).
  if (final_step && ActiveCollection() &&
      !collect::RecordedSince(*ActiveCollection(), step_begin_)) {
    step_generation_ = 0;
    return;
  }
  if (step_generation_ == detail::g_generation.load(std::memory_order_relaxed)) {
    detail::Append(step_generation_,
                   detail::Record{nullptr, step_begin_, detail::Ticks(),
                                  static_cast<uint64_t>(detail::RecordKind::kStepSpan) |
                                      (static_cast<uint64_t>(step_num_) << 8)});
  }
  step_generation_ = 0;
}

}  // namespace opscope
