// The transfers pass: copies by direction, bytes and bandwidth.
#include "analyze/passes/transfers.h"

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

TEST(Transfers, DirectionsBytesAndBandwidth) {
  Builder b;
  b.Add(EventClass::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 0, 10, 20000)
      .Copy(CopyDirection::kHostToDevice, HostMemory::kPageable)
      .Add(EventClass::kMemcpy, "Memcpy HtoD (Pinned -> Device)", 20, 30, 30000)
      .Copy(CopyDirection::kHostToDevice, HostMemory::kPinned)
      .Add(EventClass::kMemcpy, "Memcpy DtoH (Device -> Pageable)", 40, 42)
      .Copy(CopyDirection::kDeviceToHost, HostMemory::kPageable)
      .Add(EventClass::kKernel, "gemm", 50, 128);
  const auto t = ComputeTransfers(b.model);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].direction, "HtoD");
  EXPECT_EQ(t[0].count, 2);
  EXPECT_EQ(t[0].bytes, 50000);
  EXPECT_DOUBLE_EQ(t[0].gbps, 50000.0 / 20000.0);
  EXPECT_DOUBLE_EQ(t[0].share_of_device_pct, 20.0);  // 20 of 100 us
  EXPECT_EQ(t[0].host_memory, "mixed");
  EXPECT_EQ(t[0].pinned, 1);
  EXPECT_EQ(t[0].pageable, 1);
  EXPECT_EQ(t[1].direction, "DtoH");
  EXPECT_EQ(t[1].bytes, -1);
  EXPECT_EQ(t[1].host_memory, "pageable");
}

TEST(Transfers, ACopyWhoseDirectionIsNotRecordedIsOther) {
  Builder b;
  b.Add(EventClass::kMemcpy, "MEMCPY_ASYNC", 0, 10, 100);
  const auto t = ComputeTransfers(b.model);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].direction, "other");
  EXPECT_EQ(t[0].host_memory, "");
}

}  // namespace
}  // namespace opscope::analyze
