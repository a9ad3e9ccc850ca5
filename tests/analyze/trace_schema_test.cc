// One trace schema: every argument key the writer emits is read back by the
// importer into the model, under the same name (core/trace_schema.h).
#include "core/trace_schema.h"

#include <gtest/gtest.h>

#include "analyze/importer.h"
#include "analyze/passes/roofline.h"
#include "collect/chrome_trace_writer.h"

namespace opscope::analyze {
namespace {

namespace schema = core::trace_schema;

TraceModel WriteAndRead(const collect::EventArgs& args, std::string_view category = "cpu_op") {
  core::StringOutput out;
  collect::ChromeTraceWriter writer(out);
  writer.Begin();
  writer.Complete(1, 2, "conv1", category, 1000, 2500, args);
  writer.End(collect::TraceMetadata{.host = "h", .pid = 1});
  const auto source = Source::FromBytes("round-trip.json", out.str());
  return ImportTrace(*source);
}

TEST(TraceSchema, EveryKeyTheWriterEmitsIsReadBack) {
  const std::string extra = "\"" + std::string(schema::kCorrelation) + "\":77,\"" +
                            std::string(schema::kInputDims) + "\":[[2,3],[3,4]],\"" +
                            std::string(schema::kInputType) + "\":[\"float\",\"float\"],\"" +
                            std::string(schema::kConcreteInputs) + "\":[\"\",\"\"],\"" +
                            std::string(schema::kTaskType) + "\":\"AI_CORE\"";
  const collect::EventArgs args{.shapes = "[[8,64,56,56]]",
                                .dtype = "bf16",
                                .flops = 123456789,
                                .bytes = 4096,
                                .layout = "nChw16c",
                                .module = "layer1.0.conv1",
                                .external_id = 42,
                                .extra = extra};
  const TraceModel model = WriteAndRead(args);
  ASSERT_EQ(model.size(), 1u);
  EXPECT_TRUE(model.ColumnsAligned());
  EXPECT_EQ(model.format, "opscope");
  EXPECT_EQ(model.String(model.shapes[0]), "[[8,64,56,56]]");
  EXPECT_EQ(model.String(model.dtype[0]), "bf16");
  EXPECT_EQ(model.flops[0], 123456789);
  EXPECT_EQ(model.bytes[0], 4096);
  EXPECT_EQ(model.String(model.layout[0]), "nChw16c");
  EXPECT_EQ(model.String(model.module[0]), "layer1.0.conv1");
  EXPECT_EQ(model.external_id[0], 42);
  EXPECT_EQ(model.correlation[0], 77);
  EXPECT_EQ(model.String(model.input_dims[0]), "[[2,3],[3,4]]");
  EXPECT_EQ(model.String(model.input_type[0]), "[\"float\",\"float\"]");
  EXPECT_EQ(model.String(model.concrete_inputs[0]), "[\"\",\"\"]");
  EXPECT_EQ(model.String(model.kind[0]), "AI_CORE");
  EXPECT_EQ(model.start_ns[0], 1000);
  EXPECT_EQ(model.duration_ns[0], 2500);
}

// The test above must cover the whole schema: a key added to kAllArgs and not
// to it fails here.
TEST(TraceSchema, TheRoundTripCoversEveryDeclaredKey) {
  const std::set<std::string_view> covered = {
      schema::kShapes,    schema::kDtype,     schema::kFlops,          schema::kBytes,
      schema::kLayout,    schema::kModule,    schema::kExternalId,     schema::kCorrelation,
      schema::kInputDims, schema::kInputType, schema::kConcreteInputs, schema::kTaskType};
  for (const std::string_view key : schema::kAllArgs) EXPECT_TRUE(covered.count(key)) << key;
}

// A bf16 scope, re-imported, is rated as bf16, not against the fp32 peak.
TEST(TraceSchema, TheStatedDtypeChoosesTheCeiling) {
  const TraceModel model = WriteAndRead({.dtype = "bf16", .flops = 2000000000, .bytes = 1000000});
  RooflineCeilings ceilings{"cpu", "test", {{"fp32", 1e12}, {"bf16", 4e12}}, 1e11};
  const auto rows = ComputeRoofline(model, &ceilings);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].dtype, "bf16");
  // 2 GFLOP in 2.5 us = 800 TFLOP/s: far above either peak; what matters here is
  // that the bf16 peak (4e12) is the one the percentage is taken against.
  EXPECT_NEAR(rows[0].pct_of_attainable, 100.0 * 8e14 / 4e12, 1e-6);
}

TEST(CanonicalDtype, SpellingsOfOneTypeAgree) {
  for (const char* t : {"fp32", "f32", "float32", "float"}) EXPECT_EQ(CanonicalDtype(t), "fp32");
  for (const char* t : {"bf16", "bfloat16", "c10::BFloat16"}) EXPECT_EQ(CanonicalDtype(t), "bf16");
  for (const char* t : {"fp16", "half", "c10::Half"}) EXPECT_EQ(CanonicalDtype(t), "fp16");
  EXPECT_EQ(CanonicalDtype("tf32"), "tf32");
  EXPECT_EQ(CanonicalDtype("complex64"), "");
}

}  // namespace
}  // namespace opscope::analyze
