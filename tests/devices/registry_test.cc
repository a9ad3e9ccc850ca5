// The registry: built-in backends, plugins found by name, device names parsed
// and refused with the kinds this build has.
#include "devices/registry.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "opscope/opscope.h"
#include "test_util.h"

namespace opscope::devices {
namespace {

std::string ErrorOpening(const std::string& name) {
  try {
    OpenDevice(name);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << name;
    return e.what();
  }
  return "no error";
}

TEST(Registry, TheCpuIsBuiltInAndListedLast) {
  const auto kinds = BackendKinds();
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.back(), "cpu");
  const auto devices = ListDevices();
  ASSERT_FALSE(devices.empty());
  EXPECT_EQ(devices.back(), "cpu");
  EXPECT_EQ(OpenDevice("cpu:0")->properties().kind, "cpu");
}

TEST(Registry, BadNamesAndAbsentBackendsSayWhatThereIs) {
  EXPECT_NE(ErrorOpening("CPU!").find("unknown device 'CPU!': use "), std::string::npos);
  EXPECT_NE(ErrorOpening("cpu:x").find("unknown device"), std::string::npos);
  EXPECT_NE(ErrorOpening("cpu:1").find("one CPU device"), std::string::npos);
  const std::string absent = ErrorOpening("tpu:0");
  EXPECT_NE(absent.find("has no tpu backend"), std::string::npos) << absent;
  EXPECT_NE(absent.find("devices present:"), std::string::npos) << absent;
}

// A plugin is found by its file name: libopscope_backend_KIND.so in the
// backend folder. One that is not a shared object is named, with why.
TEST(Registry, PluginsAreDiscoveredByName) {
  testing::TempDir dir;
  std::ofstream(dir.path() / "libopscope_backend_fake.so") << "not a shared object";
  std::ofstream(dir.path() / "libopscope_c.so") << "not a backend";
  const char* previous = std::getenv("OPSCOPE_BACKEND_DIR");
  const std::string saved = previous != nullptr ? previous : "";
  ::setenv("OPSCOPE_BACKEND_DIR", dir.path().c_str(), 1);
  const auto kinds = BackendKinds();
  std::string why;
  const BackendApi* api = LoadBackend("fake", &why);
  if (previous != nullptr) {
    ::setenv("OPSCOPE_BACKEND_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("OPSCOPE_BACKEND_DIR");
  }
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "fake"), kinds.end());
  EXPECT_EQ(std::find(kinds.begin(), kinds.end(), "c"), kinds.end()) << "not a backend's name";
  EXPECT_EQ(api, nullptr);
  EXPECT_NE(why.find("cannot load the fake backend"), std::string::npos) << why;
}

}  // namespace
}  // namespace opscope::devices
