// The op_device pass: framework operators, their input shapes and modules with
// the device time they caused, on small models whose answers are known by
// construction.
#include "analyze/passes/op_device.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "analyze/links.h"

namespace opscope::analyze {
namespace {

class Trace {
 public:
  // A host event on thread 1 or a device event on stream 7, times in us.
  Trace& Add(EventClass cls, std::string_view name, int64_t begin_us, int64_t end_us,
             int64_t correlation = -1, int64_t external_id = -1, std::string_view dims = "",
             std::string_view module = "") {
    model.Append(
        EventRow{.start_ns = begin_us * 1000,
                 .duration_ns = (end_us - begin_us) * 1000,
                 .name = model.Intern(name),
                 .track = model.TrackFor(IsDevice(cls) ? "0" : "1", IsDevice(cls) ? "7" : "1"),
                 .cls = cls,
                 .correlation = correlation,
                 .external_id = external_id,
                 .input_dims = dims.empty() ? 0 : model.Intern(dims),
                 .module = module.empty() ? 0 : model.Intern(module)});
    return *this;
  }
  OpDeviceTime Run() { return ComputeOpDevice(model, LinkEvents(model)); }
  TraceModel model;
};

std::map<std::string, OpDeviceRow> ByName(const std::vector<OpDeviceRow>& rows) {
  std::map<std::string, OpDeviceRow> out;
  for (const auto& r : rows) out[r.name + (r.shapes.empty() ? "" : " " + r.shapes)] = r;
  return out;
}

TEST(OpDevice, SelfIsWhatAnOperatorLaunchedTotalAddsItsNestedOperators) {
  Trace t;
  t.Add(EventClass::kPython, "nn.Module: Model_0", 0, 300)
      .Add(EventClass::kPython, "nn.Module: Linear_0", 0, 100)
      .Add(EventClass::kHostOp, "aten::linear", 0, 100, -1, -1, "[[8, 16], [32, 16]]")
      .Add(EventClass::kHostOp, "aten::addmm", 10, 90, -1, -1, "[[32], [8, 16], [16, 32]]")
      .Add(EventClass::kRuntime, "cudaLaunchKernel", 20, 30, 1)
      .Add(EventClass::kKernel, "gemm", 40, 90, 1)
      .Add(EventClass::kRuntime, "cudaLaunchKernel", 92, 95, 2)
      .Add(EventClass::kKernel, "bias", 100, 105, 2)
      // A second linear, other shapes, outside the Linear_0 module.
      .Add(EventClass::kHostOp, "aten::linear", 200, 260, -1, -1, "[[4, 16], [32, 16]]")
      .Add(EventClass::kRuntime, "cudaLaunchKernel", 210, 215, 3)
      .Add(EventClass::kKernel, "gemm", 220, 240, 3)
      // A task without a launch record.
      .Add(EventClass::kKernel, "orphan", 400, 410);
  const OpDeviceTime d = t.Run();
  EXPECT_TRUE(d.has_device);
  EXPECT_EQ(d.tasks, 4);
  EXPECT_EQ(d.linked_tasks, 3);
  EXPECT_EQ(d.device_ns, 85000);
  EXPECT_EQ(d.linked_ns, 75000);
  const auto ops = ByName(d.ops);
  ASSERT_EQ(ops.size(), 2u);
  const OpDeviceRow& linear = ops.at("aten::linear");
  EXPECT_EQ(linear.calls, 2);
  EXPECT_EQ(linear.device_self_ns, 25000);   // bias 5 + the second call's gemm 20
  EXPECT_EQ(linear.device_total_ns, 75000);  // + addmm's gemm 50
  EXPECT_EQ(linear.kernels, 2);
  EXPECT_EQ(linear.kernels_total, 3);
  EXPECT_EQ(linear.host_total_ns, 160000);
  EXPECT_EQ(linear.host_self_ns, 17000 + 55000);  // less addmm and the launch calls
  EXPECT_EQ(linear.top_kernels, "gemm x2 0.070 ms; bias x1 0.005 ms");
  const OpDeviceRow& addmm = ops.at("aten::addmm");
  EXPECT_EQ(addmm.device_self_ns, 50000);
  EXPECT_EQ(addmm.device_total_ns, 50000);
  // Ranked by device self time.
  EXPECT_EQ(d.ops[0].name, "aten::addmm");
  // Per input shapes (white space dropped): each linear call is its own row.
  const auto shapes = ByName(d.by_shape);
  EXPECT_EQ(shapes.at("aten::linear [[8,16],[32,16]]").device_total_ns, 55000);
  EXPECT_EQ(shapes.at("aten::linear [[4,16],[32,16]]").device_total_ns, 20000);
  // Modules: paths, totals, and self (not inside a nested module).
  const auto modules = ByName(d.modules);
  ASSERT_EQ(modules.size(), 2u);
  EXPECT_EQ(modules.at("Model_0").device_total_ns, 75000);
  EXPECT_EQ(modules.at("Model_0").device_self_ns, 20000);
  EXPECT_EQ(modules.at("Model_0/Linear_0").device_total_ns, 55000);
  EXPECT_EQ(modules.at("Model_0/Linear_0").device_self_ns, 55000);
  EXPECT_EQ(d.modules[0].name, "Model_0");
}

TEST(OpDevice, TheLaunchCallDecidesOverAnExternalIdOfAnotherOperator) {
  // Older Kineto writes the correlation id into a kernel's External id, where
  // it names an unrelated operator's External id: the launch call decides.
  Trace t;
  t.Add(EventClass::kHostOp, "aten::empty", 0, 5, -1, 14)
      .Add(EventClass::kHostOp, "aten::copy_", 10, 40, -1, 15)
      .Add(EventClass::kRuntime, "cudaMemcpyAsync", 12, 20, 14, 14)
      .Add(EventClass::kMemcpy, "Memcpy HtoD", 30, 90, 14, 14);
  const auto ops = ByName(t.Run().ops);
  EXPECT_EQ(ops.at("aten::copy_").device_self_ns, 60000);
  EXPECT_EQ(ops.at("aten::empty").device_self_ns, 0);
}

TEST(OpDevice, OpscopeModulesCountATaskOnceAndCpuTracesHaveNoDeviceFigures) {
  Trace t;
  t.Add(EventClass::kHostOp, "conv", 0, 50, -1, -1, "", "layer1.0")
      .Add(EventClass::kHostOp, "conv_inner", 5, 45, -1, -1, "", "layer1.0")
      .Add(EventClass::kHostOp, "relu", 60, 70, -1, -1, "", "layer1.1");
  OpDeviceTime d = t.Run();
  EXPECT_FALSE(d.has_device);
  const auto modules = ByName(d.modules);
  ASSERT_EQ(modules.size(), 2u);
  EXPECT_EQ(modules.at("layer1.0").calls, 1);  // the nested operator is inside the outer one
  EXPECT_EQ(modules.at("layer1.0").host_total_ns, 50000);
  t.Add(EventClass::kRuntime, "launch", 10, 12, 9).Add(EventClass::kKernel, "k", 20, 30, 9);
  d = t.Run();
  EXPECT_EQ(ByName(d.modules).at("layer1.0").device_total_ns, 10000);  // once, not per operator
  EXPECT_EQ(ByName(d.ops).at("conv").device_total_ns, 10000);
  EXPECT_EQ(ByName(d.ops).at("conv_inner").device_self_ns, 10000);
}

}  // namespace
}  // namespace opscope::analyze
