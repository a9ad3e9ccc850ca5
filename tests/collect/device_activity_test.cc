// Device activity in opscope's traces, with a stand-in tracer: no GPU needed.
#include "collect/device_activity.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "analyze/importer.h"
#include "analyze/passes/launch.h"
#include "analyze/pipeline.h"
#include "core/clock.h"
#include "opscope/opscope.h"
#include "test_util.h"

namespace opscope {
namespace {

using collect::DeviceEvent;
using collect::DeviceEventKind;
using collect::DeviceTrace;
using testing::CheckTrace;
using testing::ListFiles;
using testing::TempDir;

uint32_t ThisThread() { return static_cast<uint32_t>(::syscall(SYS_gettid)); }

// Plays back what a CUDA tracer would have seen: the test appends host calls and
// device work while the profiler records.
class FakeTracer final : public collect::ActivitySource {
 public:
  void Start() override {
    ++starts;
    pending.source = "fake tracer";
    pending.clock = "CLOCK_MONOTONIC";
  }
  DeviceTrace Stop() override {
    ++stops;
    return std::move(pending);
  }
  // A launch by this thread now, and the kernel it ran 1 us later on stream 7.
  void Launch(const std::string& kernel, uint32_t correlation) {
    const int64_t t = core::MonotonicNs();
    DeviceEvent call;
    call.kind = DeviceEventKind::kRuntime;
    call.name = pending.Intern("cudaLaunchKernel");
    call.start_ns = t;
    call.end_ns = t + 500;
    call.thread_id = ThisThread();
    call.correlation = correlation;
    pending.events.push_back(call);
    DeviceEvent work;
    work.kind = DeviceEventKind::kKernel;
    work.name = pending.Intern(kernel);
    work.start_ns = t + 1000;
    work.end_ns = t + 1800;
    work.device = 0;
    work.stream = 7;
    work.correlation = correlation;
    work.grid[0] = 132;
    work.block[0] = 256;
    pending.events.push_back(work);
    // Spin past the call's end so the enclosing scope holds it whole.
    while (core::MonotonicNs() < t + 2000) {
    }
  }
  DeviceTrace pending;
  int starts = 0, stops = 0;
};

struct Registration {
  explicit Registration(collect::ActivitySource* s) {
    collect::RegisterActivitySource(Activity::kCuda, s);
  }
  ~Registration() { collect::RegisterActivitySource(Activity::kCuda, nullptr); }
};

TEST(DeviceActivity, WithoutATracerCudaIsRefusedWithTheReason) {
  ProfilerOptions options;
  options.activities = {Activity::kCpu, Activity::kCuda};
  try {
    Profiler profiler(options);
    FAIL() << "Activity::kCuda was accepted with no tracer loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("opscope trace"), std::string::npos) << e.what();
  }
}

TEST(DeviceActivity, KernelsAreLinkedToTheScopesThatLaunchedThem) {
  TempDir dir;
  FakeTracer tracer;
  Registration registration(&tracer);
  const auto path = dir.path() / "t.json";
  {
    ProfilerOptions options;
    options.activities = {Activity::kCpu, Activity::kCuda};
    options.on_trace_ready = [&](TraceData& trace) { trace.Export(path); };
    Profiler profiler(options);
    profiler.Start();
    {
      OPSCOPE_SCOPE("forward");
      {
        OPSCOPE_SCOPE("conv1");
        tracer.Launch("void conv_kernel<float>(float const*, float*)", 11);
      }
      tracer.Launch("relu_kernel", 12);  // in forward, outside conv1
    }
    tracer.Launch("orphan_kernel", 13);  // in no scope
    tracer.pending.dropped = 5;
    profiler.Stop();
  }
  EXPECT_EQ(tracer.starts, 1);
  EXPECT_EQ(tracer.stops, 1);
  // The independent checker: valid JSON, the drops counted.
  const auto check = CheckTrace(path,
                                "--expect-name conv1=1 --expect-name forward=1 "
                                "--expect-name cudaLaunchKernel=3 --expect-dropped 5");
  EXPECT_EQ(check.status, 0) << check.output;

  const analyze::TraceModel model = analyze::ImportTrace(path);
  std::map<std::string, int64_t> external;     // event name -> External id
  std::map<int64_t, int64_t> launch_external;  // correlation -> External id of its launch
  std::map<std::string, int64_t> kernel_external;
  int kernels = 0, launches = 0;
  for (size_t e = 0; e < model.size(); ++e) {
    const std::string name(model.String(model.name[e]));
    if (model.cls[e] == analyze::EventClass::kKernel) {
      ++kernels;
      kernel_external[name] = model.external_id[e];
      EXPECT_GE(model.correlation[e], 11);
    } else if (model.cls[e] == analyze::EventClass::kRuntime) {
      ++launches;
      launch_external[model.correlation[e]] = model.external_id[e];
    } else {
      external[name] = model.external_id[e];
    }
  }
  EXPECT_EQ(kernels, 3);
  EXPECT_EQ(launches, 3);
  EXPECT_EQ(model.flow_events, 6u) << "one ac2g flow start and end per launch";
  ASSERT_GE(external["conv1"], 1);
  ASSERT_GE(external["forward"], 1);
  EXPECT_NE(external["conv1"], external["forward"]);
  // The innermost scope owns each launch, and the kernel carries its id.
  EXPECT_EQ(launch_external[11], external["conv1"]);
  EXPECT_EQ(kernel_external["void conv_kernel<float>(float const*, float*)"], external["conv1"]);
  EXPECT_EQ(launch_external[12], external["forward"]);
  EXPECT_EQ(kernel_external["relu_kernel"], external["forward"]);
  EXPECT_EQ(launch_external[13], -1);
  EXPECT_EQ(kernel_external["orphan_kernel"], -1);

  // The analyzer reads the device work as it reads Kineto's: three kernels of
  // 800 ns, each starting 1 us after its launch call.
  const analyze::DeviceBusy busy = analyze::ComputeDeviceBusy(model);
  EXPECT_TRUE(busy.has_device);
  EXPECT_EQ(busy.busy_ns, 3 * 800);
  const analyze::LaunchBound launch = analyze::ComputeLaunchBound(model, busy.busy_pct);
  EXPECT_EQ(launch.kernels, 3);
  EXPECT_EQ(launch.launch_delay_p50_ns, 1000);

  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\"device_tracer\":{\"source\":\"fake tracer\""), std::string::npos);
  EXPECT_NE(text.str().find("\"dropped_records\":5"), std::string::npos);
  EXPECT_NE(text.str().find("\"name\":\"stream 7\""), std::string::npos);
}

TEST(DeviceActivity, AttributionPicksTheInnermostEnclosingSpan) {
  DeviceTrace trace;
  const auto call = [&](int64_t start, int64_t end, uint32_t thread) {
    DeviceEvent e;
    e.kind = DeviceEventKind::kRuntime;
    e.start_ns = start;
    e.end_ns = end;
    e.thread_id = thread;
    trace.events.push_back(e);
  };
  call(15, 16, 1);     // in a (0..100) > b (10..50) > c (12..20)
  call(30, 31, 1);     // in b, after c ended
  call(60, 61, 1);     // in a only
  call(98, 102, 1);    // overlaps a's end: no enclosing span
  call(200, 201, 1);   // after everything
  call(15, 16, 2);     // another thread, no spans
  DeviceEvent kernel;  // device work is never attributed by time
  kernel.kind = DeviceEventKind::kKernel;
  kernel.start_ns = 15;
  kernel.end_ns = 16;
  trace.events.push_back(kernel);
  std::unordered_map<uint32_t, std::vector<collect::HostSpan>> spans;
  spans[1] = {{0, 100, 0}, {10, 50, 1}, {12, 20, 2}, {120, 130, 3}};
  const std::vector<int64_t> owner = collect::AttributeHostCalls(trace, spans);
  ASSERT_EQ(owner.size(), trace.events.size());
  EXPECT_EQ(owner[0], 2);
  EXPECT_EQ(owner[1], 1);
  EXPECT_EQ(owner[2], 0);
  EXPECT_EQ(owner[3], -1);
  EXPECT_EQ(owner[4], -1);
  EXPECT_EQ(owner[5], -1);
  EXPECT_EQ(owner[6], -1);
}

}  // namespace
}  // namespace opscope
