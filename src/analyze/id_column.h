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

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

#include "analyze/mapped.h"

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

  // Blocks of kMappedBytes or more are mapped (mapped.h), smaller ones come
  // from calloc.
  static T* Zeroed(size_t capacity) {
    if (capacity > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    if (capacity * sizeof(T) >= kMappedBytes)
      return static_cast<T*>(MapPages(capacity * sizeof(T)));
    auto* p = static_cast<T*>(std::calloc(capacity, sizeof(T)));
    if (p == nullptr && capacity > 0) throw std::bad_alloc();
    return p;
  }
  static void Free(T* data, size_t capacity) {
    if (data == nullptr) return;
    if (capacity * sizeof(T) >= kMappedBytes) {
      UnmapPages(data, capacity * sizeof(T));
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

// An int64 column held in 4 bytes a value while every value lies in [-1,
// 2^32 - 2] (-1 being "none"; durations under 4.2 s; correlation ids, which
// CUPTI and Kineto count in 32 bits, and external ids: nearly every event of
// nearly every trace), and widened to 8 bytes, once and for all, at the first
// value that does not. Saves 4 bytes an event per column (tens of MB on a
// trace of millions); a read costs one well-predicted branch. Otherwise it
// behaves as the std::vector<int64_t> it replaces (elements are written with Set).
class CompactInt64Column {
 public:
  using value_type = int64_t;

  size_t size() const { return wide_ ? wide_values_.size() : narrow_.size(); }
  bool empty() const { return size() == 0; }
  bool wide() const { return wide_; }
  size_t capacity() const { return wide_ ? wide_values_.capacity() : narrow_.capacity(); }
  size_t capacity_bytes() const {
    return wide_ ? wide_values_.capacity() * sizeof(int64_t)
                 : narrow_.capacity() * sizeof(uint32_t);
  }
  const void* storage() const {
    return wide_ ? static_cast<const void*>(wide_values_.data())
                 : static_cast<const void*>(narrow_.data());
  }

  int64_t operator[](size_t i) const { return wide_ ? wide_values_[i] : Value(narrow_[i]); }
  int64_t back() const { return (*this)[size() - 1]; }
  void Set(size_t i, int64_t v) {
    if (!wide_ && !Fits(v)) Widen(capacity());
    if (wide_) {
      wide_values_[i] = v;
    } else {
      narrow_[i] = Stored(v);
    }
  }
  void push_back(int64_t v) {
    if (!wide_ && !Fits(v)) Widen(std::max(capacity(), size() + 1));
    if (wide_) {
      wide_values_.push_back(v);
    } else {
      narrow_.push_back(Stored(v));
    }
  }
  void reserve(size_t n) {
    if (wide_) {
      wide_values_.reserve(n);
    } else {
      narrow_.reserve(n);
    }
  }
  void resize(size_t n, int64_t v = 0) {
    if (!wide_ && !Fits(v) && n > size()) Widen(n);
    if (wide_) {
      wide_values_.resize(n, v);
    } else {
      narrow_.resize(n, Stored(v));
    }
  }
  void clear() {
    narrow_.clear();
    wide_values_.clear();
  }
  // Appends `other`'s elements.
  void append(const CompactInt64Column& other) {
    if (other.wide_ && !wide_) Widen(size() + other.size());
    if (!wide_) {
      narrow_.insert(narrow_.end(), other.narrow_.begin(), other.narrow_.end());
      return;
    }
    // Doubling, not the exact size: appends batch after batch stay linear.
    if (size() + other.size() > wide_values_.capacity()) {
      wide_values_.reserve(std::max(size() + other.size(), 2 * wide_values_.capacity()));
    }
    for (size_t i = 0; i < other.size(); ++i) wide_values_.push_back(other[i]);
  }

  friend bool operator==(const CompactInt64Column& a, const CompactInt64Column& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }

 private:
  // Stored as the value plus one: -1 is 0.
  static bool Fits(int64_t v) { return v >= -1 && v <= int64_t{UINT32_MAX} - 1; }
  static uint32_t Stored(int64_t v) { return static_cast<uint32_t>(v + 1); }
  static int64_t Value(uint32_t stored) { return int64_t{stored} - 1; }
  void Widen(size_t capacity) {
    MappedVector<int64_t> wide;
    wide.reserve(capacity);
    for (const uint32_t stored : narrow_) wide.push_back(Value(stored));
    MappedVector<uint32_t>().swap(narrow_);  // its memory goes now, not at the end
    wide_values_ = std::move(wide);
    wide_ = true;
  }

  // Mapped (mapped.h): a column the size of a trace goes back to the system when freed.
  MappedVector<uint32_t> narrow_;
  MappedVector<int64_t> wide_values_;
  bool wide_ = false;
};

// Interned string ids, 0 none.
using IdColumn = DefaultColumn<uint32_t, 0>;
// Counts where -1 is unknown (FLOPs, bytes).
using CountColumn = DefaultColumn<int64_t, -1>;

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_ID_COLUMN_H_
