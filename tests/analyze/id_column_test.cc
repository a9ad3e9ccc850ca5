// DefaultColumn (id_column.h): a model column that behaves as std::vector and
// leaves the pages of its runs of defaults untouched; CompactInt64Column: int64
// values in 4 bytes while they fit; MappedVector (mapped.h): large buffers
// that go back to the system when freed.
#include "analyze/id_column.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
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

// Against std::vector<int64_t> through random pushes, writes, appends,
// resizes and clears; values outside [-1, 2^32 - 2] come rarely, so the column
// runs narrow for a while and then wide, and every value survives the widening.
void CompactMatchesVector(uint64_t seed, bool widen) {
  std::mt19937_64 rng(seed);
  const std::vector<int64_t> narrow = {
      -1, 0, 1, 7, 1'000'000, int64_t{INT32_MAX} + 1, int64_t{UINT32_MAX} - 1};
  const std::vector<int64_t> wide = {-2, int64_t{UINT32_MAX}, INT64_MAX, INT64_MIN};
  CompactInt64Column column;
  std::vector<int64_t> reference;
  const auto any = [&] {
    return widen && rng() % 5000 == 0 ? wide[rng() % wide.size()] : narrow[rng() % narrow.size()];
  };
  for (int round = 0; round < 20000; ++round) {
    const unsigned op = rng() % 100;
    if (op < 70) {
      const int64_t v = any();
      column.push_back(v);
      reference.push_back(v);
    } else if (op < 85 && !reference.empty()) {
      const size_t i = rng() % reference.size();
      const int64_t v = any();
      column.Set(i, v);
      reference[i] = v;
    } else if (op < 90) {
      CompactInt64Column other;
      const size_t n = rng() % 50;
      for (size_t i = 0; i < n; ++i) {
        const int64_t v = any();
        other.push_back(v);
        reference.push_back(v);
      }
      column.append(other);
    } else if (op < 95) {
      const size_t n = rng() % 400;
      column.resize(n, -1);
      reference.resize(n, -1);
    } else if (op < 96) {
      column.clear();
      reference.clear();
    } else {
      column.reserve(column.size() + rng() % 1000);
    }
    ASSERT_EQ(column.size(), reference.size());
    for (size_t i = 0; i < reference.size(); ++i) ASSERT_EQ(column[i], reference[i]) << round;
  }
  EXPECT_EQ(column.wide(), widen);
}

TEST(CompactInt64Column, BehavesAsAVectorNarrowAndWide) {
  CompactMatchesVector(3, false);
  CompactMatchesVector(4, true);
}

TEST(CompactInt64Column, FourBytesAValueUntilOneDoesNotFit) {
  CompactInt64Column c;
  c.reserve(1001);
  for (int64_t v = -1; v < 999; ++v) c.push_back(v);
  c.push_back(int64_t{UINT32_MAX} - 1);  // the largest that fits
  EXPECT_FALSE(c.wide());
  EXPECT_EQ(c.capacity_bytes(), 1001 * sizeof(uint32_t));
  c.Set(3, int64_t{1} << 40);
  EXPECT_TRUE(c.wide());
  EXPECT_EQ(c[3], int64_t{1} << 40);
  EXPECT_EQ(c[0], -1);
  EXPECT_EQ(c.back(), int64_t{UINT32_MAX} - 1);
  EXPECT_EQ(c.size(), 1001u);
  CompactInt64Column narrow;  // appending a wide column widens
  narrow.push_back(5);
  narrow.append(c);
  EXPECT_TRUE(narrow.wide());
  EXPECT_EQ(narrow[4], int64_t{1} << 40);
  EXPECT_EQ(narrow.size(), 1002u);
}

// The point of MappedVector: a freed buffer leaves no resident memory behind,
// whatever the heap did before. Once glibc has freed a 16 MB mapped block it
// serves blocks up to that size from its heap, and keeps up to twice that free
// there: a std::vector here would stay resident after it is freed.
template <typename Vector>
long ResidentKbAfterFree() {
  const auto anon_kb = [] {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("RssAnon:", 0) == 0) return std::stol(line.substr(8));
    }
    return -1L;
  };
  constexpr size_t kBig = size_t{16} << 20;
  auto* raise = static_cast<volatile char*>(std::malloc(kBig));
  for (size_t i = 0; i < kBig; i += 4096) raise[i] = 1;
  std::free(const_cast<char*>(raise));
  constexpr size_t kValues = size_t{1} << 20;  // 8 MB
  const long before = anon_kb();
  if (before < 0) return -1;
  {
    Vector v;
    v.reserve(kValues);
    for (size_t i = 0; i < kValues; ++i) v.push_back(static_cast<int64_t>(i));
    if (v[kValues - 1] != static_cast<int64_t>(kValues - 1) || anon_kb() - before < (7 << 10)) {
      return -1;  // not written, or not resident
    }
  }
  return anon_kb() - before;
}

TEST(MappedVector, AFreedBufferGoesBackToTheSystem) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator, not glibc's, serves this build";
#endif
  const long left = ResidentKbAfterFree<MappedVector<int64_t>>();
  ASSERT_GE(left, 0) << "no RssAnon in /proc/self/status, or the buffer was not resident";
  EXPECT_LT(left, 1 << 10) << "the freed buffer stayed resident";
  MappedVector<char> small(100, 'x');  // small blocks come from the heap
  EXPECT_EQ(small[99], 'x');
}

}  // namespace
}  // namespace opscope::analyze
