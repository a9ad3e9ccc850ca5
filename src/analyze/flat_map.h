// An open-addressing hash map from 64-bit integer keys (correlation ids,
// packed name/class pairs) to small values. The analyses look up millions of
// keys; std::unordered_map's node per entry made those lookups their largest cost.
#ifndef OPSCOPE_ANALYZE_FLAT_MAP_H_
#define OPSCOPE_ANALYZE_FLAT_MAP_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "analyze/mapped.h"

namespace opscope::analyze {

template <typename V>
class Int64Map {
 public:
  explicit Int64Map(size_t expected = 0) { Rehash(Capacity(expected)); }

  // The value of `key`, value-initialized when new.
  V& operator[](int64_t key) {
    if (key == kEmpty) return Special(true);
    size_t at = Slot(key);
    for (; slots_[at].key != kEmpty; at = (at + 1) & mask_) {
      if (slots_[at].key == key) return slots_[at].value;
    }
    if ((size_ + 1) * 2 > slots_.size()) {  // at most half full
      Rehash(slots_.size() * 2);
      return (*this)[key];
    }
    slots_[at].key = key;
    ++size_;
    return slots_[at].value;
  }

  const V* Find(int64_t key) const {
    if (key == kEmpty) return has_special_ ? &special_ : nullptr;
    for (size_t at = Slot(key); slots_[at].key != kEmpty; at = (at + 1) & mask_) {
      if (slots_[at].key == key) return &slots_[at].value;
    }
    return nullptr;
  }

  size_t size() const { return size_ + (has_special_ ? 1 : 0); }

  // Calls f(key, value) for each entry, in no particular order.
  template <typename F>
  void ForEach(F&& f) const {
    for (const Entry& slot : slots_) {
      if (slot.key != kEmpty) f(slot.key, slot.value);
    }
    if (has_special_) f(kEmpty, special_);
  }

 private:
  // Key and value side by side: a lookup touches one cache line.
  struct Entry {
    int64_t key;
    V value;
  };
  static constexpr int64_t kEmpty = INT64_MIN;  // marks a free slot; stored apart when a key

  static size_t Capacity(size_t expected) {
    size_t capacity = 16;
    while (capacity < expected * 2) capacity *= 2;
    return capacity;
  }
  size_t Slot(int64_t key) const {
    uint64_t h = static_cast<uint64_t>(key);  // splitmix64's finalizer
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    return static_cast<size_t>(h ^ (h >> 31)) & mask_;
  }
  V& Special(bool insert) {
    if (insert && !has_special_) has_special_ = true, special_ = V{};
    return special_;
  }
  void Rehash(size_t capacity) {
    MappedVector<Entry> slots(capacity, Entry{kEmpty, V{}});
    slots.swap(slots_);
    mask_ = capacity - 1;
    for (Entry& slot : slots) {
      if (slot.key == kEmpty) continue;
      size_t to = Slot(slot.key);
      while (slots_[to].key != kEmpty) to = (to + 1) & mask_;
      slots_[to] = std::move(slot);
    }
  }

  MappedVector<Entry> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  bool has_special_ = false;
  V special_{};
};

// Ids to values as one sorted array, for millions of ids: 16 bytes an entry
// with a value of up to 8 bytes, where a half-full Int64Map costs two to four
// times that. Entries are added, then sorted once; an id added more than once
// finds its last value.
template <typename V>
class SortedIdMap {
 public:
  void Reserve(size_t n) { entries_.reserve(n); }
  void Add(int64_t id, V value) { entries_.push_back({id, value}); }
  void Sort() {
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.id < b.id; });
  }
  const V* Find(int64_t id) const {
    const auto after = std::upper_bound(entries_.begin(), entries_.end(), id,
                                        [](int64_t key, const Entry& e) { return key < e.id; });
    if (after == entries_.begin() || std::prev(after)->id != id) return nullptr;
    return &std::prev(after)->value;
  }
  V* Find(int64_t id) { return const_cast<V*>(static_cast<const SortedIdMap&>(*this).Find(id)); }
  // f(id, value) for each entry, by id.
  template <typename F>
  void ForEach(F&& f) const {
    for (const Entry& e : entries_) f(e.id, e.value);
  }

 private:
  struct Entry {
    int64_t id;
    V value;
  };
  MappedVector<Entry> entries_;
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_FLAT_MAP_H_
