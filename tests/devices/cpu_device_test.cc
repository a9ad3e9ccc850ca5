#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/ceilings.h"
#include "core/clock_cache.h"
#include "devices/cpu/cpu_info.h"
#include "devices/registry.h"
#include "opscope/opscope.h"

namespace opscope::devices {
namespace {

TEST(CpuInfo, ModelsKnownCores) {
  const std::vector<std::string> zen5_flags = {"fma", "avx2", "avx512f", "avx512_bf16"};
  const auto zen5 = cpu::ModelCore("AuthenticAMD", 0x1A, 0x02, zen5_flags);
  EXPECT_EQ(zen5.microarchitecture, "Zen 5");
  EXPECT_EQ(zen5.fma_width_bits, 512);
  const auto zen5_mobile = cpu::ModelCore("AuthenticAMD", 0x1A, 0x24, zen5_flags);
  EXPECT_EQ(zen5_mobile.fma_width_bits, 256);
  const auto zen4 = cpu::ModelCore("AuthenticAMD", 0x19, 0x11, zen5_flags);
  EXPECT_EQ(zen4.microarchitecture, "Zen 4");
  EXPECT_EQ(zen4.fma_width_bits, 256);
  const auto skx = cpu::ModelCore("GenuineIntel", 6, 0x55, {"fma", "avx2", "avx512f"});
  EXPECT_EQ(skx.fma_width_bits, 512);
  const auto old = cpu::ModelCore("GenuineIntel", 6, 0x2A, {"avx"});
  EXPECT_FALSE(old.has_fma);
}

// Register values as the Intel SDM (CPUID leaf 4) lays them out: EAX type in
// bits 4:0, level in 7:5, sharers - 1 in 25:14; EBX line - 1 in 11:0,
// partitions - 1 in 21:12, ways - 1 in 31:22; ECX sets - 1.
TEST(CpuInfo, CpuidCacheLeavesAreDecoded) {
  const auto eax = [](uint32_t type, uint32_t level, uint32_t sharers) {
    return type | level << 5 | (sharers - 1) << 14;
  };
  const auto ebx = [](uint32_t line, uint32_t partitions, uint32_t ways) {
    return (line - 1) | (partitions - 1) << 12 | (ways - 1) << 22;
  };
  CacheLevel cache;
  // A 48 KiB, 12-way L1 data cache of 64 sets of 64-byte lines, per core.
  ASSERT_TRUE(cpu::CacheFromCpuid(eax(1, 1, 2), ebx(64, 1, 12), 63, cache));
  EXPECT_EQ(cache.name, "L1d");
  EXPECT_EQ(cache.bytes, 12u * 64 * 64);
  EXPECT_EQ(cache.shared_by, 2);
  // A 2 MiB, 16-way unified L2 of 2,048 sets.
  ASSERT_TRUE(cpu::CacheFromCpuid(eax(3, 2, 2), ebx(64, 1, 16), 2047, cache));
  EXPECT_EQ(cache.name, "L2");
  EXPECT_EQ(cache.bytes, uint64_t{2} << 20);
  // Partitions multiply the size too.
  ASSERT_TRUE(cpu::CacheFromCpuid(eax(3, 3, 16), ebx(64, 2, 16), 8191, cache));
  EXPECT_EQ(cache.bytes, uint64_t{16} * 2 * 64 * 8192);
  EXPECT_FALSE(cpu::CacheFromCpuid(eax(2, 1, 2), ebx(64, 1, 8), 63, cache)) << "instruction";
  EXPECT_FALSE(cpu::CacheFromCpuid(0, 0, 0, cache)) << "the end of the list";
}

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Where /sys lists the caches (the kernel reads them from the same leaves),
// CPUID gives the same levels and sizes.
TEST(CpuInfo, CpuidCachesAgreeWithSysfs) {
  std::map<std::string, uint64_t> sysfs;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string type = ReadLine(dir + "type");
    if (type.empty()) break;
    if (type == "Instruction") continue;
    const std::string size = ReadLine(dir + "size");  // "48K"
    sysfs["L" + ReadLine(dir + "level") + (type == "Data" ? "d" : "")] =
        std::stoull(size) << (size.back() == 'K'   ? 10
                              : size.back() == 'M' ? 20
                                                   : 0);
  }
  if (sysfs.empty()) GTEST_SKIP() << "this machine's /sys lists no caches to compare with";
  std::string source;
  const std::vector<CacheLevel> cpuid = cpu::CachesFromCpuid(source);
  if (cpuid.empty()) GTEST_SKIP() << "this processor lists no caches through CPUID";
  EXPECT_FALSE(source.empty());
  std::map<std::string, uint64_t> from_cpuid;
  for (const CacheLevel& c : cpuid) from_cpuid[c.name] = c.bytes;
  EXPECT_EQ(from_cpuid, sysfs) << "from " << source;
}

TEST(CpuInfo, PeaksFollowTheFormula) {
  const auto zen5 =
      cpu::ModelCore("AuthenticAMD", 0x1A, 0x02, {"fma", "avx2", "avx512f", "avx512_bf16"});
  const auto peaks = cpu::TheoreticalPeaks(zen5, 2, 2.6);
  ASSERT_EQ(peaks.size(), 2u);
  // 2 cores x 2.6 GHz x 2 pipes x 16 lanes x 2 FLOP
  EXPECT_DOUBLE_EQ(peaks[0].flops_per_second, 2 * 2.6e9 * 2 * 16 * 2);
  EXPECT_NE(peaks[0].formula.find("2 FMA pipes x 16 fp32 lanes"), std::string::npos);
  EXPECT_DOUBLE_EQ(peaks[1].flops_per_second, 2 * peaks[0].flops_per_second);
  const auto no_bf16 = cpu::ModelCore("AuthenticAMD", 0x19, 0x01, {"fma", "avx2"});
  const auto p = cpu::TheoreticalPeaks(no_bf16, 4, 3.0);
  EXPECT_DOUBLE_EQ(p[1].flops_per_second, p[0].flops_per_second);
}

class CpuDeviceTest : public ::testing::Test {
 protected:
  std::unique_ptr<Device> device_ = OpenDevice("cpu");
};

TEST_F(CpuDeviceTest, PropertiesAreSane) {
  const auto& p = device_->properties();
  EXPECT_EQ(p.id, "cpu");
  EXPECT_GE(p.compute_units, 1);
  EXPECT_GT(p.clock_ghz, 0.1);
  EXPECT_LT(p.clock_ghz, 10);
  EXPECT_GT(p.memory_bytes, 0u);
  ASSERT_FALSE(p.peaks.empty());
  EXPECT_GT(p.peaks[0].flops_per_second, 1e9);
}

TEST_F(CpuDeviceTest, AllocationIsAccounted) {
  const MemoryStats before = device_->memory_stats();
  void* a = device_->Allocate(1 << 20);
  void* b = device_->Allocate(3 << 20);
  EXPECT_EQ(device_->memory_stats().current_bytes, before.current_bytes + (4 << 20));
  device_->Free(a);
  EXPECT_EQ(device_->memory_stats().current_bytes, before.current_bytes + (3 << 20));
  EXPECT_EQ(device_->memory_stats().peak_bytes, before.current_bytes + (4 << 20));
  device_->Free(b);
  int not_ours = 0;
  EXPECT_THROW(device_->Free(&not_ours), Error);
}

TEST_F(CpuDeviceTest, AbsurdAllocationSaysHowMuch) {
  try {
    device_->Allocate(size_t{1} << 50);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted);
    EXPECT_NE(std::string(e.what()).find("1048576.0 GiB"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("available"), std::string::npos);
  }
}

TEST_F(CpuDeviceTest, CopiesByKind) {
  std::vector<char> src(5 << 20), dst(5 << 20);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 7);
  device_->Copy(dst.data(), src.data(), src.size(), CopyKind::kDeviceToDevice);
  device_->Synchronize();
  EXPECT_EQ(std::memcmp(src.data(), dst.data(), src.size()), 0);
  const Applicability h2d = device_->CopyApplicability(CopyKind::kHostToDevice);
  EXPECT_EQ(h2d.reason, NotApplicableReason::kNoSuchCopy);
  EXPECT_FALSE(h2d.text.empty());
  EXPECT_TRUE(device_->CopyApplicability(CopyKind::kDeviceToDevice).applicable());
  EXPECT_EQ(device_->MatmulApplicability({64, 64, 64, DType::kF32, "nope"}).reason,
            NotApplicableReason::kUnknownImplementation);
  EXPECT_EQ(device_->MatmulApplicability({64, 64, 64, DType::kF16, "onednn"}).reason,
            NotApplicableReason::kUnsupportedDtype);
  // The capabilities the CLI and workloads ask for instead of the device's kind.
  const DeviceCapabilities& c = device_->properties().capabilities;
  EXPECT_EQ(c.network_layout, Layout::kBlocked);
  EXPECT_TRUE(c.has_networks);
  EXPECT_FALSE(c.peak_loop_dtypes.empty());
  EXPECT_FALSE(c.copy_method.empty());
  try {
    device_->Copy(dst.data(), src.data(), 16, CopyKind::kHostToDevice);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("host memory is device memory"), std::string::npos);
  }
}

TEST(Registry, UnknownDevicesAreUnsupported) {
  EXPECT_EQ(DefaultDevice(), "cpu");
  try {
    OpenDevice("cuda:0");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  }
  EXPECT_THROW(OpenDevice("cpu", DeviceOptions{-3}), Error);
}

}  // namespace
}  // namespace opscope::devices

namespace opscope::devices {
namespace {

// A folder for the clock cache that the test owns.
class ClockCacheDir {
 public:
  ClockCacheDir() {
    char pattern[] = "/tmp/opscope-clock-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    ::setenv("OPSCOPE_CACHE_DIR", dir_.c_str(), 1);
  }
  ~ClockCacheDir() {
    ::unsetenv("OPSCOPE_CACHE_DIR");
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path file() const { return std::filesystem::path(dir_) / "clock-2.json"; }

 private:
  std::string dir_;
};

std::function<double()> Rounds(std::vector<double> values, int& calls) {
  return [values, &calls] { return values[std::min<size_t>(calls++, values.size() - 1)]; };
}

// Issue 18: three calls of `info` gave 430.0, 449.9 and 436.9 GFLOP/s.
TEST(MachineClock, MeasuredUntilTwoRoundsAgreeThenReused) {
  ClockCacheDir cache;
  int calls = 0;
  const cpu::MeasuredClock first = cpu::MachineClock(2, Rounds({2.0, 2.5, 2.51, 9.0}, calls));
  EXPECT_EQ(calls, 3) << "2.5 and 2.51 agree within 0.5%";
  EXPECT_DOUBLE_EQ(first.ghz, 2.51);
  EXPECT_NE(first.how.find("3 rounds"), std::string::npos) << first.how;
  EXPECT_TRUE(std::filesystem::exists(cache.file()));
  const cpu::MeasuredClock again = cpu::MachineClock(2, Rounds({5.0}, calls));
  EXPECT_EQ(calls, 3) << "the cached clock is reused, nothing is measured";
  EXPECT_DOUBLE_EQ(again.ghz, first.ghz);
  EXPECT_NE(again.how.find("reused from"), std::string::npos) << again.how;
  // Another thread count is another measurement.
  const cpu::MeasuredClock one = cpu::MachineClock(1, Rounds({3.0, 3.0}, calls));
  EXPECT_DOUBLE_EQ(one.ghz, 3.0);
  EXPECT_EQ(calls, 5);
  // Each thread count keeps its own: two threads are still cached.
  EXPECT_DOUBLE_EQ(cpu::MachineClock(2, Rounds({7.0}, calls)).ghz, 2.51);
  EXPECT_EQ(calls, 5);
}

TEST(MachineClock, ARoundThatNeverSettlesKeepsTheFastest) {
  ClockCacheDir cache;
  int calls = 0;
  const cpu::MeasuredClock clock =
      cpu::MachineClock(2, Rounds({2.0, 2.2, 2.0, 2.2, 2.0, 2.2, 2.0, 2.2, 2.0, 2.2}, calls));
  EXPECT_EQ(calls, 10);
  EXPECT_DOUBLE_EQ(clock.ghz, 2.2);
  EXPECT_NE(clock.how.find("did not settle"), std::string::npos) << clock.how;
}

TEST(ClockCache, OnlyTheSameMachineRecentlyMeasuredIsReused) {
  ClockCacheDir cache;
  const core::ClockKey key{"Some CPU", 8, 4, "boot-1"};
  core::CachedClock clock{3.1, "2 rounds", "2026-12-01T00:00:00Z", 1000000};
  ASSERT_TRUE(core::SaveCachedClock(cache.file(), key, clock));
  const auto hit = core::LoadCachedClock(cache.file(), key, 1000000 + 3600);
  ASSERT_TRUE(hit.has_value());
  EXPECT_DOUBLE_EQ(hit->ghz, 3.1);
  EXPECT_EQ(hit->measured_at, "2026-12-01T00:00:00Z");
  for (const core::ClockKey& other :
       {core::ClockKey{"Other CPU", 8, 4, "boot-1"}, core::ClockKey{"Some CPU", 16, 4, "boot-1"},
        core::ClockKey{"Some CPU", 8, 2, "boot-1"}, core::ClockKey{"Some CPU", 8, 4, "boot-2"}}) {
    EXPECT_FALSE(core::LoadCachedClock(cache.file(), other, 1000000 + 3600).has_value());
  }
  EXPECT_FALSE(core::LoadCachedClock(cache.file(), key, 1000000 + 8 * 86400).has_value())
      << "older than a week";
  EXPECT_FALSE(core::LoadCachedClock(cache.file(), key, 1000000 - 1).has_value())
      << "measured in the future";
  for (const char* bad : {"", "{", "{\"kind\":\"opscope-clock\"}", "[1,2]", "\x01\x02garbage"}) {
    std::ofstream(cache.file()) << bad;
    EXPECT_FALSE(core::LoadCachedClock(cache.file(), key, 1000000).has_value()) << bad;
  }
  EXPECT_FALSE(core::LoadCachedClock(cache.file().parent_path() / "absent.json", key, 0));
  EXPECT_FALSE(core::SaveCachedClock("/proc/no-such-folder/clock.json", key, clock));
}

// ceilings.json carries the clock its peaks were computed at, how, and when.
TEST(ClockCache, CeilingsFilesCarryTheClock) {
  ClockCacheDir cache;
  const std::filesystem::path path = cache.file().parent_path() / "ceilings.json";
  core::Ceilings c;
  c.device_id = "cpu";
  c.flops_per_second["fp32"] = 3e11;
  c.memory_bytes_per_second = 2e10;
  c.clock_ghz = 2.7;
  c.clock_source = "measured: 3 rounds";
  c.written_at = "2026-12-01T00:00:00Z";
  core::SaveCeilings(c, path);
  const core::Ceilings back = core::LoadCeilings(path);
  EXPECT_DOUBLE_EQ(back.clock_ghz, 2.7);
  EXPECT_EQ(back.clock_source, "measured: 3 rounds");
  EXPECT_EQ(back.written_at, "2026-12-01T00:00:00Z");
  // A file from before the clock was recorded still loads; a bad clock does not.
  c.clock_ghz = 0;
  core::SaveCeilings(c, path);
  EXPECT_DOUBLE_EQ(core::LoadCeilings(path).clock_ghz, 0);
  std::ofstream(path) << R"({"kind":"opscope-ceilings","flops_per_second":{"fp32":1},)"
                      << R"("memory_bytes_per_second":1,"clock":{"ghz":-1}})";
  EXPECT_THROW(core::LoadCeilings(path), Error);
}

}  // namespace
}  // namespace opscope::devices
