// Large blocks straight from mmap, for the model's columns and the passes'
// large temporaries. glibc serves a freed large block's size from its arenas
// from then on (its mmap threshold rises to the largest block freed, up to
// 32 MiB), and an arena keeps memory freed in its middle: the temporaries of
// passes running on two threads left tens of MB resident after they were
// freed, more or less from run to run. A mapped block goes back to the system
// when it is freed. Small blocks, where a page each would be waste, come from
// the heap.
#ifndef OPSCOPE_ANALYZE_MAPPED_H_
#define OPSCOPE_ANALYZE_MAPPED_H_

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace opscope::analyze {

// Blocks of this size or more are mapped.
inline constexpr size_t kMappedBytes = size_t{256} << 10;
// MappedAllocator asks for transparent huge pages on blocks this large.
inline constexpr size_t kHugeAdviceBytes = size_t{4} << 20;

// `bytes` of fresh zero pages; throws std::bad_alloc when none can be mapped.
inline void* MapPages(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return p;
}
inline void UnmapPages(void* p, size_t bytes) { munmap(p, bytes); }

// A std::allocator that maps blocks of kMappedBytes or more.
template <typename T>
struct MappedAllocator {
  using value_type = T;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);

  MappedAllocator() = default;
  template <typename U>
  MappedAllocator(const MappedAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator

  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    const size_t bytes = n * sizeof(T);
    if (bytes < kMappedBytes) return static_cast<T*>(::operator new(bytes));
    void* p = MapPages(bytes);
    // A vector's buffer is written front to back: huge pages take one fault
    // where 4 KiB pages take 512 (a hint; where the kernel declines, nothing changes).
    if (bytes >= kHugeAdviceBytes) madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) >= kMappedBytes) {
      UnmapPages(p, n * sizeof(T));
    } else {
      ::operator delete(p);
    }
  }
  template <typename U>
  friend bool operator==(const MappedAllocator&, const MappedAllocator<U>&) {
    return true;
  }
};

// A vector whose large buffers are mapped: for arrays the size of a trace.
template <typename T>
using MappedVector = std::vector<T, MappedAllocator<T>>;

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_MAPPED_H_
