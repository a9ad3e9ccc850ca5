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

// Against std::vector through random pushes, writes, clears, resizes, copies,
// appends and reserves: the same elements after every step (a value written
// before clear() must not come back as a default).
template <typename Column>
void MatchesVector(uint64_t seed, const std::vector<typename Column::value_type>& values) {
  using T = typename Column::value_type;
  std::mt19937_64 rng(seed);
  Column column;
  std::vector<T> reference;
  const auto any = [&] {
    return rng() % 2 ? Column::kDefaultValue : values[rng() % values.size()];
  };
  for (int round = 0; round < 20000; ++round) {
    const unsigned op = rng() % 100;
    if (op < 60) {
      const T v = any();
      column.push_back(v);
      reference.push_back(v);
    } else if (op < 72 && !reference.empty()) {
      const size_t i = rng() % reference.size();
      const T v = any();
      column.Set(i, v);
      reference[i] = v;
    } else if (op < 78) {
      column.clear();
      reference.clear();
    } else if (op < 88) {
      const size_t n = rng() % 300;
      column.resize(n);
      reference.resize(n, Column::kDefaultValue);
    } else if (op < 91) {
      Column copy(column);
      column = copy;
    } else if (op < 94) {
      Column appended;
      appended.append(column);
      column = std::move(appended);
    } else {
      column.reserve(column.size() + rng() % 1000);
    }
    ASSERT_EQ(column.size(), reference.size());
    for (size_t i = 0; i < reference.size(); ++i) ASSERT_EQ(column[i], reference[i]) << round;
  }
}

TEST(DefaultColumn, IdColumnBehavesAsAVector) {
  MatchesVector<IdColumn>(5, {1, 2, 49, UINT32_MAX});
  IdColumn ids;  // writable in place where the default is 0
  ids.push_back(0);
  ids[0] = 3;
  ids.back() += 1;
  EXPECT_EQ(ids[0], 4u);
}

TEST(DefaultColumn, CountColumnStoresMinusOneAsNothing) {
  MatchesVector<CountColumn>(9, {0, 42, INT64_MAX, INT64_MIN});
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
