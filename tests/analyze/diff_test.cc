// Comparing two traces.
#include "analyze/diff.h"

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

// Steps of the given durations (us), each with four kernels filling half of it;
// a step under 500 us is one cut off by the end of the trace: one kernel.
Builder StepTrace(const std::vector<int64_t>& durations_us) {
  Builder b;
  int64_t t = 0;
  for (size_t i = 0; i < durations_us.size(); ++i) {
    const int64_t d = durations_us[i];
    b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(i), t, t + d);
    const int kernels = d < 500 ? 1 : 4;
    for (int k = 0; k < kernels; ++k) {
      b.Add(EventClass::kKernel, "gemm", t + k * d / 8, t + (k + 1) * d / 8);
    }
    t += d;
  }
  return b;
}

TEST(Diff, CompleteStepsWithTheirNoise) {
  // A warm-up first step and a last step cut off by the end of the trace on
  // each side: left out. The rest: 1000 us against 1200 us, a little noise.
  const Builder before = StepTrace({3000, 1000, 1010, 990, 1005, 995, 1000, 100});
  const Builder after = StepTrace({3000, 1200, 1210, 1190, 1205, 1195, 1200, 50});
  const TraceDiff d = DiffTraces(before.model, after.model);
  EXPECT_EQ(d.basis, "median complete step");
  EXPECT_EQ(d.before_all_steps, 8);
  EXPECT_EQ(d.before_steps, 6);
  EXPECT_EQ(d.after_steps, 6);
  EXPECT_EQ(d.before_ns, 1000000);
  EXPECT_EQ(d.after_ns, 1200000);
  EXPECT_DOUBLE_EQ(d.change_pct, 20.0);
  ASSERT_TRUE(d.has_interval);
  // Every after-step is slower than every before-step: the interval is far
  // from zero and the rank test's p is small (n1 = n2 = 6, U = 0: exactly 2
  // of the C(12, 6) = 924 splits are as extreme, p = 0.00216).
  EXPECT_GT(d.ci_low_pct, 15);
  EXPECT_LT(d.ci_high_pct, 25);
  EXPECT_DOUBLE_EQ(d.p_value, 2.0 / 924);
  EXPECT_EQ(d.verdict, "slower");
  EXPECT_TRUE(Regressed(d, 10));
  EXPECT_FALSE(Regressed(d, 25));  // below the threshold
  std::map<std::string, std::string> change;
  for (const auto& o : d.operators) change[o.name] = o.change;
  EXPECT_EQ(change["gemm"], "slower");
}

TEST(Diff, NoiseIsNotARegression) {
  // The same spread of step times, in another order: +1% on the median, an
  // interval around zero.
  const Builder before = StepTrace({1000, 1100, 900, 1050, 950, 1000, 1080, 920});
  const Builder after = StepTrace({1100, 900, 1050, 950, 1010, 1080, 920, 1000});
  const TraceDiff d = DiffTraces(before.model, after.model);
  ASSERT_TRUE(d.has_interval);
  EXPECT_LT(d.ci_low_pct, 0);
  EXPECT_GT(d.ci_high_pct, 0);
  EXPECT_EQ(d.verdict, "no change beyond noise");
  EXPECT_FALSE(Regressed(d, 0.5));
}

TEST(Diff, WithoutStepsTheSpanDecidesAndTheNoiseIsUnknown) {
  Builder x, y;
  x.Add(EventClass::kKernel, "a", 0, 100);
  y.Add(EventClass::kKernel, "a", 50, 200);
  const TraceDiff d = DiffTraces(x.model, y.model);
  EXPECT_EQ(d.basis, "trace span");
  EXPECT_DOUBLE_EQ(d.change_pct, 50.0);
  EXPECT_FALSE(d.has_interval);
  EXPECT_NE(d.verdict.find("noise unknown"), std::string::npos);
  EXPECT_TRUE(Regressed(d, 10));
  EXPECT_DOUBLE_EQ(MannWhitneyP({5, 5, 5}, {5, 5, 5}), 1.0);
}

TEST(Diff, MannWhitneyIsExactForSmallSamples) {
  // The exact distribution's tables (one-sided P(U <= u); two-sided twice):
  // m = n = 3, U = 0: 0.050, so p = 0.100 (the normal approximation says 0.081).
  EXPECT_DOUBLE_EQ(MannWhitneyP({1, 2, 3}, {4, 5, 6}), 0.1);
  EXPECT_DOUBLE_EQ(MannWhitneyP({4, 5, 6}, {1, 2, 3}), 0.1);
  // m = n = 5: P(U <= 2) = 4/252 = 0.016 in the tables; {1,2,3,4,7} vs
  // {5,6,8,9,10} has U = 2 (7 beats 5 and 6).
  EXPECT_DOUBLE_EQ(MannWhitneyP({1, 2, 3, 4, 7}, {5, 6, 8, 9, 10}), 8.0 / 252);
  // m = 3, n = 4, U = 0: P = 1/35 one-sided.
  EXPECT_DOUBLE_EQ(MannWhitneyP({1, 2, 3}, {4, 5, 6, 7}), 2.0 / 35);
  // Ties: mid-ranks, every split counted. {1,1,2} vs {2,3,3}: rank sum 1.5 +
  // 1.5 + 3.5 = 6.5 of mean 10.5; 4 of the 20 splits lie 4 or more from the
  // mean (both 1s with either 2, and their mirrors).
  EXPECT_DOUBLE_EQ(MannWhitneyP({1, 1, 2}, {2, 3, 3}), 4.0 / 20);
  // Past 20 values the approximation: n1 = n2 = 11, U = 0: z = (60.5 - 0.5) /
  // sqrt(11 * 11 * 23 / 12) = 3.940, p = erfc(z / sqrt 2) = 8.15e-5.
  std::vector<int64_t> low, high;
  for (int i = 0; i < 11; ++i) low.push_back(i), high.push_back(100 + i);
  EXPECT_NEAR(MannWhitneyP(low, high), 8.15e-5, 0.01e-5);
}

}  // namespace
}  // namespace opscope::analyze

namespace opscope::analyze {
namespace {

// One operator launching one kernel of `kernel_us`, on a named device.
Builder OneOperator(std::string_view device, std::string_view kernel, int64_t kernel_us) {
  Builder b;
  b.Add(EventClass::kHostOp, "aten::mm", 0, 20);
  b.Correlate(1).Add(EventClass::kRuntime, "launch", 2, 4);
  b.Add(EventClass::kKernel, kernel, 10, 10 + kernel_us);
  b.model.device_name = std::string(device);
  return b;
}

TEST(Diff, TwoDevicesAreSaidAndOperatorsCompareByTheirDeviceTime) {
  const TraceDiff d = DiffTraces(OneOperator("NVIDIA H100", "sm90_gemm", 40).model,
                                 OneOperator("AMD Instinct MI300X", "Cijk_gemm", 30).model);
  EXPECT_TRUE(d.devices_differ);
  EXPECT_NE(d.devices_note.find("'NVIDIA H100' before, 'AMD Instinct MI300X' after"),
            std::string::npos)
      << d.devices_note;
  // The kernels differ by name; the operator that launched them is matched.
  ASSERT_EQ(d.framework_ops.size(), 1u);
  const FrameworkOpDelta& mm = d.framework_ops[0];
  EXPECT_EQ(mm.name, "aten::mm");
  EXPECT_EQ(mm.before_device_ns, 40000);
  EXPECT_EQ(mm.after_device_ns, 30000);
  EXPECT_EQ(mm.change, "faster");
  EXPECT_EQ(mm.before_kernels, "sm90_gemm x1 0.040 ms");
  EXPECT_EQ(mm.after_kernels, "Cijk_gemm x1 0.030 ms");
  const auto compute = std::find_if(d.by_class.begin(), d.by_class.end(),
                                    [](const ClassDelta& c) { return c.cls == "compute"; });
  ASSERT_NE(compute, d.by_class.end());
  EXPECT_EQ(compute->before_ns, 40000);
  EXPECT_EQ(compute->after_ns, 30000);
  // The same device (by name, case aside): no note.
  const TraceDiff same = DiffTraces(OneOperator("NVIDIA H100", "k", 40).model,
                                    OneOperator("nvidia h100", "k", 50).model);
  EXPECT_FALSE(same.devices_differ);
  EXPECT_TRUE(same.devices_note.empty());
  EXPECT_EQ(same.framework_ops[0].change, "slower");
}

// Two runs of a program profiled with its own scopes only (opscope's APIs):
// the scopes are the work, so the steps are complete and the diff has a
// verdict; the time by class is the CPU's, nested scopes counted once.
// One thing under two names compares as one: a Python frame whose line
// moved (another version of its file) and a runtime call in the other
// vendor's spelling. A function with two frames on one side is not guessed.
TEST(Diff, MovedFramesAndVendorSpellingsCompareAsOne) {
  Builder before, after;
  before.Add(EventClass::kPython, "torch/nn/modules/module.py(1743): _call_impl", 0, 100);
  before.Add(EventClass::kRuntime, "cudaDeviceSynchronize", 200, 300);
  before.Add(EventClass::kPython, "model.py(10): forward", 400, 500);
  after.Add(EventClass::kPython, "torch/nn/modules/module.py(1755): _call_impl", 0, 80);
  after.Add(EventClass::kRuntime, "hipDeviceSynchronize", 200, 260);
  after.Add(EventClass::kPython, "model.py(12): forward", 400, 450);
  after.Add(EventClass::kPython, "model.py(40): forward", 500, 550);
  for (Builder* b : {&before, &after}) b->Add(EventClass::kKernel, "gemm", 0, 600);
  const TraceDiff d = DiffTraces(before.model, after.model);
  const auto row = [&](const std::string& name) {
    const auto it = std::find_if(d.operators.begin(), d.operators.end(),
                                 [&](const OpDelta& o) { return o.name == name; });
    return it == d.operators.end() ? OpDelta{.name = "", .cls = EventClass::kOther} : *it;
  };
  const OpDelta moved = row("torch/nn/modules/module.py(1743 -> 1755): _call_impl");
  EXPECT_EQ(moved.change, "faster");
  EXPECT_EQ(moved.before_ns, 100'000);
  EXPECT_EQ(moved.after_ns, 80'000);
  const OpDelta sync = row("cudaDeviceSynchronize -> hipDeviceSynchronize");
  EXPECT_EQ(sync.change, "faster");
  EXPECT_EQ(sync.after_count, 1);
  EXPECT_EQ(row("model.py(10): forward").change, "removed");
  EXPECT_EQ(row("model.py(12): forward").change, "added");
}

TEST(Diff, ScopeOnlyTracesCompareOnTheCpu) {
  const auto run = [](int64_t step_us) {
    Builder b;
    for (int i = 0; i < 6; ++i) {
      const int64_t t = i * step_us;
      b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(i), t, t + step_us)
          .Add(EventClass::kAnnotation, "forward", t + 1, t + step_us - 1)
          .Add(EventClass::kAnnotation, "layer", t + 2, t + step_us / 2);  // nested
    }
    return b;
  };
  const TraceDiff d = DiffTraces(run(1000).model, run(1500).model);
  EXPECT_EQ(d.basis, "median complete step");
  EXPECT_EQ(d.before_steps, 6);
  EXPECT_EQ(d.after_steps, 6);
  EXPECT_EQ(d.verdict, "slower");
  EXPECT_TRUE(d.on_cpu);
  const auto compute = std::find_if(d.by_class.begin(), d.by_class.end(),
                                    [](const ClassDelta& c) { return c.cls == "compute"; });
  ASSERT_NE(compute, d.by_class.end());
  EXPECT_EQ(compute->before_ns, 6 * 998000);  // each step's "forward", "layer" inside it
  EXPECT_EQ(compute->after_ns, 6 * 1498000);
}

}  // namespace
}  // namespace opscope::analyze
