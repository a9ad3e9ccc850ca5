// DefaultColumn (id_column.h): a model column that behaves as std::vector and
// leaves the pages of its runs of defaults untouched.
#include "analyze/id_column.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <random>
#include <vector>

namespace opscope::analyze {
namespace {

// Against std::vector through random pushes, writes, clears, resizes and
// copies: the same elements every time (stale values after clear() must not
// reappear as defaults).
TEST(DefaultColumn, IdColumnBehavesAsAVector) {
  std::mt19937 rng(5);
  IdColumn column;
  std::vector<uint32_t> reference;
  for (int round = 0; round < 20000; ++round) {
    const unsigned op = rng() % 100;
    if (op < 60) {
      const uint32_t v = rng() % 3 == 0 ? 1 + rng() % 50 : 0;
      column.push_back(v);
      reference.push_back(v);
    } else if (op < 72 && !reference.empty()) {
      const size_t i = rng() % reference.size();
      const uint32_t v = rng() % 50;
      column[i] = v;
      reference[i] = v;
    } else if (op < 78) {
      column.clear();
      reference.clear();
    } else if (op < 88) {
      const size_t n = rng() % 300;
      column.resize(n);
      reference.resize(n, 0);
    } else if (op < 93) {
      IdColumn copy(column);
      column = copy;
    } else {
      column.reserve(column.size() + rng() % 1000);
    }
    ASSERT_EQ(column.size(), reference.size());
    for (size_t i = 0; i < reference.size(); ++i) ASSERT_EQ(column[i], reference[i]) << round;
  }
}

TEST(DefaultColumn, CountColumnStoresMinusOneAsNothing) {
  std::mt19937_64 rng(9);
  CountColumn column;
  std::vector<int64_t> reference;
  const int64_t extremes[] = {-1, 0, INT64_MAX, INT64_MIN, 42};
  for (int round = 0; round < 20000; ++round) {
    const unsigned op = rng() % 100;
    if (op < 60) {
      const int64_t v = rng() % 2 ? -1 : extremes[rng() % 5];
      column.push_back(v);
      reference.push_back(v);
    } else if (op < 72 && !reference.empty()) {
      const size_t i = rng() % reference.size();
      const int64_t v = extremes[rng() % 5];
      column.Set(i, v);
      reference[i] = v;
    } else if (op < 78) {
      column.clear();
      reference.clear();
    } else if (op < 88) {
      const size_t n = rng() % 300;
      column.resize(n);
      reference.resize(n, -1);
    } else if (op < 93) {
      CountColumn copy;
      copy.append(column);
      column = std::move(copy);
    } else {
      column.reserve(column.size() + rng() % 1000);
    }
    ASSERT_EQ(column.size(), reference.size());
    for (size_t i = 0; i < reference.size(); ++i) ASSERT_EQ(column[i], reference[i]) << round;
  }
}

// The point of the column: a million defaults leave its pages unmapped.
TEST(DefaultColumn, DefaultsTouchNoPages) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator, not glibc's calloc, serves this build";
#endif
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const auto resident_pages = [&](const void* data, size_t bytes) {
    const auto begin = reinterpret_cast<uintptr_t>(data) & ~(page - 1);
    const size_t length = reinterpret_cast<uintptr_t>(data) + bytes - begin;
    std::vector<unsigned char> in_core((length + page - 1) / page);
    if (mincore(reinterpret_cast<void*>(begin), length, in_core.data()) != 0) return size_t{0};
    size_t n = 0;
    for (const unsigned char c : in_core) n += c & 1;
    return n;
  };
  constexpr size_t kEvents = size_t{4} << 20;  // 32 MB of int64: calloc maps it fresh
  CountColumn flops;
  flops.reserve(kEvents);
  for (size_t i = 0; i < kEvents; ++i) flops.push_back(-1);
  flops.push_back(7);
  EXPECT_EQ(flops[kEvents - 1], -1);
  EXPECT_EQ(flops[kEvents], 7);
  const size_t total = flops.capacity_bytes() / page;
  EXPECT_LT(resident_pages(flops.storage(), flops.capacity_bytes()), total / 100)
      << "a column of -1 touched its pages";
}

}  // namespace
}  // namespace opscope::analyze
