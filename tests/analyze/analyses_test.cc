// The analyses on small synthetic traces whose answers are known by construction.
#include "analyze/analyses.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "analyze/advisor.h"
#include "analyze/diff.h"
#include "analyze/flat_map.h"
#include "analyze/multirank.h"
#include "analyze/op_stats.h"
#include "analyze/roofline.h"

namespace opscope::analyze {
namespace {

class Builder {
 public:
  Builder& Add(EventClass cls, std::string_view name, int64_t begin_us, int64_t end_us,
               int64_t bytes = -1) {
    model.Append(EventRow{.start_ns = begin_us * 1000,
                          .duration_ns = (end_us - begin_us) * 1000,
                          .name = model.Intern(name),
                          .track = model.TrackFor(IsDevice(cls) ? "0" : "1", "1"),
                          .cls = cls,
                          .bytes = bytes,
                          .correlation = next_correlation,
                          .kind = model.Intern(kind)});
    return *this;
  }
  Builder& Correlate(int64_t id) {
    next_correlation = id;
    return *this;
  }
  Builder& Kind(std::string_view k) {
    kind = std::string(k);
    return *this;
  }
  TraceModel model;
  int64_t next_correlation = -1;
  std::string kind;
};

TEST(Intervals, UnionAndCoverage) {
  const auto merged = Union({{10, 20}, {0, 5}, {15, 30}, {40, 40}, {29, 35}});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].begin, 0);
  EXPECT_EQ(merged[1].begin, 10);
  EXPECT_EQ(merged[1].end, 35);
  EXPECT_EQ(Covered(merged, 3, 12), 4);
  EXPECT_EQ(Covered(merged, 100, 200), 0);
}

TEST(DeviceBusy, GapsAndTheirCauses) {
  Builder b;
  b.Add(EventClass::kKernel, "gemm", 0, 100)
      .Add(EventClass::kKernel, "gemm", 200, 300)  // gap 100..200: host launching
      .Add(EventClass::kRuntime, "cudaLaunchKernel", 110, 190)
      .Add(EventClass::kKernel, "relu", 500, 600)  // gap 300..500: host waits on a sync
      .Add(EventClass::kSync, "cudaStreamSynchronize", 300, 480)
      .Add(EventClass::kKernel, "relu", 1000, 1100)  // gap 600..1000: data loading
      .Add(EventClass::kAnnotation, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
           600, 1000)
      .Add(EventClass::kKernel, "relu", 1150, 1200);  // gap 1100..1150: nothing on the host
  const DeviceBusy busy = ComputeDeviceBusy(b.model, 10000, 10, 12);
  ASSERT_TRUE(busy.has_device);
  EXPECT_EQ(busy.window_end_ns - busy.window_begin_ns, 1200000);
  EXPECT_EQ(busy.busy_ns, 450000);  // 100 + 100 + 100 + 100 + 50 us
  EXPECT_DOUBLE_EQ(busy.busy_pct, 37.5);
  ASSERT_EQ(busy.gaps.size(), 4u);
  EXPECT_EQ(busy.gaps[0].duration_ns, 400000);
  EXPECT_EQ(busy.gaps[0].cause, "data loading");
  EXPECT_EQ(busy.gaps[1].cause, "synchronization wait");
  EXPECT_NE(busy.gaps[1].evidence.find("cudaStreamSynchronize"), std::string::npos);
  EXPECT_EQ(busy.gaps[2].cause, "host-bound");
  EXPECT_NE(busy.gaps[2].evidence.find("cudaLaunchKernel"), std::string::npos);
  EXPECT_EQ(busy.gaps[3].cause, "no host activity");
  ASSERT_EQ(busy.timeline_pct.size(), 12u);
  EXPECT_DOUBLE_EQ(busy.timeline_pct[0], 100.0);  // 0..100 us
  EXPECT_DOUBLE_EQ(busy.timeline_pct[7], 0.0);    // 700..800 us
  EXPECT_FALSE(ComputeDeviceBusy(Builder().Add(EventClass::kHostOp, "x", 0, 1).model).has_device);
  // Found by the fuzzer: device events that all last zero time.
  EXPECT_FALSE(ComputeDeviceBusy(Builder().Add(EventClass::kKernel, "k", 5, 5).model).has_device);
}

TEST(Steps, DeviceTimeInsideEachStep) {
  Builder b;
  b.Add(EventClass::kStep, "ProfilerStep#1", 0, 100)
      .Add(EventClass::kStep, "ProfilerStep#2", 100, 200)
      .Add(EventClass::kKernel, "gemm", 0, 30)
      .Add(EventClass::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", 20, 50)
      .Add(EventClass::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 60, 70)
      .Add(EventClass::kKernel, "gemm", 90, 150);  // crosses into step 2
  const auto steps = ComputeSteps(b.model);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].name, "ProfilerStep#1");
  EXPECT_EQ(steps[0].compute_ns, 40000);        // 0..30 and 90..100
  EXPECT_EQ(steps[0].communication_ns, 30000);  // 20..50
  EXPECT_EQ(steps[0].memory_ns, 10000);
  EXPECT_EQ(steps[0].idle_ns, 100000 - 70000);  // busy: 0..50, 60..70, 90..100
  EXPECT_EQ(steps[1].compute_ns, 50000);
  EXPECT_EQ(steps[1].idle_ns, 50000);
}

TEST(Transfers, DirectionsBytesAndBandwidth) {
  Builder b;
  b.Add(EventClass::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 0, 10, 20000)
      .Add(EventClass::kMemcpy, "Memcpy HtoD (Pinned -> Device)", 20, 30, 30000)
      .Add(EventClass::kMemcpy, "Memcpy DtoH (Device -> Pageable)", 40, 42)
      .Add(EventClass::kKernel, "gemm", 50, 128);
  const auto t = ComputeTransfers(b.model);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].direction, "HtoD");
  EXPECT_EQ(t[0].count, 2);
  EXPECT_EQ(t[0].bytes, 50000);
  EXPECT_DOUBLE_EQ(t[0].gbps, 50000.0 / 20000.0);
  EXPECT_DOUBLE_EQ(t[0].share_of_device_pct, 20.0);  // 20 of 100 us
  EXPECT_EQ(t[1].direction, "DtoH");
  EXPECT_EQ(t[1].bytes, -1);
}

TEST(Layout, ConversionShare) {
  Builder b;
  b.Add(EventClass::kKernel, "TransData", 0, 38)
      .Add(EventClass::kKernel, "Conv2D", 38, 100)
      .Add(EventClass::kHostOp, "aten::contiguous", 0, 5)
      .Add(EventClass::kHostOp, "aten::conv2d", 5, 25);
  const LayoutShare l = ComputeLayoutShare(b.model);
  EXPECT_DOUBLE_EQ(l.device_pct, 38.0);
  EXPECT_DOUBLE_EQ(l.host_pct, 20.0);
  ASSERT_EQ(l.top.size(), 2u);
  EXPECT_EQ(l.top[0].first, "TransData");
  EXPECT_TRUE(IsLayoutConversion("aclnnMm_TransData_TransData"));
  EXPECT_FALSE(IsLayoutConversion("aten::conv2d"));
  EXPECT_TRUE(IsCommunication("hcom_allReduce_"));
}

TEST(LongTail, FlagsOperatorsWithARareSlowCall) {
  Builder b;
  for (int i = 0; i < 20; ++i)
    b.Add(EventClass::kHostOp, "aten::item", i * 100, i * 100 + (i == 19 ? 50 : 2));
  for (int i = 0; i < 20; ++i)
    b.Add(EventClass::kHostOp, "aten::add", 5000 + i * 10, 5000 + i * 10 + 3);
  const auto tail = ComputeLongTail(ComputeOpStats(b.model));
  ASSERT_EQ(tail.size(), 1u);
  EXPECT_EQ(tail[0].name, "aten::item");
  EXPECT_EQ(tail[0].p50_ns, 2000);
  EXPECT_EQ(tail[0].max_ns, 50000);
}

TEST(CpuFallback, AiCpuTasksAndHostOnlyOperators) {
  Builder b;
  b.Kind("AI_CPU")
      .Add(EventClass::kKernel, "Unique", 0, 30)
      .Kind("AI_CORE")
      .Add(EventClass::kKernel, "MatMul", 30, 100);
  b.Kind("").Add(EventClass::kRuntime, "aclnnMatmul", 0, 10);
  b.Add(EventClass::kHostOp, "aten::matmul", 0, 20);        // launched work
  b.Add(EventClass::kHostOp, "aten::nonzero", 2000, 5000);  // 3 ms on the CPU alone
  const CpuFallback f = ComputeCpuFallback(b.model);
  EXPECT_EQ(f.ai_cpu_count, 1);
  EXPECT_DOUBLE_EQ(f.ai_cpu_share_pct, 30.0);
  ASSERT_EQ(f.host_only_ops.size(), 1u);
  EXPECT_EQ(f.host_only_ops[0].first, "aten::nonzero");
}

TEST(LaunchBound, ShortKernelsAndLaunchDelay) {
  Builder b;
  for (int i = 0; i < 150; ++i) {
    b.Correlate(i).Add(EventClass::kRuntime, "cudaLaunchKernel", i * 20, i * 20 + 5);
    b.Correlate(i).Add(EventClass::kKernel, "tiny", i * 20 + 7,
                       i * 20 + 9);  // 2 us kernels, 7 us after launch
  }
  const LaunchBound l = ComputeLaunchBound(b.model, 10.0);
  EXPECT_EQ(l.kernels, 150);
  EXPECT_EQ(l.median_kernel_ns, 2000);
  EXPECT_EQ(l.launch_delay_p50_ns, 7000);
  EXPECT_TRUE(l.launch_bound);
  EXPECT_FALSE(ComputeLaunchBound(b.model, 80.0).launch_bound);
}

TEST(Fusion, GemmFollowedByElementwise) {
  Builder b;
  for (int i = 0; i < 4; ++i) {
    b.Add(EventClass::kKernel, "ampere_sgemm_128x64_nn", i * 100, i * 100 + 50);
    b.Add(EventClass::kKernel, "vectorized_elementwise_kernel<relu>", i * 100 + 51, i * 100 + 60);
  }
  b.Add(EventClass::kKernel, "ampere_sgemm_128x64_nn", 1000, 1050)
      .Add(EventClass::kKernel, "softmax", 1051, 1060);
  const auto f = ComputeFusionCandidates(b.model);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].count, 4);
  EXPECT_EQ(f[0].consumer_ns, 36000);
}

std::vector<std::string> Ids(const std::vector<Finding>& findings) {
  std::vector<std::string> ids;
  for (const auto& f : findings) ids.push_back(f.id);
  return ids;
}

TEST(Advisor, RulesFireOnTheirEvidenceAndOnlyThen) {
  // A busy device with nothing wrong: no findings.
  Builder healthy;
  for (int i = 0; i < 10; ++i) healthy.Add(EventClass::kKernel, "hgemm", i * 100, i * 100 + 99);
  EXPECT_TRUE(Advise(AnalyzeTrace(healthy.model)).empty());

  // Idle device waiting on syncs, TransData, AI CPU tasks and slow pageable copies.
  Builder b;
  b.Kind("AI_CORE").Add(EventClass::kKernel, "TransData", 0, 40);
  b.Kind("AI_CPU").Add(EventClass::kKernel, "Cast", 40, 60);
  b.Kind("").Add(EventClass::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 60, 80, 40000);  // 2 GB/s
  b.Add(EventClass::kKernel, "MatMul", 1000, 1020);
  b.Add(EventClass::kSync, "aclrtSynchronizeStream", 80, 990);
  const auto findings = Advise(AnalyzeTrace(b.model));
  const auto ids = Ids(findings);
  for (const char* id :
       {"low_device_utilization", "layout_conversions", "cpu_fallback", "transfers_HtoD"}) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
  }
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  const auto low = std::find_if(findings.begin(), findings.end(),
                                [](const Finding& f) { return f.id == "low_device_utilization"; });
  EXPECT_NE(low->evidence.find("synchronization wait"), std::string::npos) << low->evidence;
  EXPECT_NE(low->action.find(".item()"), std::string::npos);
  const auto copies = std::find_if(findings.begin(), findings.end(),
                                   [](const Finding& f) { return f.id == "transfers_HtoD"; });
  EXPECT_NE(copies->action.find("pin_memory"), std::string::npos);

  // The thresholds decide: raise them and the findings go.
  Thresholds lenient;
  lenient.busy_warning_pct = 1, lenient.layout_device_pct = 90, lenient.layout_host_pct = 90;
  lenient.ai_cpu_pct = 90, lenient.transfer_device_pct = 90;
  EXPECT_TRUE(Advise(AnalyzeTrace(b.model), lenient).empty());
}

TEST(Roofline, MatmulCostFromRecordedShapes) {
  int64_t flops = 0, bytes = 0;
  std::string dtype;
  ASSERT_TRUE(MatmulCost("aten::mm", "[[2, 2048], [2048, 1]]", "[\"float\", \"float\"]", flops,
                         bytes, dtype));
  EXPECT_EQ(flops, 2 * 2 * 2048 * 1);
  EXPECT_EQ(bytes, 4 * (2 * 2048 + 2048 + 2));
  EXPECT_EQ(dtype, "fp32");
  ASSERT_TRUE(MatmulCost("aten::bmm", "[[8, 16, 32], [8, 32, 4]]", "[\"c10::BFloat16\"]", flops,
                         bytes, dtype));
  EXPECT_EQ(flops, 2 * 8 * 16 * 32 * 4);
  EXPECT_EQ(dtype, "bf16");
  ASSERT_TRUE(MatmulCost("aten::linear", "[[4, 10, 64], [32, 64], [32]]", "[\"float\"]", flops,
                         bytes, dtype));
  EXPECT_EQ(flops, 2 * 40 * 64 * 32);
  ASSERT_TRUE(MatmulCost("aten::addmm", "[[256], [2048, 6948], [6948, 256], [], []]", "[\"float\"]",
                         flops, bytes, dtype));
  EXPECT_EQ(flops, int64_t{2} * 2048 * 6948 * 256);
  // Other inputs under the same name, mismatched dimensions, unknown types: no cost.
  EXPECT_FALSE(MatmulCost("aten::linear", "[[2048, 160, 606], [2048, 3906], [2048, 3906]]",
                          "[\"float\"]", flops, bytes, dtype));
  EXPECT_FALSE(MatmulCost("aten::mm", "[[2, 3], [4, 5]]", "[\"float\"]", flops, bytes, dtype));
  EXPECT_FALSE(
      MatmulCost("aten::mm", "[[2, 3], [3, 5]]", "[\"c10::complex<float>\"]", flops, bytes, dtype));
  EXPECT_FALSE(MatmulCost("aten::relu", "[[2, 3]]", "[\"float\"]", flops, bytes, dtype));
}

TEST(Roofline, ConvolutionAndElementwiseCostFromShapes) {
  int64_t flops = 0, bytes = 0;
  std::string dtype;
  // The field report's 3x3 s2 64->64 convolution at batch 16 on 56x56: 0.92 GFLOP.
  ASSERT_TRUE(ShapeCost("aten::conv2d", "[[16, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], []]",
                        "[\"float\", \"float\"]",
                        "[\"\", \"\", \"\", \"[2, 2]\", \"[1, 1]\", \"[1, 1]\", \"1\"]", flops,
                        bytes, dtype));
  EXPECT_EQ(flops, int64_t{2} * 16 * 64 * 28 * 28 * 64 * 9);
  EXPECT_EQ(bytes, 4 * (16 * 64 * 56 * 56 + 64 * 64 * 9 + 16 * 64 * 28 * 28));
  // Grouped (depthwise) convolution.
  ASSERT_TRUE(ShapeCost(
      "aten::conv2d", "[[1, 32, 10, 10], [32, 1, 3, 3], [], [], [], [], []]", "[\"float\"]",
      "[\"\", \"\", \"\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"32\"]", flops, bytes, dtype));
  EXPECT_EQ(flops, 2 * 32 * 10 * 10 * 9);
  EXPECT_FALSE(ShapeCost("aten::conv2d", "[[16, 64, 56, 56], [64, 64, 3, 3]]", "[\"float\"]", "",
                         flops, bytes, dtype))
      << "no stride or padding recorded";
  ASSERT_TRUE(ShapeCost("aten::add_", "[[128], [128], []]", "[\"float\", \"float\", \"Scalar\"]",
                        "", flops, bytes, dtype));
  EXPECT_EQ(flops, 128);
  EXPECT_EQ(bytes, 4 * (128 + 128 + 128));
  EXPECT_FALSE(ShapeCost("aten::softmax", "[[128]]", "[\"float\"]", "", flops, bytes, dtype));
}

TEST(Roofline, DeviceOperatorsUseTheirKernelsAndCeilingsDecideTheBound) {
  Builder b;
  // aten::mm on the host (track of pid 1) launches one kernel of 100 us.
  b.Add(EventClass::kHostOp, "aten::mm", 0, 20);
  b.model.flops.back() = 2000000000;  // 2 GFLOP
  b.model.bytes.back() = 4000000;     // 4 MB: 500 FLOP/B
  b.Correlate(7).Add(EventClass::kRuntime, "cudaLaunchKernel", 5, 10);
  b.Correlate(7).Add(EventClass::kKernel, "sgemm", 30, 130);
  // A second operator whose launched kernel is missing gets no rate.
  b.Correlate(-1).Add(EventClass::kHostOp, "aten::mm", 200, 220);
  b.model.flops.back() = 2000000000;
  b.model.bytes.back() = 4000000;
  b.Correlate(8).Add(EventClass::kRuntime, "cudaLaunchKernel", 205, 210);
  RooflineCeilings c{"test", "test", {{"fp32", 40e12}}, 1e12};  // ridge at 40 FLOP/B
  const auto r = ComputeRoofline(b.model, &c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].calls, 1);
  EXPECT_EQ(r[0].time_ns, 100000);
  EXPECT_EQ(r[0].time_source, "device kernels");
  EXPECT_DOUBLE_EQ(r[0].achieved, 2e9 / 100e-6);  // 20 TFLOP/s
  EXPECT_DOUBLE_EQ(r[0].intensity, 500);
  EXPECT_EQ(r[0].bound, "compute");
  EXPECT_DOUBLE_EQ(r[0].pct_of_attainable, 50.0);
  EXPECT_TRUE(KnownDeviceCeilings("NVIDIA H200").has_value());
  EXPECT_DOUBLE_EQ(KnownDeviceCeilings("NVIDIA A100-PG509-200")->bytes_per_second, 1.555e12);
  EXPECT_FALSE(KnownDeviceCeilings("AMD Radeon Graphics").has_value());
}

// Through ComputeRoofline, not just the cost function: shapes reach the roofline.
TEST(Roofline, ShapesOfAConvolutionReachTheRoofline) {
  Builder b;
  b.Add(EventClass::kHostOp, "aten::conv2d", 0, 1000);
  b.model.input_dims.back() =
      b.model.Intern("[[16, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], []]");
  b.model.input_type.back() = b.model.Intern("[\"float\", \"float\"]");
  b.model.concrete_inputs.back() =
      b.model.Intern("[\"\", \"\", \"\", \"[2, 2]\", \"[1, 1]\", \"[1, 1]\", \"1\"]");
  const auto r = ComputeRoofline(b.model, nullptr);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_DOUBLE_EQ(r[0].flops, 2.0 * 16 * 64 * 28 * 28 * 64 * 9);
  EXPECT_EQ(r[0].dtype, "fp32");
}

TEST(Roofline, CpuTracesUseHostTime) {
  Builder b;
  b.Add(EventClass::kHostOp, "Conv2D", 0, 1000);  // 1 ms
  b.model.flops.back() = 1000000000;
  b.model.bytes.back() = 100000000;                                     // 10 FLOP/B
  RooflineCeilings c{"cpu", "ceilings.json", {{"fp32", 500e9}}, 50e9};  // ridge at 10 FLOP/B
  const auto r = ComputeRoofline(b.model, &c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].time_source, "host");
  EXPECT_DOUBLE_EQ(r[0].achieved, 1e12);
  EXPECT_EQ(r[0].bound, "compute");  // at the ridge exactly
  EXPECT_DOUBLE_EQ(r[0].pct_of_attainable, 200.0);
}

TEST(Diff, StepsAndOperatorDeltas) {
  Builder before, after;
  before.Add(EventClass::kStep, "ProfilerStep#1", 0, 1000)
      .Add(EventClass::kStep, "ProfilerStep#2", 1000, 2000);
  before.Add(EventClass::kKernel, "gemm", 0, 600).Add(EventClass::kKernel, "TransData", 600, 800);
  after.Add(EventClass::kStep, "ProfilerStep#1", 0, 800)
      .Add(EventClass::kStep, "ProfilerStep#2", 800, 1600);
  after.Add(EventClass::kKernel, "gemm", 0, 606).Add(EventClass::kKernel, "relu", 606, 650);
  const TraceDiff d = DiffTraces(before.model, after.model);
  EXPECT_EQ(d.basis, "mean step");
  EXPECT_EQ(d.before_ns, 1000000);
  EXPECT_EQ(d.after_ns, 800000);
  EXPECT_DOUBLE_EQ(d.change_pct, -20.0);
  std::map<std::string, std::string> change;
  for (const auto& o : d.operators) change[o.name] = o.change;
  EXPECT_EQ(change["TransData"], "removed");
  EXPECT_EQ(change["relu"], "added");
  EXPECT_EQ(change["gemm"], "same");  // +1%, within 2%
  EXPECT_EQ(change["ProfilerStep#1"], "faster");
  // Without steps, the span decides.
  Builder x, y;
  x.Add(EventClass::kKernel, "a", 0, 100);
  y.Add(EventClass::kKernel, "a", 50, 200);
  EXPECT_EQ(DiffTraces(x.model, y.model).basis, "trace span");
  EXPECT_DOUBLE_EQ(DiffTraces(x.model, y.model).change_pct, 50.0);
}

TEST(MultiRank, StepTimesSlowRankAndOverlap) {
  Builder fast, slow;
  fast.Add(EventClass::kStep, "ProfilerStep#1", 0, 100);
  fast.Add(EventClass::kKernel, "gemm", 0, 60)
      .Add(EventClass::kKernel, "ncclKernel_AllReduce", 40, 90);
  slow.Add(EventClass::kStep, "ProfilerStep#1", 0, 130);
  slow.Add(EventClass::kKernel, "gemm", 0, 80)
      .Add(EventClass::kKernel, "ncclKernel_AllReduce", 100, 120);
  fast.model.metadata["distributedInfo"] =
      "{\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 4}";
  const RankSummary f = SummarizeRank(fast.model, 0);
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.mean_step_ns, 100000);
  EXPECT_EQ(f.compute_ns, 60000);
  EXPECT_EQ(f.communication_ns, 50000);
  EXPECT_EQ(f.overlap_ns, 20000);  // 40..60 us
  const RankSummary s = SummarizeRank(slow.model, 7);
  EXPECT_EQ(s.rank, 7);
  EXPECT_EQ(s.overlap_ns, 0);
  Builder third;
  third.Add(EventClass::kStep, "ProfilerStep#1", 0, 100);
  const RankComparison c = CompareRanks({s, f, SummarizeRank(third.model, 5)});
  ASSERT_EQ(c.ranks.size(), 3u);
  EXPECT_EQ(c.ranks[0].rank, 3);
  EXPECT_EQ(c.slow_rank, 7);
  EXPECT_DOUBLE_EQ(c.slow_pct, 30.0);  // 130 vs a median of 100
}

TEST(Int64Map, AgreesWithStdMapThroughGrowthAndExtremeKeys) {
  Int64Map<int64_t> flat;
  std::map<int64_t, int64_t> reference;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    // Dense ids, colliding multiples of the table size, and both extremes.
    const int64_t key = i % 5 == 0   ? static_cast<int64_t>(rng() % 1000) << 20
                        : i % 7 == 0 ? (i % 2 ? INT64_MIN : INT64_MAX)
                                     : static_cast<int64_t>(rng() % 50000) - 25000;
    flat[key] += i;
    reference[key] += i;
  }
  ASSERT_EQ(flat.size(), reference.size());
  for (const auto& [key, value] : reference) {
    const int64_t* found = flat.Find(key);
    ASSERT_NE(found, nullptr) << key;
    EXPECT_EQ(*found, value) << key;
  }
  EXPECT_EQ(flat.Find(123456789), nullptr);
  size_t seen = 0;
  flat.ForEach([&](int64_t key, int64_t value) {
    ++seen;
    EXPECT_EQ(reference.at(key), value);
  });
  EXPECT_EQ(seen, reference.size());
}

TEST(Percentiles, NearestRankLikeAFullSort) {
  std::mt19937_64 rng(3);
  for (const size_t n : {1u, 2u, 3u, 10u, 99u, 100u, 101u, 1000u}) {
    std::vector<int64_t> values(n);
    for (auto& v : values) v = static_cast<int64_t>(rng() % 1000);
    std::vector<int64_t> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const auto rank = [&](double q) {
      return sorted[std::min(n - 1, static_cast<size_t>(q * static_cast<double>(n - 1) + 0.5))];
    };
    int64_t p50 = -1, p99 = -1, max = -1;
    Percentiles(values.begin(), values.end(), p50, p99, max);
    EXPECT_EQ(p50, rank(0.5)) << n;
    EXPECT_EQ(p99, rank(0.99)) << n;
    EXPECT_EQ(max, sorted.back()) << n;
  }
}

}  // namespace
}  // namespace opscope::analyze
