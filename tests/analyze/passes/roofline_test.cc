// The roofline pass: FLOPs and bytes from shapes, time sources, bounds.
#include "analyze/passes/roofline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analyze/model_builder.h"
#include "analyze/names.h"
#include "analyze/pipeline.h"

namespace opscope::analyze {
namespace {

using model_builder::Builder;

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
  b.model.flops.Set(b.model.size() - 1, 2000000000);  // 2 GFLOP
  b.model.bytes.Set(b.model.size() - 1, 4000000);     // 4 MB: 500 FLOP/B
  b.Correlate(7).Add(EventClass::kRuntime, "cudaLaunchKernel", 5, 10);
  b.Correlate(7).Add(EventClass::kKernel, "sgemm", 30, 130);
  // A second operator whose launched kernel is missing gets no rate.
  b.Correlate(-1).Add(EventClass::kHostOp, "aten::mm", 200, 220);
  b.model.flops.Set(b.model.size() - 1, 2000000000);
  b.model.bytes.Set(b.model.size() - 1, 4000000);
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
  b.model.flops.Set(b.model.size() - 1, 1000000000);
  b.model.bytes.Set(b.model.size() - 1, 100000000);                     // 10 FLOP/B
  RooflineCeilings c{"cpu", "ceilings.json", {{"fp32", 500e9}}, 50e9};  // ridge at 10 FLOP/B
  const auto r = ComputeRoofline(b.model, &c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].time_source, "host");
  EXPECT_DOUBLE_EQ(r[0].achieved, 1e12);
  EXPECT_EQ(r[0].bound, "compute");  // at the ridge exactly
  EXPECT_DOUBLE_EQ(r[0].pct_of_attainable, 200.0);
  // Above 100% is impossible: flagged, with what to check, never shown as fact.
  EXPECT_TRUE(r[0].inconsistent);
  EXPECT_NE(r[0].note.find("inconsistent"), std::string::npos) << r[0].note;
  EXPECT_NE(r[0].note.find("ceilings"), std::string::npos);
}

// An fp32 matmul whose kernel is a TF32 tensor-core kernel is rated against
// the TF32 peak on Ampere and later; the same name on Volta is not TF32.
TEST(Roofline, Tf32KernelsAreRatedAgainstTheTf32Peak) {
  for (const int major : {8, 7}) {
    Builder b;
    b.model.metadata["deviceProperties"] =
        "[{\"id\": 0, \"name\": \"x\", \"computeMajor\": " + std::to_string(major) + "}]";
    b.Add(EventClass::kHostOp, "aten::mm", 0, 20);
    b.model.input_dims.back() = b.model.Intern("[[1024, 1024], [1024, 1024]]");
    b.model.input_type.back() = b.model.Intern("[\"float\", \"float\"]");
    b.Correlate(7).Add(EventClass::kRuntime, "cudaLaunchKernel", 5, 10);
    b.Correlate(7).Add(EventClass::kKernel, "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4",
                       30, 130);
    RooflineCeilings c{"x", "test", {{"fp32", 19.5e12}, {"tf32", 156e12}}, 1.5e12};
    const auto r = ComputeRoofline(b.model, &c);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].dtype, major >= 8 ? "tf32" : "fp32");
    const double flops = 2.0 * 1024 * 1024 * 1024, rate = flops / 100e-6;
    EXPECT_NEAR(r[0].pct_of_attainable, 100 * rate / (major >= 8 ? 156e12 : 19.5e12), 1e-9);
  }
  EXPECT_TRUE(IsTf32Kernel("sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x16", -1));
  EXPECT_FALSE(IsTf32Kernel("ampere_sgemm_128x64_nn", 8));
}

TEST(Roofline, HalfIsFp16AndAMissingDtypeCeilingIsNotRated) {
  int64_t flops = 0, bytes = 0;
  std::string dtype;
  ASSERT_TRUE(MatmulCost("aten::mm", "[[8, 16], [16, 4]]", "[\"c10::Half\", \"c10::Half\"]", flops,
                         bytes, dtype));
  EXPECT_EQ(dtype, "fp16");
  EXPECT_EQ(bytes, 2 * (8 * 16 + 16 * 4 + 8 * 4));
  // bf16 on a V100, which has no bf16: no rating, and the reason.
  Builder b;
  b.Add(EventClass::kKernel, "k", 0, 100);
  b.model.flops.Set(b.model.size() - 1, 1000000);
  b.model.bytes.Set(b.model.size() - 1, 1000);
  b.model.dtype.back() = b.model.Intern("bf16");
  const auto v100 = KnownDeviceCeilings("Tesla V100-SXM2-16GB");
  ASSERT_TRUE(v100.has_value());
  EXPECT_EQ(v100->flops_per_second.count("bf16"), 0u);
  const auto r = ComputeRoofline(b.model, &*v100);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_LT(r[0].pct_of_attainable, 0);
  EXPECT_NE(r[0].note.find("no bf16 ceiling"), std::string::npos) << r[0].note;
  // The known-device table: each entry names its source.
  for (const char* name : {"NVIDIA H100 PCIe", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB",
                           "AMD Instinct MI250X", "AMD Instinct MI300X", "Ascend910B3"}) {
    const auto c = KnownDeviceCeilings(name);
    ASSERT_TRUE(c.has_value()) << name;
    EXPECT_FALSE(c->source.empty());
  }
  EXPECT_DOUBLE_EQ(KnownDeviceCeilings("NVIDIA H100 PCIe")->bytes_per_second, 2.0e12);
  // An NVL is judged as an NVL (it was given the SXM's peaks before the one
  // datasheet: 989.5 TFLOP/s bf16 for its 835.5).
  const auto nvl = KnownDeviceCeilings("NVIDIA H200 NVL");
  ASSERT_TRUE(nvl.has_value());
  EXPECT_DOUBLE_EQ(nvl->flops_per_second.at("bf16"), 835.5e12);
  EXPECT_NE(nvl->source.find("H200 NVL"), std::string::npos) << nvl->source;
  EXPECT_DOUBLE_EQ(KnownDeviceCeilings("NVIDIA A100-SXM4-80GB")->bytes_per_second, 2.039e12);
}

}  // namespace
}  // namespace opscope::analyze
