// The fusion pass.
#include "analyze/passes/fusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/model_builder.h"
#include "analyze/names.h"
#include "analyze/pipeline.h"

namespace opscope::analyze {
namespace {

using model_builder::Builder;

void Shapes(Builder& b, std::string_view dims, std::string_view types) {
  b.model.input_dims.back() = b.model.Intern(dims);
  b.model.input_type.back() = b.model.Intern(types);
}

TEST(Fusion, OnlyWhereTheConsumerReadsTheProducersOutput) {
  Builder b;
  int64_t t = 0, id = 1;
  for (int i = 0; i < 4; ++i, t += 1000) {
    // linear [64, 512] x [1024, 512]^T -> [64, 1024], then relu on it.
    b.External(id++).Add(EventClass::kHostOp, "aten::linear", t, t + 100);
    Shapes(b, "[[64, 512], [1024, 512], [1024]]", "[\"float\", \"float\", \"float\"]");
    b.Add(EventClass::kHostOp, "aten::addmm", t + 10, t + 90);  // nested: not a producer
    Shapes(b, "[[1024], [64, 512], [512, 1024], [], []]", "[\"float\", \"float\", \"float\"]");
    b.Add(EventClass::kKernel, "ampere_sgemm_128x64_tn", t + 100, t + 150);
    b.External(id++).Add(EventClass::kHostOp, "aten::relu", t + 110, t + 130);
    Shapes(b, "[[64, 1024]]", "[\"float\"]");
    b.Add(EventClass::kKernel, "vectorized_elementwise_kernel<relu>", t + 151, t + 160);
    // mm, then an add of an int64 tensor of another shape: no data passed.
    b.External(id++).Add(EventClass::kHostOp, "aten::mm", t + 200, t + 300);
    Shapes(b, "[[64, 512], [512, 1024]]", "[\"float\", \"float\"]");
    b.External(id++).Add(EventClass::kHostOp, "aten::add", t + 310, t + 320);
    Shapes(b, "[[64], [64], []]", "[\"long int\", \"long int\", \"Scalar\"]");
    // mm, then an add of the right shape but another element type.
    b.External(id++).Add(EventClass::kHostOp, "aten::mm", t + 400, t + 500);
    Shapes(b, "[[64, 512], [512, 1024]]", "[\"float\", \"float\"]");
    b.External(id++).Add(EventClass::kHostOp, "aten::add", t + 510, t + 520);
    Shapes(b, "[[64, 1024], [64, 1024], []]", "[\"long int\", \"long int\", \"Scalar\"]");
  }
  const auto f = ComputeFusionCandidates(b.model);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].producer, "aten::linear");
  EXPECT_EQ(f[0].consumer, "aten::relu");
  EXPECT_EQ(f[0].shape, "[64, 1024]");
  EXPECT_EQ(f[0].count, 4);
  EXPECT_EQ(f[0].consumer_ns, 36000);  // the relu kernels' device time
}

TEST(Fusion, NoShapesNoClaim) {
  Builder b;
  for (int i = 0; i < 4; ++i) {
    b.Add(EventClass::kKernel, "ampere_sgemm_128x64_nn", i * 100, i * 100 + 50);
    b.Add(EventClass::kKernel, "vectorized_elementwise_kernel<relu>", i * 100 + 51, i * 100 + 60);
    b.Add(EventClass::kHostOp, "aten::mm", i * 100, i * 100 + 20);
    b.Add(EventClass::kHostOp, "aten::relu", i * 100 + 30, i * 100 + 40);
  }
  EXPECT_TRUE(ComputeFusionCandidates(b.model).empty());
  EXPECT_EQ(ParseShapes("[[64, 3, 224, 224], [64], []]"),
            (std::vector<std::vector<int64_t>>{{64, 3, 224, 224}, {64}, {}}));
  EXPECT_TRUE(ParseShapes("[[[1, 2]], [3]]").empty());  // a tensor list
}

}  // namespace
}  // namespace opscope::analyze
