// The network plan: shapes, the memory plan, parameters and every operator's
// figures, against arithmetic done here by hand (the measurement rules of
// ARCHITECTURE: matmul 2*M*N*K, convolution 2*N*Cout*Hout*Wout*Cin*kh*kw).
#include "devices/network_plan.h"

#include <gtest/gtest.h>

#include "opscope/opscope.h"

namespace opscope::devices {
namespace {

// input 2x3x8x8 -> conv 4 (3x3, stride 2, pad 1) -> BN+ReLU -> max pool 2 ->
// global average pool -> linear 5 -> loss.
NetworkSpec SmallNet() {
  NetworkSpec spec;
  spec.batch = 2, spec.channels = 3, spec.height = 8, spec.width = 8;
  spec.layers = {{LayerKind::kConv, "conv", {-1}, 4, 3, 2, 1},
                 {LayerKind::kBatchNorm, "bn", {0}, 0, 1, 1, 0, true},
                 {LayerKind::kMaxPool, "pool", {1}, 0, 2, 2, 0},
                 {LayerKind::kGlobalAvgPool, "gap", {2}},
                 {LayerKind::kLinear, "fc", {3}, 5},
                 {LayerKind::kSoftmaxCrossEntropy, "loss", {4}}};
  return spec;
}

TEST(NetworkPlan, ShapesAndTheMemoryPlan) {
  const NetworkPlan plan = PlanNetwork(SmallNet(), {});
  EXPECT_EQ(plan.layers[0].out_dims, (Dims{2, 4, 4, 4}));  // (8 + 2 - 3) / 2 + 1 = 4
  EXPECT_EQ(plan.layers[2].out_dims, (Dims{2, 4, 2, 2}));
  EXPECT_EQ(plan.layers[3].out_dims, (Dims{2, 4, 1, 1}));
  EXPECT_EQ(plan.layers[4].out_dims, (Dims{2, 5}));
  EXPECT_EQ(plan.layers[0].consumers, (std::vector<int>{1}));
  // The conv's output is read by the batch norm's backward; the BN+ReLU keeps
  // nothing of its own for a max pool that reads its workspace.
  EXPECT_TRUE(plan.layers[0].keep_output);
  EXPECT_FALSE(plan.layers[1].keep_output);
  EXPECT_TRUE(plan.layers[3].keep_output) << "the linear layer reads its input";
  EXPECT_TRUE(plan.layers[5].keep_output) << "the network's output";
  EXPECT_FALSE(plan.layers[0].needs_input_gradient) << "the network's input";
  EXPECT_TRUE(plan.layers[0].backward_data.empty());
  // Weights 4*3*3*3 + BN scale and shift 4+4 + linear 5*4 + bias 5.
  EXPECT_EQ(plan.parameter_count, 108 + 8 + 20 + 5);
}

TEST(NetworkPlan, OperatorsCarryTheirFiguresOnce) {
  const NetworkPlan plan = PlanNetwork(SmallNet(), {});
  const TracedOp& conv = plan.layers[0].forward;
  EXPECT_EQ(conv.name, "Conv2D");
  EXPECT_EQ(conv.shapes, "[[2,3,8,8],[4,3,3,3]]");
  EXPECT_EQ(conv.dtype, "fp32");
  EXPECT_EQ(conv.module, "conv");
  EXPECT_EQ(conv.flops, 2 * 2 * 4 * 4 * 4 * 3 * 3 * 3);
  EXPECT_EQ(conv.bytes, 4 * (2 * 3 * 8 * 8 + 4 * 3 * 3 * 3 + 2 * 4 * 4 * 4));
  EXPECT_EQ(plan.layers[0].backward.name, "Conv2DBackwardWeights");
  EXPECT_EQ(plan.layers[1].forward.name, "BatchNorm+ReLU");
  EXPECT_EQ(plan.layers[1].backward.name, "BatchNorm+ReLUBackward");
  const int64_t bn_e = 2 * 4 * 4 * 4;
  EXPECT_EQ(plan.layers[1].forward.flops, 4 * bn_e + bn_e) << "statistics, normalisation, ReLU";
  EXPECT_EQ(plan.layers[2].forward.flops, 2 * 4 * 2 * 2 * (2 * 2)) << "a max over each window";
  const TracedOp& fc = plan.layers[4].forward;
  EXPECT_EQ(fc.shapes, "[[2,4,1,1],[5,4]]");
  EXPECT_EQ(fc.flops, 2 * 2 * 4 * 5);
  EXPECT_EQ(plan.layers[4].backward_data.name, "LinearBackwardData");
  EXPECT_EQ(plan.optimizer.name, "SGD");
  EXPECT_EQ(plan.optimizer.flops, 4 * plan.parameter_count);
  EXPECT_EQ(plan.optimizer.bytes, 5 * 4 * plan.parameter_count);
}

TEST(NetworkPlan, TheDtypeSetsTheNameAndTheElementSize) {
  NetworkOptions bf16;
  bf16.dtype = DType::kBF16;
  const NetworkPlan plan = PlanNetwork(SmallNet(), bf16);
  EXPECT_EQ(plan.layers[0].forward.dtype, "bf16");
  EXPECT_EQ(plan.layers[0].forward.bytes, 2 * (2 * 3 * 8 * 8 + 4 * 3 * 3 * 3 + 2 * 4 * 4 * 4));
  EXPECT_EQ(plan.optimizer.dtype, "fp32") << "SGD updates the fp32 master weights";
  NetworkOptions tf32;
  tf32.dtype = DType::kTF32;
  EXPECT_EQ(PlanNetwork(SmallNet(), tf32).layers[0].forward.dtype, "tf32");
}

TEST(NetworkPlan, InferenceHasNoBackwardAndKeepsOnlyTheOutput) {
  NetworkOptions infer;
  infer.training = false;
  const NetworkPlan plan = PlanNetwork(SmallNet(), infer);
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    EXPECT_TRUE(plan.layers[i].backward.empty()) << i;
    EXPECT_EQ(plan.layers[i].keep_output, i + 1 == plan.layers.size()) << i;
  }
  EXPECT_EQ(plan.layers[1].forward.flops, 2 * 2 * 4 * 4 * 4 + 2 * 4 * 4 * 4)
      << "running statistics: normalisation and ReLU only";
}

TEST(NetworkPlan, InitialValuesFollowTheRecipeAndTheSeed) {
  const NetworkPlan plan = PlanNetwork(SmallNet(), {});
  std::mt19937_64 a(7), b(7);
  const auto conv_a = InitialValues(plan.layers[0].params[0], a);
  const auto conv_b = InitialValues(plan.layers[0].params[0], b);
  EXPECT_EQ(conv_a, conv_b);
  ASSERT_EQ(conv_a.size(), 108u);
  double sum2 = 0;
  for (const float x : conv_a) sum2 += x * x;
  // He: stddev sqrt(2 / (4 * 3 * 3)) = 0.2357; 108 draws land near it.
  EXPECT_NEAR(std::sqrt(sum2 / 108), 0.2357, 0.08);
  const auto scale = InitialValues(plan.layers[1].params[0], a);
  for (const float x : scale) EXPECT_EQ(x, 1.f);
  const auto fc = InitialValues(plan.layers[4].params[0], a);
  for (const float x : fc) EXPECT_LE(std::abs(x), 0.5f) << "uniform(+-1/sqrt(4))";
}

TEST(NetworkPlan, ShapesThatDoNotWorkNameTheLayer) {
  NetworkSpec spec = SmallNet();
  spec.layers[0].kernel = 11;  // past the padded 8x8 input
  try {
    PlanNetwork(spec, {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("conv: "), std::string::npos) << e.what();
  }
  spec = SmallNet();
  spec.layers[4].inputs = {1};  // a linear layer on 2x4x4x4
  EXPECT_THROW(PlanNetwork(spec, {}), Error);
}

}  // namespace
}  // namespace opscope::devices
