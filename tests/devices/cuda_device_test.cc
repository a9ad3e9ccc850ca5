// The CUDA backend on a GPU: skips, saying why, where there is none.
#include <gtest/gtest.h>

#include "analyze/importer.h"
#include "collect/device_activity.h"
#include "devices/backend.h"
#include "devices/registry.h"
#include "opscope/opscope.h"
#include "test_util.h"
#include "workloads/memory_bench.h"
#include "workloads/operators.h"

namespace opscope {
namespace {

using devices::DType;

// The plugin loads in every build that has it, GPU or not: a symbol it needs
// from the program, or a library it links, would fail here.
TEST(CudaBackend, LoadsWhereItWasBuilt) {
#if OPSCOPE_EXPECT_CUDA_BACKEND
  std::string why;
  const devices::BackendApi* api = devices::LoadBackend("cuda", &why);
  ASSERT_NE(api, nullptr) << why;
  EXPECT_STREQ(api->kind, "cuda");
  std::string none;
  const int count = api->count_devices(&none);
  EXPECT_TRUE(count > 0 || !none.empty()) << "no devices and no reason";
#else
  GTEST_SKIP() << "this build has no CUDA backend (no CUDA toolkit found)";
#endif
}

class CudaDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      device_ = devices::OpenDevice("cuda:0");
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kUnsupported) throw;
      GTEST_SKIP() << "no CUDA GPU here: " << e.what();
    }
  }
  std::unique_ptr<devices::Device> device_;
  workloads::RunnerOptions quick_{1, 3, 0, 20, 2000};
  workloads::Progress quiet_{"test", false};
};

TEST_F(CudaDevice, PropertiesAndMemoryAccounting) {
  const auto& p = device_->properties();
  EXPECT_EQ(p.kind, "cuda");
  EXPECT_GT(p.compute_units, 0);
  EXPECT_GT(p.memory_bytes, 0u);
  EXPECT_FALSE(p.peaks.empty());
  const auto before = device_->memory_stats();
  void* a = device_->Allocate(64 << 20);
  EXPECT_EQ(device_->memory_stats().current_bytes, before.current_bytes + (64 << 20));
  device_->Free(a);
  EXPECT_EQ(device_->memory_stats().current_bytes, before.current_bytes);
  EXPECT_GE(device_->memory_stats().peak_bytes, before.current_bytes + (64 << 20));
}

TEST_F(CudaDevice, MatmulEveryTypeAndLibraryIsVerified) {
  std::vector<devices::MatmulSpec> specs;
  for (const DType dtype : {DType::kF32, DType::kTF32, DType::kBF16, DType::kF16}) {
    for (const char* impl : {"cublas", "cublaslt"}) specs.push_back({512, 384, 256, dtype, impl});
  }
  for (const auto& r : workloads::RunMatmul(*device_, specs, quick_, {}, quiet_)) {
    EXPECT_EQ(r.status, workloads::Status::kOk) << r.key << ": " << r.reason;
    EXPECT_GT(r.flops_per_second, 0) << r.key;
  }
}

TEST_F(CudaDevice, Conv2dIsVerified) {
  const devices::Conv2dSpec spec = workloads::ParseConv2d("mb4ic32ih28oc64kh3ph1");
  for (const auto& r : workloads::RunConv2d(*device_, {{"small", spec}}, quick_, {}, quiet_)) {
    EXPECT_EQ(r.status, workloads::Status::kOk) << r.key << ": " << r.reason;
  }
}

TEST_F(CudaDevice, EveryTransferChecksItsData) {
  const auto results = workloads::RunBandwidth(*device_, {"d2d", "h2d", "d2h", "bidir"},
                                               {4096, 4 << 20}, quick_, quiet_);
  ASSERT_EQ(results.size(), 2u * 5 + 3u * 2 * 2);
  for (const auto& r : results) {
    EXPECT_EQ(r.status, workloads::Status::kOk) << r.key << ": " << r.reason;
    EXPECT_GT(r.bytes_per_second, 1e6) << r.key;
  }
}

TEST_F(CudaDevice, TracedKernelsCarryTheirScope) {
  testing::TempDir dir;
  const auto path = dir.path() / "t.json";
  {
    ProfilerOptions options;
    options.activities = {Activity::kCpu, Activity::kCuda};
    options.on_trace_ready = [&](TraceData& trace) { trace.Export(path); };
    Profiler profiler(options);
    profiler.Start();
    const devices::MatmulSpec spec{256, 256, 256, DType::kF32, "cublas"};
    devices::Buffer a(*device_, 256 * 256 * 4), b(*device_, 256 * 256 * 4),
        c(*device_, 256 * 256 * 4);
    auto kernel = device_->CreateMatmul(spec, a.data(), b.data(), c.as<float>());
    {
      OPSCOPE_SCOPE("matmul_scope");
      kernel->Run();
      device_->Synchronize();
    }
    profiler.Stop();
  }
  const analyze::TraceModel model = analyze::ImportTrace(path);
  int64_t scope_id = -1;
  int kernels = 0, linked = 0;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.String(model.name[e]) == "matmul_scope") scope_id = model.external_id[e];
  }
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != analyze::EventClass::kKernel) continue;
    ++kernels;
    linked += scope_id >= 0 && model.external_id[e] == scope_id;
  }
  EXPECT_GE(scope_id, 1);
  EXPECT_GE(kernels, 1);
  EXPECT_EQ(linked, kernels) << "every kernel was launched inside the scope";
}

}  // namespace
}  // namespace opscope
