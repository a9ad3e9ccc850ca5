// The CUDA backend's logic that needs no GPU: CUPTI record conversion on
// synthetic records, clock alignment, and the table of theoretical peaks.
#include <gtest/gtest.h>

#include <cstring>

#include "devices/cuda/cuda_peaks.h"
#include "devices/cuda/cupti_records.h"

namespace opscope::cuda {
namespace {

using collect::DeviceEventKind;
using collect::DeviceTrace;

template <typename T>
T Zeroed() {
  T record;
  std::memset(&record, 0, sizeof record);
  return record;
}

TEST(ClockAligner, WithoutSamplesTimestampsPassThrough) {
  ClockAligner clock;
  EXPECT_EQ(clock.ToHostNs(123456789), 123456789);
}

TEST(ClockAligner, OneSampleGivesTheOffsetAtTheWindowsMiddle) {
  ClockAligner clock;
  // Host read 1000 and 1200 around a device reading of 50: device 50 is host 1100.
  clock.AddSample(1000, 50, 1200);
  EXPECT_EQ(clock.ToHostNs(50), 1100);
  EXPECT_EQ(clock.ToHostNs(1050), 2100);
  EXPECT_EQ(clock.uncertainty_ns(), 100);
}

TEST(ClockAligner, TwoSamplesCorrectADriftingClock) {
  // The device clock runs 50 ppm fast and starts 7 s behind the host clock.
  const auto host_of = [](double device) { return device / 1.00005 + 7e9; };
  ClockAligner clock;
  const uint64_t d0 = 1'000'000'000, d1 = d0 + 10'000'000'000;  // 10 s apart
  clock.AddSample(static_cast<int64_t>(host_of(d0)) - 40, d0,
                  static_cast<int64_t>(host_of(d0)) + 40);
  clock.AddSample(static_cast<int64_t>(host_of(d1)) - 40, d1,
                  static_cast<int64_t>(host_of(d1)) + 40);
  for (const uint64_t d : {d0, d0 + uint64_t{1234567}, d0 + uint64_t{5'000'000'000}, d1}) {
    EXPECT_NEAR(static_cast<double>(clock.ToHostNs(d)), host_of(static_cast<double>(d)), 2.0) << d;
  }
  EXPECT_NEAR(clock.rate(), 1 / 1.00005, 1e-9);
  EXPECT_NE(clock.Describe().find("2 samples"), std::string::npos) << clock.Describe();
}

TEST(ClockAligner, SamplesTooCloseForARateKeepRateOne) {
  ClockAligner clock;
  clock.AddSample(0, 100, 10);
  clock.AddSample(500, 600, 510);  // 0.5 us apart: noise, not drift
  EXPECT_DOUBLE_EQ(clock.rate(), 1.0);
}

TEST(CuptiRecords, KernelRecordBecomesAKernelEvent) {
  auto k = Zeroed<CUpti_ActivityKernel10>();
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = "_Z10vector_addPKfS0_Pfi";
  k.start = 5000;
  k.end = 9000;
  k.deviceId = 1;
  k.contextId = 3;
  k.streamId = 7;
  k.correlationId = 42;
  k.gridX = 132, k.gridY = 2, k.gridZ = 1;
  k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 40;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 4096;
  ClockAligner clock;
  clock.AddSample(1'000'000, 0, 1'000'000);  // device 0 = host 1 ms
  RecordConverter converter(nullptr, &clock);
  DeviceTrace trace;
  ASSERT_TRUE(converter.Convert(reinterpret_cast<CUpti_Activity*>(&k), trace));
  ASSERT_EQ(trace.events.size(), 1u);
  const auto& e = trace.events[0];
  EXPECT_EQ(e.kind, DeviceEventKind::kKernel);
  EXPECT_EQ(trace.names[e.name], "vector_add(float const*, float const*, float*, int)");
  EXPECT_EQ(e.start_ns, 1'005'000);
  EXPECT_EQ(e.end_ns, 1'009'000);
  EXPECT_EQ(e.device, 1u);
  EXPECT_EQ(e.context, 3u);
  EXPECT_EQ(e.stream, 7u);
  EXPECT_EQ(e.correlation, 42u);
  EXPECT_EQ(e.grid[0], 132);
  EXPECT_EQ(e.grid[1], 2);
  EXPECT_EQ(e.block[0], 256);
  EXPECT_EQ(e.registers, 40);
  EXPECT_EQ(e.shared_bytes, 5120);
}

TEST(CuptiRecords, CopiesAndMemsetsAreNamedAsKinetoNamesThem) {
  auto m = Zeroed<CUpti_ActivityMemcpy6>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 1 << 20;
  m.start = 10;
  m.end = 20;
  m.streamId = 3;
  m.correlationId = 5;
  auto s = Zeroed<CUpti_ActivityMemset4>();
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  s.bytes = 512;
  s.start = 30;
  s.end = 31;
  RecordConverter converter(nullptr, nullptr);
  DeviceTrace trace;
  ASSERT_TRUE(converter.Convert(reinterpret_cast<CUpti_Activity*>(&m), trace));
  ASSERT_TRUE(converter.Convert(reinterpret_cast<CUpti_Activity*>(&s), trace));
  ASSERT_EQ(trace.events.size(), 2u);
  EXPECT_EQ(trace.events[0].kind, DeviceEventKind::kMemcpy);
  EXPECT_EQ(trace.names[trace.events[0].name], "Memcpy HtoD (Pinned -> Device)");
  EXPECT_EQ(trace.events[0].bytes, 1u << 20);
  EXPECT_EQ(trace.events[1].kind, DeviceEventKind::kMemset);
  EXPECT_EQ(trace.names[trace.events[1].name], "Memset (Device)");
  EXPECT_EQ(MemcpyName(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                       CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE),
            "Memcpy DtoH (Device -> Pageable)");
}

TEST(CuptiRecords, ApiCallsAreNamedAndKeepTheirThread) {
  auto a = Zeroed<CUpti_ActivityAPI>();
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = 211;
  a.start = 100;
  a.end = 150;
  a.threadId = 4242;
  a.correlationId = 9;
  auto d = a;
  d.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  d.cbid = 999999;  // a number the namer does not know
  RecordConverter converter(
      [](bool driver, uint32_t cbid) {
        return !driver && cbid == 211 ? std::string("cudaLaunchKernel") : std::string();
      },
      nullptr);
  DeviceTrace trace;
  ASSERT_TRUE(converter.Convert(reinterpret_cast<CUpti_Activity*>(&a), trace));
  ASSERT_TRUE(converter.Convert(reinterpret_cast<CUpti_Activity*>(&d), trace));
  EXPECT_EQ(trace.events[0].kind, DeviceEventKind::kRuntime);
  EXPECT_EQ(trace.names[trace.events[0].name], "cudaLaunchKernel");
  EXPECT_EQ(trace.events[0].thread_id, 4242u);
  EXPECT_EQ(trace.events[0].correlation, 9u);
  EXPECT_EQ(trace.events[1].kind, DeviceEventKind::kDriver);
  EXPECT_EQ(trace.names[trace.events[1].name], "driver API 999999");
}

TEST(CuptiRecords, SynchronizationFindsItsDeviceThroughTheContext) {
  auto s = Zeroed<CUpti_ActivitySynchronization2>();
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
  s.start = 10;
  s.end = 90;
  s.contextId = 6;
  s.streamId = 0xFFFFFFFFu;
  s.cudaEventId = 17;
  auto c = Zeroed<CUpti_ActivityContext3>();
  c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  c.contextId = 6;
  c.deviceId = 2;
  RecordConverter converter(nullptr, nullptr);
  DeviceTrace trace;
  ASSERT_TRUE(converter.Convert(reinterpret_cast<CUpti_Activity*>(&s), trace));
  ASSERT_TRUE(converter.Convert(reinterpret_cast<CUpti_Activity*>(&c), trace));
  ASSERT_EQ(trace.events.size(), 1u);  // a context record is no event
  converter.ResolveDevices(trace);
  EXPECT_EQ(trace.events[0].kind, DeviceEventKind::kSync);
  EXPECT_EQ(trace.names[trace.events[0].name], "Event Sync");
  EXPECT_EQ(trace.events[0].device, 2u);
  EXPECT_EQ(trace.events[0].event_id, 17);
}

TEST(CuptiRecords, UnknownKindsAreCountedAndAReversedSpanIsClamped) {
  auto o = Zeroed<CUpti_ActivityOverhead3>();
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  auto k = Zeroed<CUpti_ActivityKernel10>();
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = "plain_c_name";
  k.start = 500;
  k.end = 400;  // a record with its end before its start
  RecordConverter converter(nullptr, nullptr);
  DeviceTrace trace;
  EXPECT_FALSE(converter.Convert(reinterpret_cast<CUpti_Activity*>(&o), trace));
  EXPECT_EQ(converter.skipped(), 1u);
  ASSERT_TRUE(converter.Convert(reinterpret_cast<CUpti_Activity*>(&k), trace));
  EXPECT_EQ(trace.names[trace.events[0].name], "plain_c_name");
  EXPECT_EQ(trace.events[0].end_ns, trace.events[0].start_ns);
  EXPECT_EQ(DemangleKernelName(nullptr), "(unnamed kernel)");
}

double PeakOf(const GpuPeaks& p, devices::DType dtype) {
  for (const auto& peak : p.peaks) {
    if (peak.dtype == dtype) return peak.flops_per_second;
  }
  return 0;
}

TEST(GpuPeaks, HopperChipsComeFromTheDatasheet) {
  GpuFacts h200{"NVIDIA H200", 9, 0, 132, 1.98, 2.6, 6144};
  const GpuPeaks a = PeaksFor(h200);
  EXPECT_NE(a.source.find("H200 SXM"), std::string::npos) << a.source;
  EXPECT_DOUBLE_EQ(PeakOf(a, devices::DType::kBF16), 989.5e12);
  EXPECT_DOUBLE_EQ(PeakOf(a, devices::DType::kF32), 67e12);
  EXPECT_DOUBLE_EQ(a.memory_bytes_per_second, 4.8e12);
  const GpuPeaks pcie = PeaksFor({"NVIDIA H100 PCIe", 9, 0, 114, 1.755, 1.6, 5120});
  EXPECT_DOUBLE_EQ(PeakOf(pcie, devices::DType::kF16), 756e12);
  const GpuPeaks sxm = PeaksFor({"NVIDIA H100 80GB HBM3", 9, 0, 132, 1.98, 2.6, 5120});
  EXPECT_NE(sxm.source.find("H100 SXM"), std::string::npos);
  EXPECT_DOUBLE_EQ(PeakOf(sxm, devices::DType::kTF32), 494.5e12);
  EXPECT_NE(PeaksFor({"NVIDIA H200 NVL", 9, 0, 132, 1.785, 2.6, 6144}).source.find("NVL"),
            std::string::npos);
}

TEST(GpuPeaks, OtherChipsFromClocksMatchKnownDatasheets) {
  // An A800 (an A100 by another name, not in the datasheet table): 108 SMs at
  // 1.41 GHz; NVIDIA's A100 datasheet says fp32 19.5 and bf16 312 TFLOP/s.
  const GpuPeaks a100 = PeaksFor({"NVIDIA A800-SXM4-80GB", 8, 0, 108, 1.41, 1.593, 5120});
  EXPECT_NE(a100.source.find("from the SM count"), std::string::npos) << a100.source;
  EXPECT_NEAR(PeakOf(a100, devices::DType::kF32) / 1e12, 19.5, 0.1);
  EXPECT_NEAR(PeakOf(a100, devices::DType::kBF16) / 1e12, 312, 1);
  EXPECT_NEAR(PeakOf(a100, devices::DType::kTF32) / 1e12, 156, 0.5);
  // HBM2e: 1593 MHz, 5120 bits, double data rate: 2.04 TB/s (datasheet 2.0).
  EXPECT_NEAR(a100.memory_bytes_per_second / 1e12, 2.04, 0.01);
  // An unknown generation gets its fp32 peak only; no invented tensor-core figure.
  const GpuPeaks ada = PeaksFor({"NVIDIA L4", 8, 9, 58, 2.04, 6.251, 192});
  EXPECT_NEAR(PeakOf(ada, devices::DType::kF32) / 1e12, 2.0 * 128 * 58 * 2.04 / 1e3, 0.01);
  EXPECT_EQ(PeakOf(ada, devices::DType::kBF16), 0);
  EXPECT_EQ(Fp32LanesPerSm(6, 0), 0);
}

}  // namespace
}  // namespace opscope::cuda
