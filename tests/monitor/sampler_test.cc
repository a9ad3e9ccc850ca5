#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include "core/clock.h"
#include "monitor/cpu_sampler.h"
#include "monitor/dcmi_sampler.h"
#include "monitor/metric_util.h"
#include "monitor/nvml_sampler.h"
#include "monitor/prometheus.h"
#include "monitor/watch.h"
#include "opscope/opscope.h"
#include "test_util.h"

namespace opscope::monitor {
namespace {

void Write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A fabricated /proc and /sys: every figure is known.
TEST(CpuSampler, ReadsFabricatedProcAndSys) {
  testing::TempDir dir;
  const auto proc = dir.path() / "proc", sys = dir.path() / "sys";
  Write(proc / "stat",
        "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0 0 0 0 0 0\n"
        "cpu1 50 0 50 400 0 0 0 0 0 0\nintr 1\n");
  Write(proc / "meminfo",
        "MemTotal:       1000 kB\nMemFree:         100 kB\nMemAvailable:    400 kB\n");
  Write(proc / "42/status", "Name:\tworker\nState:\tR (running)\nVmRSS:\t    256 kB\n");
  Write(proc / "loadavg", "1.50 0.80 0.30 2/100 4242\n");
  Write(proc / "cpuinfo",
        "processor\t: 0\ncpu MHz\t\t: 2400.5\n\nprocessor\t: 1\ncpu MHz\t\t: 2400.5\n");
  Write(sys / "class/hwmon/hwmon0/name", "k10temp\n");
  Write(sys / "class/hwmon/hwmon0/temp1_input", "55250\n");
  Write(sys / "class/powercap/intel-rapl:0/energy_uj", "1000000\n");
  auto sampler = CreateCpuSampler(42, {proc, sys});
  // 100 more busy and 100 more idle jiffies in total; core 1 entirely busy.
  Write(proc / "stat",
        "cpu  200 0 100 900 0 0 0 0 0 0\ncpu0 50 0 50 500 0 0 0 0 0 0\n"
        "cpu1 150 0 50 400 0 0 0 0 0 0\n");
  Write(sys / "class/powercap/intel-rapl:0/energy_uj", "3000000\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto m = ByKey(sampler->Sample());
  EXPECT_DOUBLE_EQ(*m["cpu cpu_utilization_percent"].value, 50.0);
  EXPECT_DOUBLE_EQ(*m["cpu cpu_utilization_percent{core=0}"].value, 0.0);
  EXPECT_DOUBLE_EQ(*m["cpu cpu_utilization_percent{core=1}"].value, 100.0);
  EXPECT_DOUBLE_EQ(*m["cpu memory_total_bytes"].value, 1024000.0);
  EXPECT_DOUBLE_EQ(*m["cpu memory_used_bytes"].value, 614400.0);
  EXPECT_DOUBLE_EQ(*m["cpu process_resident_bytes"].value, 262144.0);
  EXPECT_EQ(m["cpu process_resident_bytes"].Owner(), "pid=42");  // a label, not the name
  EXPECT_DOUBLE_EQ(*m["cpu cpu_frequency_mhz{core=1}"].value, 2400.5);
  EXPECT_DOUBLE_EQ(*m["cpu cpu_temperature_celsius{sensor=k10temp}"].value, 55.25);
  EXPECT_DOUBLE_EQ(*m["cpu cpu_package_energy_joules"].value, 3.0);
  const double watts = *m["cpu cpu_package_power_watts"].value;
  EXPECT_GT(watts, 2.0 / 0.5);  // 2 J in a little over 100 ms
  EXPECT_LT(watts, 2.0 / 0.1);
  EXPECT_DOUBLE_EQ(*m["cpu load_average_1m"].value, 1.5);
}

TEST(CpuSampler, MissingCountersAreNaWithAReasonNeverZero) {
  testing::TempDir dir;
  const auto proc = dir.path() / "proc", sys = dir.path() / "sys";
  Write(proc / "stat", "cpu  1 0 1 8 0 0 0 0 0 0\n");
  auto sampler = CreateCpuSampler(999999, {proc, sys});
  auto m = ByKey(sampler->Sample());
  const auto& temp = m["cpu cpu_temperature_celsius"];
  EXPECT_FALSE(temp.value.has_value());
  EXPECT_NE(temp.unavailable.find("no hwmon"), std::string::npos);
  EXPECT_FALSE(m["cpu cpu_package_power_watts"].value.has_value());
  EXPECT_NE(m["cpu cpu_package_power_watts"].unavailable.find("RAPL"), std::string::npos);
  EXPECT_FALSE(m["cpu memory_total_bytes"].value.has_value());
  EXPECT_FALSE(m["cpu process_resident_bytes"].value.has_value());
  EXPECT_FALSE(m["cpu cpu_utilization_percent"].value.has_value()) << "no time elapsed";
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

TEST(NvmlSampler, AbsentDriverIsAClearReason) {
  ScopedEnv env("OPSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  std::string why;
  EXPECT_TRUE(OpenNvmlSamplers(why).empty());
  EXPECT_NE(why.find("no NVIDIA driver"), std::string::npos) << why;
}

TEST(NvmlSampler, ReadsAndConvertsThroughTheDriverApi) {
  ScopedEnv env("OPSCOPE_NVML_LIBRARY", OPSCOPE_FAKE_NVML);
  std::string why;
  auto gpus = OpenNvmlSamplers(why);
  ASSERT_EQ(gpus.size(), 2u) << why;
  EXPECT_EQ(gpus[0]->device(), "cuda:0");
  EXPECT_EQ(gpus[0]->description(), "Fake H200 (NVML)");
  auto m = ByKey(gpus[0]->Sample());
  EXPECT_DOUBLE_EQ(*m["cuda:0 gpu_utilization_percent"].value, 87);
  EXPECT_DOUBLE_EQ(*m["cuda:0 gpu_memory_used_bytes"].value, 20.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(*m["cuda:0 gpu_power_watts"].value, 512.345);
  EXPECT_DOUBLE_EQ(*m["cuda:0 gpu_sm_clock_mhz"].value, 1980);
  EXPECT_DOUBLE_EQ(*m["cuda:0 gpu_pcie_rx_bytes_per_second"].value, 2000 * 1024.0);
  EXPECT_DOUBLE_EQ(*m["cuda:0 gpu_utilization_sampled_mean_percent"].value, 60);
  EXPECT_DOUBLE_EQ(*m["cuda:0 gpu_utilization_sampled_max_percent"].value, 90);
  EXPECT_DOUBLE_EQ(*m["cuda:0 gpu_sm_active_percent"].value, 20.5);
  EXPECT_DOUBLE_EQ(*m["cuda:0 gpu_tensor_active_percent"].value, 50.5);
  EXPECT_FALSE(m["cuda:0 gpu_dram_active_percent"].value.has_value());
  // The next sample asks only for newer driver samples: none.
  auto again = ByKey(gpus[0]->Sample());
  EXPECT_FALSE(again["cuda:0 gpu_utilization_sampled_max_percent"].value.has_value());
  auto second = ByKey(gpus[1]->Sample());
  EXPECT_FALSE(second["cuda:1 gpu_power_watts"].value.has_value());
  EXPECT_EQ(second["cuda:1 gpu_power_watts"].unavailable, "not supported by this GPU or driver");
  EXPECT_NE(second["cuda:1 gpu_sm_active_percent"].unavailable.find("Hopper"), std::string::npos);
}

TEST(DcmiSampler, AbsentDriverIsAClearReason) {
  ScopedEnv env("OPSCOPE_DCMI_LIBRARY", "/nonexistent/libdcmi.so");
  ScopedEnv acl("OPSCOPE_ACL_LIBRARY", "/nonexistent/libascendcl.so");
  std::string why;
  EXPECT_TRUE(OpenDcmiSamplers(why).empty());
  EXPECT_NE(why.find("no Ascend driver"), std::string::npos) << why;
  EXPECT_NE(why.find("nor AscendCL"), std::string::npos) << why;
}

// Without DCMI, AscendCL's utilization query: -1 (no such unit, the reserved
// memory figure) is n/a with the reason, never 0 or -1.
TEST(DcmiSampler, WithoutDcmiAscendClGivesUtilization) {
  ScopedEnv env("OPSCOPE_DCMI_LIBRARY", "/nonexistent/libdcmi.so");
  ScopedEnv acl("OPSCOPE_ACL_LIBRARY", OPSCOPE_FAKE_ACL);
  std::string why;
  auto npus = OpenDcmiSamplers(why);
  ASSERT_EQ(npus.size(), 2u) << why;
  EXPECT_TRUE(why.empty()) << why;
  EXPECT_EQ(npus[1]->device(), "npu:1");
  EXPECT_NE(npus[0]->description().find("Ascend910B3"), std::string::npos);
  auto m = ByKey(npus[0]->Sample());
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_cube_utilization_percent"].value, 64);
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_vector_utilization_percent"].value, 21);
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_aicpu_utilization_percent"].value, 1);
  EXPECT_FALSE(m["npu:0 npu_memory_utilization_percent"].value.has_value());
  EXPECT_NE(m["npu:0 npu_memory_utilization_percent"].unavailable.find("-1"), std::string::npos);
  auto second = ByKey(npus[1]->Sample());
  EXPECT_DOUBLE_EQ(*second["npu:1 npu_cube_utilization_percent"].value, 3);
  EXPECT_FALSE(second["npu:1 npu_vector_utilization_percent"].value.has_value());
}

// The stand-in (fake_dcmi.c): card 3 with two chips; figures in DCMI's units
// (MB, 0.1 W) come out in bytes and watts; what a chip or this driver does
// not give is n/a with the function and the reason, never 0.
TEST(DcmiSampler, ReadsAndConvertsThroughTheDriverApi) {
  ScopedEnv env("OPSCOPE_DCMI_LIBRARY", OPSCOPE_FAKE_DCMI);
  std::string why;
  auto npus = OpenDcmiSamplers(why);
  ASSERT_EQ(npus.size(), 2u) << why;
  EXPECT_EQ(npus[0]->device(), "npu:0");
  EXPECT_EQ(npus[1]->device(), "npu:1");
  EXPECT_EQ(npus[0]->description(), "Ascend 910B3 (DCMI card 3 chip 0)");
  const std::vector<Metric> sample = npus[0]->Sample();
  auto m = ByKey(sample);
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_aicore_utilization_percent"].value, 87);
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_vector_core_utilization_percent"].value, 40);
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_aicpu_utilization_percent"].value, 2);
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_ctrlcpu_utilization_percent"].value, 11);
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_memory_utilization_percent"].value, 30);
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_memory_bandwidth_utilization_percent"].value, 7);
  EXPECT_FALSE(m["npu:0 npu_hbm_bandwidth_utilization_percent"].value.has_value());
  EXPECT_NE(m["npu:0 npu_utilization_percent"].unavailable.find("returned -8005"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_hbm_used_bytes"].value, 3072.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_hbm_total_bytes"].value, 65536.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_hbm_temperature_celsius"].value, 41);
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_temperature_celsius"].value, 52);
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_power_watts"].value, 310.5);
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_health"].value, 1);
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_ecc_single_bit_errors{memory=hbm}"].value, 3);
  EXPECT_DOUBLE_EQ(*m["npu:0 npu_ecc_double_bit_errors{memory=hbm}"].value, 1);
  EXPECT_FALSE(m["npu:0 npu_aicore_clock_mhz"].value.has_value());
  EXPECT_NE(m["npu:0 npu_aicore_clock_mhz"].unavailable.find("dcmi_get_device_frequency"),
            std::string::npos);
  // The card and chip are labels, not part of what is measured.
  const Metric& aicore = m["npu:0 npu_aicore_utilization_percent"];
  EXPECT_EQ(aicore.labels, (std::vector<std::pair<std::string, std::string>>{
                               {"device", "npu:0"}, {"card", "3"}, {"chip", "0"}}));
  EXPECT_NE(ToPrometheusText(sample, 0.001)
                .find("opscope_npu_aicore_utilization_percent{device=\"npu:0\",card=\"3\","
                      "chip=\"0\"} 87\n"),
            std::string::npos);
  auto second = ByKey(npus[1]->Sample());
  EXPECT_DOUBLE_EQ(*second["npu:1 npu_aicore_utilization_percent"].value, 5);
  EXPECT_DOUBLE_EQ(*second["npu:1 npu_power_watts"].value, 90.2);
  EXPECT_FALSE(second["npu:1 npu_hbm_used_bytes"].value.has_value());
  EXPECT_NE(second["npu:1 npu_hbm_used_bytes"].unavailable.find("dcmi_get_device_hbm_info"),
            std::string::npos);
  // Chip 1 answers for its DDR only, with ECC detection off: n/a, saying so.
  EXPECT_FALSE(second["npu:1 npu_ecc_double_bit_errors{memory=ddr}"].value.has_value());
  EXPECT_EQ(second["npu:1 npu_ecc_double_bit_errors{memory=ddr}"].unavailable,
            "ECC detection is off on this chip");
  EXPECT_FALSE(second["npu:1 npu_health"].value.has_value());
  EXPECT_NE(second["npu:1 npu_health"].unavailable.find("does not exist"), std::string::npos);
}

// "all" includes the NPUs; "npu:1" only that chip; "npu" the first.
TEST(DcmiSampler, ChosenByDeviceName) {
  ScopedEnv env("OPSCOPE_DCMI_LIBRARY", OPSCOPE_FAKE_DCMI);
  ScopedEnv acl("OPSCOPE_ACL_LIBRARY", "/nonexistent/libascendcl.so");
  ScopedEnv no_gpu("OPSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  std::vector<std::string> notes;
  auto all = OpenSamplers("all", 0, notes);
  std::vector<std::string> names;
  for (const auto& s : all) names.push_back(s->device());
  EXPECT_EQ(names, (std::vector<std::string>{"cpu", "npu:0", "npu:1"}));
  auto one = OpenSamplers("npu:1", 0, notes);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0]->device(), "npu:1");
  auto first = OpenSamplers("npu", 0, notes);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0]->device(), "npu:0");
}

TEST(Prometheus, ExpositionGroupsEscapesAndNeverFakesZero) {
  std::vector<Metric> metrics(4);
  metrics[0] = {"cpu_utilization_percent",
                "CPU \\ busy\nshare",
                "%",
                MetricKind::kGauge,
                {{"device", "cpu"}},
                12.5,
                "",
                ""};
  metrics[1] = {"cpu_package_energy_joules", "Energy", "J", MetricKind::kCounter,
                {{"device", "cpu"}},         3.0,      "",  ""};
  metrics[2] = {"cpu_utilization_percent",          "x", "%", MetricKind::kGauge,
                {{"device", "cpu"}, {"core", "0"}}, 1.0, "",  ""};
  metrics[3] = {
      "cpu_temperature_celsius", "t", "C", MetricKind::kGauge, {{"device", "cpu"}}, std::nullopt,
      "no \"sensor\"\nhere",     ""};
  const std::string text = ToPrometheusText(metrics, 0.001);
  EXPECT_NE(text.find("# HELP opscope_cpu_utilization_percent CPU \\\\ busy\\nshare\n"
                      "# TYPE opscope_cpu_utilization_percent gauge\n"
                      "opscope_cpu_utilization_percent{device=\"cpu\"} 12.5\n"
                      "opscope_cpu_utilization_percent{device=\"cpu\",core=\"0\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE opscope_cpu_package_energy_joules_total counter\n"),
            std::string::npos);
  EXPECT_EQ(text.find("opscope_cpu_temperature_celsius{"), std::string::npos);
  EXPECT_NE(
      text.find("opscope_metric_unavailable{device=\"cpu\",metric=\"cpu_temperature_celsius\","
                "reason=\"no \\\"sensor\\\"\\nhere\"} 1\n"),
      std::string::npos)
      << text;
}

}  // namespace
}  // namespace opscope::monitor
