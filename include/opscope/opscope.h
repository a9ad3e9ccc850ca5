// opscope profiler: the public C++ API.
//
// Mirrors torch.profiler / torch_npu.profiler: a Profiler with options, an optional
// Schedule{skip_first, wait, warmup, active, repeat} with torch's exact semantics,
// Step() markers recorded as `ProfilerStep#N` spans, and an on-trace-ready handler
// whose default writes `<output_dir>/<host>_<pid>.<ms since epoch>.opscope.json`.
//
// Contract of the recording macros:
//   * OPSCOPE_SCOPE("literal") records one complete event from construction to the
//     end of the enclosing block. With no session recording, it costs one relaxed
//     atomic load and one predictable branch; with OPSCOPE_ENABLED=0 it is nothing.
//   * OPSCOPE_SCOPE_DYN(name, args) takes a runtime name and optional arguments
//     (shapes, dtype, FLOPs, bytes, category); the strings are copied at scope start.
//   * Events go to per-thread buffers without locks; the total is bounded by
//     ProfilerOptions::max_buffer_bytes. Past the bound, events are dropped and the
//     exact count is reported in the trace metadata and as a warning on stderr.
// Only one Profiler records at a time in a process; starting a second throws.
#ifndef OPSCOPE_OPSCOPE_H_
#define OPSCOPE_OPSCOPE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/version.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <x86intrin.h>
#else
#include <time.h>
#endif

#ifndef OPSCOPE_ENABLED
#define OPSCOPE_ENABLED 1
#endif

namespace opscope {

// Every error the library reports. The CLI maps codes to exit statuses.
enum class ErrorCode {
  kInvalidArgument,     // a value the caller passed is wrong
  kInvalidInput,        // a file's content is wrong (parse errors, bad fields)
  kIo,                  // reading or writing a file failed
  kUnsupported,         // the device, format or feature is not available here
  kResourceExhausted,   // not enough memory for what was asked
  kFailedPrecondition,  // called in the wrong state
  kInternal,
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

enum class Activity { kCpu, kCuda };

enum class ProfilerAction { kNone, kWarmup, kRecord, kRecordAndSave };

const char* ToString(ProfilerAction action) noexcept;

// torch.profiler.schedule: after `skip_first` steps, cycles of `wait` idle steps,
// `warmup` steps recorded then discarded, and `active` recorded steps, the last of
// which is kRecordAndSave; `repeat` cycles, or endlessly when 0.
struct Schedule {
  int64_t skip_first = 0;
  int64_t wait = 0;
  int64_t warmup = 0;
  int64_t active = 1;
  int64_t repeat = 0;

  // Throws Error(kInvalidArgument) on negative values or active < 1.
  void Validate() const;
  ProfilerAction operator()(int64_t step) const;
};

// One event of a finished trace, as handed to inspection callbacks.
enum class EventPhase { kComplete, kInstant, kCounter, kFlowStart, kFlowEnd };

struct EventView {
  EventPhase phase;
  std::string_view name;
  std::string_view category;
  uint32_t tid;      // the OS thread id of the recording thread
  int64_t ts_ns;     // nanoseconds since the trace's base time
  int64_t dur_ns;    // complete events only
  double value;      // counter events only
  uint64_t flow_id;  // flow events only
  std::string_view shapes;
  std::string_view dtype;
  int64_t flops;  // -1 when unknown
  int64_t bytes;  // -1 when unknown
  std::string_view layout;
  std::string_view module;
};

struct ExportOptions {
  bool gzip = false;  // also implied by a path ending in ".gz"
};

class TraceData;

using TraceReadyHandler = std::function<void(TraceData&)>;

struct ProfilerOptions {
  std::filesystem::path output_dir = ".";
  // kCuda adds GPU activity (CUPTI): kernels, copies, runtime and driver calls,
  // each call tied to the scope that made it. It needs opscope's CUDA backend in
  // the process (a cuda device opened through it, or the program run under
  // `opscope trace`); without it the Profiler throws Error(kUnsupported).
  std::vector<Activity> activities = {Activity::kCpu};
  std::optional<Schedule> schedule;  // none: record from Start() to Stop()
  bool record_shapes = false;
  bool gzip = false;                                      // default handler writes .opscope.json.gz
  std::size_t max_buffer_bytes = std::size_t{512} << 20;  // at least 128 KiB
  std::string worker_name;                                // default: <host>_<pid>
  std::string process_name;                               // default: the program's name
  TraceReadyHandler on_trace_ready;  // default: DefaultTraceHandler(output_dir, gzip)
};

// A collected trace, alive until the handler returns.
class TraceData {
 public:
  struct Impl;
  explicit TraceData(std::unique_ptr<Impl> impl);
  ~TraceData();
  TraceData(const TraceData&) = delete;
  TraceData& operator=(const TraceData&) = delete;

  uint64_t EventCount() const;
  uint64_t DroppedCount() const;
  int64_t StepNumber() const;  // the step at which this trace became ready
  // Writes the Chrome trace atomically: a temporary file renamed into place.
  void Export(const std::filesystem::path& path, const ExportOptions& options = {}) const;
  // Visits every event, each thread's events sorted by start time.
  void ForEachEvent(const std::function<void(const EventView&)>& visit) const;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// The handler torch calls tensorboard_trace_handler: one file per trace.
TraceReadyHandler DefaultTraceHandler(std::filesystem::path output_dir, bool gzip = false,
                                      std::string worker_name = {});

// Thread rules: Start(), Step() and Stop() may be called from any thread, one
// at a time or concurrently: calls are serialised, and each Step() call ends
// exactly one step (N calls from any mix of threads give N step spans). Scopes
// may be opened on any thread. A step span left open by the last Step() before
// Stop() is written only if something was recorded in it. With a schedule, a
// window's trace is written at the Step() after its last active step (or at
// Stop()), so that scopes still open when its last step ends (a per-iteration
// scope around Step()) are in it; scopes opened after the window are not.
//
// fork(): a child of a recording process records nothing and writes no trace:
// its copy of a profiler the parent started is inert, whatever state it was
// in (recording, stopping on another thread, stopped): Step() and Stop()
// return at once, Start() throws, its destructor does nothing. So it never
// waits on the parent's threads or locks, and the parent's trace is the
// parent's alone. A profiler the child makes and starts itself records the
// child.
class Profiler {
 public:
  explicit Profiler(ProfilerOptions options = {});
  ~Profiler();  // stops a running profiler; never throws
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  void Start();
  void Step();
  void Stop();

  int64_t step_num() const noexcept { return step_num_; }
  ProfilerAction current_action() const noexcept { return action_; }
  // Files written by the default handler so far.
  const std::vector<std::filesystem::path>& trace_files() const noexcept { return files_; }

 private:
  struct PendingSave;
  void Transition(ProfilerAction from, ProfilerAction to, bool stopping);
  void BeginCollection();
  // save: hand the trace to the handler; defer: only stop recording new scopes
  // now and hand it over at the next Step() or Stop() (FinishPendingSave).
  void EndCollection(bool save, bool defer = false);
  void FinishPendingSave();
  void BeginStepSpan();
  void EndStepSpan(bool final_step = false);

  ProfilerOptions options_;
  bool started_ = false;
  bool collecting_ = false;
  bool record_steps_ = false;  // with a schedule, or once Step() was called
  int64_t step_num_ = 0;
  ProfilerAction action_ = ProfilerAction::kNone;
  uint64_t step_begin_ = 0;
  uint32_t step_generation_ = 0;
  std::vector<std::filesystem::path> files_;
  std::shared_ptr<PendingSave> pending_;
  std::mutex mutex_;  // serialises Start, Step and Stop
  int pid_ = 0;       // the process that started it (a forked child's copy is inert)
  bool Forked();      // in a child of the process that started it: made inert
};

// Arguments of a runtime-named scope. Strings are copied when the scope starts;
// `category` must be a string literal or otherwise outlive the process's traces.
struct ScopeArgs {
  std::string_view shapes;
  std::string_view dtype;
  int64_t flops = -1;
  int64_t bytes = -1;
  const char* category = nullptr;  // default "user_annotation"
  std::string_view layout;         // memory layout of the operands ("nChw16c", "nchw")
  std::string_view module;         // the model part that ran it ("layer1.0.conv1")
};

// Names the calling thread in traces (default: its OS name).
void SetThreadName(std::string_view name);
// An instant event on the calling thread.
void Instant(std::string_view name);
// A counter sample; each name is one counter track.
void Counter(std::string_view name, double value);
// Flow arrows (e.g. CPU launch -> device work) bound to the enclosing slices.
void FlowStart(uint64_t id, const char* category = "flow");
void FlowEnd(uint64_t id, const char* category = "flow");
// True while a session records. Costs one relaxed load.
bool IsRecording() noexcept;

namespace detail {

struct SourceLocation {
  const char* name;
  const char* file;
  uint32_t line;
};

// One record in a per-thread buffer: 32 bytes.
struct Record {
  const void* what;  // SourceLocation*, payload*, or interned name
  uint64_t t0;       // clock ticks
  uint64_t t1;       // end ticks, counter value bits, or flow id
  uint64_t meta;     // RecordKind in the low byte
};

enum class RecordKind : uint8_t {
  kStaticScope = 1,
  kDynamicScope,
  kStepSpan,
  kInstant,
  kCounter,
  kFlowStart,
  kFlowEnd,
};

// The calling thread's cursor into its current chunk.
struct ThreadWriter {
  Record* cursor = nullptr;
  Record* limit = nullptr;
  // The chunk's end of published records: the cursor itself is stored, so a
  // scope does not compute an index (readers subtract the chunk's start).
  std::atomic<Record*>* published = nullptr;
  uint32_t generation = 0;
};

// 0 while no session records; otherwise the current collection's id.
extern std::atomic<uint32_t> g_generation;
// constinit: without it, every access from users' code goes through the TLS
// wrapper function (a call per scope), since the compiler cannot see that the
// variable needs no dynamic initialisation.
#if defined(__cpp_constinit)
extern constinit thread_local ThreadWriter t_writer;
#else
extern thread_local ThreadWriter t_writer;
#endif

inline uint64_t Ticks() noexcept {
#if defined(__x86_64__) || defined(_M_X64)
  return __rdtsc();
#else
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
#endif
}

// Slow path: registers the thread, opens a chunk, or counts a drop. The fields
// come in registers: taking the Record by reference made every scope build it on
// the stack (four more stores) for a call that is seldom made.
void AppendSlow(uint32_t generation, const void* what, uint64_t t0, uint64_t t1,
                uint64_t meta) noexcept;
// Counts one event dropped because the budget was spent.
void CountDrop(uint32_t generation) noexcept;
// Copies a dynamic scope's name and arguments; nullptr when the budget is spent.
const void* CopyPayload(uint32_t generation, std::string_view name, const ScopeArgs& args) noexcept;

inline void Append(uint32_t generation, const Record& record) noexcept {
  ThreadWriter& w = t_writer;
  if (__builtin_expect(w.generation == generation && w.cursor != w.limit, 1)) {
    // Field by field: a whole-struct copy is built on the stack and reloaded as
    // 16-byte vectors, which stalls on store forwarding (about 6 ns a scope).
    Record* slot = w.cursor;
    slot->what = record.what;
    slot->t0 = record.t0;
    slot->t1 = record.t1;
    slot->meta = record.meta;
    w.cursor = slot + 1;
    w.published->store(w.cursor, std::memory_order_release);
  } else {
    AppendSlow(generation, record.what, record.t0, record.t1, record.meta);
  }
}

class ScopeGuard {
 public:
  explicit ScopeGuard(const SourceLocation* location) noexcept {
    const uint32_t generation = g_generation.load(std::memory_order_relaxed);
    if (__builtin_expect(generation != 0, 0)) {
      location_ = location;
      generation_ = generation;
      begin_ = Ticks();
    }
  }
  ~ScopeGuard() {
    if (__builtin_expect(generation_ != 0, 0)) {
      const uint64_t end = Ticks();
      Append(generation_,
             Record{location_, begin_, end, static_cast<uint64_t>(RecordKind::kStaticScope)});
    }
  }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  const SourceLocation* location_ = nullptr;
  uint64_t begin_ = 0;
  uint32_t generation_ = 0;
};

class DynamicScopeGuard {
 public:
  explicit DynamicScopeGuard(std::string_view name, const ScopeArgs& args = {}) noexcept {
    const uint32_t generation = g_generation.load(std::memory_order_relaxed);
    if (__builtin_expect(generation != 0, 0)) {
      payload_ = CopyPayload(generation, name, args);
      generation_ = generation;
      begin_ = Ticks();
    }
  }
  ~DynamicScopeGuard() {
    if (__builtin_expect(generation_ != 0, 0)) {
      const uint64_t end = Ticks();
      if (payload_ != nullptr) {
        Append(generation_,
               Record{payload_, begin_, end, static_cast<uint64_t>(RecordKind::kDynamicScope)});
      } else {
        CountDrop(generation_);  // the budget was spent when the scope began
      }
    }
  }
  DynamicScopeGuard(const DynamicScopeGuard&) = delete;
  DynamicScopeGuard& operator=(const DynamicScopeGuard&) = delete;

 private:
  const void* payload_ = nullptr;
  uint64_t begin_ = 0;
  uint32_t generation_ = 0;
};

}  // namespace detail
}  // namespace opscope

#define OPSCOPE_CONCAT_INNER(a, b) a##b
#define OPSCOPE_CONCAT(a, b) OPSCOPE_CONCAT_INNER(a, b)

#if OPSCOPE_ENABLED
#define OPSCOPE_SCOPE_IMPL(id, literal)                                                \
  static constexpr ::opscope::detail::SourceLocation OPSCOPE_CONCAT(opscope_loc_, id){ \
      literal, __FILE__, __LINE__};                                                    \
  ::opscope::detail::ScopeGuard OPSCOPE_CONCAT(opscope_scope_,                         \
                                               id)(&OPSCOPE_CONCAT(opscope_loc_, id))
#define OPSCOPE_SCOPE(literal) OPSCOPE_SCOPE_IMPL(__COUNTER__, literal)
#define OPSCOPE_SCOPE_DYN(...) \
  ::opscope::detail::DynamicScopeGuard OPSCOPE_CONCAT(opscope_dyn_, __COUNTER__)(__VA_ARGS__)
#else
#define OPSCOPE_SCOPE(literal) static_cast<void>(0)
#define OPSCOPE_SCOPE_DYN(...) static_cast<void>(0)
#endif

#endif  // OPSCOPE_OPSCOPE_H_
