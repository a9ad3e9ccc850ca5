// The devices' datasheet: one entry per variant, the specific one found first.
#include "core/datasheet.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace opscope::core {
namespace {

double Tflops(const Datasheet& d, std::string_view dtype) {
  for (const auto& [type, tflops] : d.tflops) {
    if (type == dtype) return tflops;
  }
  return -1;
}

TEST(Datasheet, TheVariantANameSaysIsTheOneFound) {
  // Names as the CUDA driver and Kineto's deviceProperties write them.
  const std::pair<const char*, const char*> cases[] = {
      {"NVIDIA H200 NVL", "H200 NVL"},
      {"NVIDIA H200", "H200 SXM"},
      {"NVIDIA H100 NVL", "H100 NVL"},
      {"NVIDIA H100 PCIe", "H100 PCIe"},
      {"NVIDIA H100 80GB HBM3", "H100 SXM"},
      {"NVIDIA A100-SXM4-80GB", "A100 80GB"},
      {"NVIDIA A100-PG509-200", "A100 40GB"},
      {"Tesla V100-SXM2-16GB", "V100 SXM2"},
      {"AMD Instinct MI300X VF", "Instinct MI300X"},
      {"AMD Instinct MI250X", "Instinct MI250X"},
      {"Ascend910B3", "Ascend 910B3"},
      {"Ascend 910B", "Ascend 910B"}};
  for (const auto& [name, part] : cases) {
    const Datasheet* d = FindDatasheet(name);
    ASSERT_NE(d, nullptr) << name;
    EXPECT_EQ(d->part, part) << name;
  }
  EXPECT_EQ(FindDatasheet("AMD Radeon Graphics"), nullptr);
  EXPECT_EQ(FindDatasheet(""), nullptr);
}

TEST(Datasheet, EveryEntryHasItsFiguresAndSource) {
  std::set<std::string_view> parts;
  for (const Datasheet& d : Datasheets()) {
    EXPECT_TRUE(parts.insert(d.part).second) << "two entries for " << d.part;
    EXPECT_FALSE(d.match.empty()) << d.part;
    EXPECT_GT(d.memory_tbps, 0) << d.part;
    EXPECT_GT(Tflops(d, "fp32"), 0) << d.part;
    EXPECT_FALSE(d.source.empty()) << d.part;
    EXPECT_EQ(d.low_confidence, d.vendor == "Huawei") << d.part;
  }
  // NVIDIA prints tensor-core rates with sparsity; the table holds them dense:
  // H100 SXM tf32 989 and bf16 1979 sparse.
  const Datasheet* sxm = FindDatasheet("NVIDIA H100 80GB HBM3");
  ASSERT_NE(sxm, nullptr);
  EXPECT_DOUBLE_EQ(Tflops(*sxm, "tf32"), 494.5);
  EXPECT_DOUBLE_EQ(Tflops(*sxm, "bf16"), 989.5);
  EXPECT_DOUBLE_EQ(Tflops(*FindDatasheet("NVIDIA H200 NVL"), "bf16"), 835.5);
}

}  // namespace
}  // namespace opscope::core
