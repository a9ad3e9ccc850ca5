// A model column whose runs of its default value cost no memory. Most events
// of most traces carry no shapes, data type, layout, module, task kind, FLOPs
// or bytes; as std::vector each of those columns cost 4 or 8 bytes an event
// all the same (tens of MB for a trace of millions of events). Here each value
// is stored as its difference from the default, in fresh zero pages that the
// kernel maps only when written (large blocks straight from mmap: calloc
// would serve them from memory freed earlier, which it must clear, and keep
// after they are freed, once glibc's mmap threshold has risen); and
// appending the default past every element ever written only moves the size:
// the pages of a column of defaults are never touched. Otherwise it behaves as
// the vector it replaces (elements are written with Set, or through [] where
// the default is 0).
#ifndef OPSCOPE_ANALYZE_ID_COLUMN_H_
#define OPSCOPE_ANALYZE_ID_COLUMN_H_

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

namespace opscope::analyze {

template <typename T, T kDefault>
class DefaultColumn {
 public:
  using value_type = T;
  static constexpr T kDefaultValue = kDefault;

  DefaultColumn() = default;
  DefaultColumn(const DefaultColumn& other) { *this = other; }
  DefaultColumn(DefaultColumn&& other) noexcept { Swap(other); }
  DefaultColumn& operator=(const DefaultColumn& other) {
    if (this != &other) {
      clear();
      reserve(other.size_);
      if (other.size_ > 0) std::memcpy(data_, other.data_, other.size_ * sizeof(T));
      size_ = other.size_;
      written_ = std::max(written_, size_);
    }
    return *this;
  }
  DefaultColumn& operator=(DefaultColumn&& other) noexcept {
    DefaultColumn moved(std::move(other));
    Swap(moved);
    return *this;
  }
  ~DefaultColumn() { Free(data_, capacity_); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  T operator[](size_t i) const { return Value(data_[i]); }
  T back() const { return Value(data_[size_ - 1]); }
  void Set(size_t i, T v) {
    written_ = std::max(written_, i + 1);
    data_[i] = Stored(v);
  }
  // Where the default is 0 values are stored as they are: writable in place
  // (counted as written: it may stop being 0) and readable as an array.
  T& operator[](size_t i) requires(kDefault == 0) {
    written_ = std::max(written_, i + 1);
    return data_[i];
  }
  T& back() requires(kDefault == 0) { return (*this)[size_ - 1]; }
  const T* data() const requires(kDefault == 0) { return data_; }
  const T* begin() const requires(kDefault == 0) { return data_; }
  const T* end() const requires(kDefault == 0) { return data_ + size_; }
  size_t capacity_bytes() const { return capacity_ * sizeof(T); }
  const void* storage() const { return data_; }

  void reserve(size_t n) {
    if (n > capacity_) Reallocate(n);
  }
  void push_back(T value) {
    if (size_ == capacity_) Reallocate(std::max<size_t>(16, capacity_ * 2));
    // Past every element ever written the memory is still zeros.
    if (value != kDefault || size_ < written_) {
      data_[size_] = Stored(value);
      written_ = std::max(written_, size_ + 1);
    }
    ++size_;
  }
  // Appends `other`'s elements.
  void append(const DefaultColumn& other) {
    if (size_ + other.size_ > capacity_) Reallocate(std::max(size_ + other.size_, 2 * capacity_));
    for (size_t i = 0; i < other.size_; ++i) push_back(other[i]);
  }
  void resize(size_t n) {
    if (n > capacity_) Reallocate(n);
    if (n > size_ && size_ < written_) {  // zeros over what was written before
      const size_t until = std::min(n, written_);
      std::memset(data_ + size_, 0, (until - size_) * sizeof(T));
    }
    size_ = n;
  }
  void clear() { size_ = 0; }

  friend bool operator==(const DefaultColumn& a, const DefaultColumn& b) {
    return a.size_ == b.size_ &&
           (a.size_ == 0 || std::memcmp(a.data_, b.data_, a.size_ * sizeof(T)) == 0);
  }

 private:
  // The difference from the default, in unsigned arithmetic (no overflow).
  using Bits = std::make_unsigned_t<T>;
  static T Stored(T v) {
    return static_cast<T>(static_cast<Bits>(v) - static_cast<Bits>(kDefault));
  }
  static T Value(T stored) {
    return static_cast<T>(static_cast<Bits>(stored) + static_cast<Bits>(kDefault));
  }

  // Blocks of this size or more are mapped, smaller ones come from calloc.
  static constexpr size_t kMapBytes = size_t{256} << 10;
  static T* Zeroed(size_t capacity) {
    if (capacity > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    if (capacity * sizeof(T) >= kMapBytes) {
      void* p = mmap(nullptr, capacity * sizeof(T), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      return static_cast<T*>(p);
    }
    auto* p = static_cast<T*>(std::calloc(capacity, sizeof(T)));
    if (p == nullptr && capacity > 0) throw std::bad_alloc();
    return p;
  }
  static void Free(T* data, size_t capacity) {
    if (data == nullptr) return;
    if (capacity * sizeof(T) >= kMapBytes) {
      munmap(data, capacity * sizeof(T));
    } else {
      std::free(data);
    }
  }

  void Reallocate(size_t capacity) {
    T* fresh = Zeroed(capacity);
    // Only what was written needs copying: the rest of the old block is zeros,
    // as is all of the new one.
    const size_t copy = std::min(size_, written_);
    if (copy > 0) std::memcpy(fresh, data_, copy * sizeof(T));
    Free(data_, capacity_);
    data_ = fresh;
    capacity_ = capacity;
    written_ = copy;
  }
  void Swap(DefaultColumn& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
    std::swap(written_, other.written_);
  }

  T* data_ = nullptr;  // each value less the default
  size_t size_ = 0, capacity_ = 0;
  size_t written_ = 0;  // elements [0, written_) may differ from the default; the rest do not
};

// Interned string ids, 0 none.
using IdColumn = DefaultColumn<uint32_t, 0>;
// Counts where -1 is unknown (FLOPs, bytes).
using CountColumn = DefaultColumn<int64_t, -1>;

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_ID_COLUMN_H_
