// A per-thread cache of runtime scope names (with their arguments), so that a
// name a thread records again and again is copied once per trace, not once per
// event: OPSCOPE_SCOPE_DYN(layer.name()) in a training loop then costs a hash
// and a compare instead of a copy into fresh memory.
//
// Contract: owned and used by one thread only. An entry holds its own copy of
// the key, so a lookup never reads a collection's memory (a collection can be
// released by another thread at any time); its payload pointer is only handed
// out for the generation it was made in, whose records own that payload.
#ifndef OPSCOPE_COLLECT_PAYLOAD_CACHE_H_
#define OPSCOPE_COLLECT_PAYLOAD_CACHE_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace opscope::collect {

namespace payload_hash {

// A multiply-fold mix over 8-byte words (the shape of wyhash's): a few
// nanoseconds for a layer's name. Collisions only cost a miss, since an entry
// is compared whole before it is used. Inline: it is on every runtime scope.
inline constexpr uint64_t kMulA = 0xa0761d6478bd642full;
inline constexpr uint64_t kMulB = 0xe7037ed1a0b428dbull;
__extension__ using Uint128 = unsigned __int128;

inline uint64_t Mix(uint64_t a, uint64_t b) {
  const Uint128 product = static_cast<Uint128>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

inline uint64_t Load8(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline uint64_t Load4(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// `text` is not empty.
inline uint64_t Bytes(std::string_view text, uint64_t seed) {
  const char* p = text.data();
  size_t n = text.size();
  seed ^= n * kMulB;
  while (n > 16) {
    seed = Mix(Load8(p) ^ kMulA, Load8(p + 8) ^ seed);
    p += 16;
    n -= 16;
  }
  uint64_t a = 0, b = 0;
  if (n >= 8) {
    a = Load8(p);
    b = Load8(p + n - 8);
  } else if (n >= 4) {
    a = Load4(p);
    b = Load4(p + n - 4);
  } else {
    a = (uint64_t{static_cast<unsigned char>(p[0])} << 16) |
        (uint64_t{static_cast<unsigned char>(p[n >> 1])} << 8) |
        static_cast<unsigned char>(p[n - 1]);
  }
  return Mix(a ^ kMulA, b ^ seed);
}

}  // namespace payload_hash

// What makes two runtime scopes the same payload: every string (already cut to
// the length kept) and every other argument.
struct PayloadKey {
  std::array<std::string_view, 5> parts;  // name, shapes, dtype, layout, module
  const char* category;
  int64_t flops;
  int64_t bytes;

  uint64_t Hash() const {
    uint64_t h = parts[0].empty() ? payload_hash::kMulA : payload_hash::Bytes(parts[0], 0);
    // Most runtime scopes carry a name alone.
    if ((parts[1].size() | parts[2].size() | parts[3].size() | parts[4].size()) != 0) {
      for (size_t i = 1; i < parts.size(); ++i) {
        // Which part a string is in is part of the key.
        if (!parts[i].empty()) h = payload_hash::Bytes(parts[i], h + i);
      }
    }
    // Folded in without another multiply on the names' chain: usually defaults.
    return h ^ reinterpret_cast<uintptr_t>(category) ^
           static_cast<uint64_t>(flops) * payload_hash::kMulA ^
           static_cast<uint64_t>(bytes) * payload_hash::kMulB;
  }
};

class PayloadCache {
 public:
  static constexpr size_t kEntries = 512;  // direct-mapped; 40 KiB of address space a thread
  static_assert((kEntries & (kEntries - 1)) == 0);

  // Maps the entries as zero pages, which are empty entries: a page is backed
  // when a name first lands in it. (Built with `new`, every entry was written
  // at once: ten page faults, 130-210 us, inside a thread's first runtime scope.)
  // Without memory for the map the cache holds nothing and every name is copied.
  PayloadCache();
  ~PayloadCache();
  PayloadCache(const PayloadCache&) = delete;
  PayloadCache& operator=(const PayloadCache&) = delete;

  // The payload recorded for `key` in `generation`, or nullptr.
  const void* Find(uint32_t generation, const PayloadKey& key, uint64_t hash) const {
    if (entries_ == nullptr) return nullptr;
    const Entry& e = entries_[Slot(hash)];
    if (e.generation != generation || e.hash != hash || e.category != key.category ||
        e.flops != key.flops || e.bytes != key.bytes) {
      return nullptr;
    }
    const char* chars = e.chars;
    for (size_t i = 0; i < key.parts.size(); ++i) {
      const std::string_view part = key.parts[i];
      if (e.sizes[i] != part.size()) return nullptr;
      if (!part.empty() && std::memcmp(chars, part.data(), part.size()) != 0) return nullptr;
      chars += part.size();
    }
    return e.payload;
  }
  // Remembers `payload` for `key` in `generation`, replacing what shared its slot.
  void Remember(uint32_t generation, const PayloadKey& key, uint64_t hash, const void* payload);

 private:
  // Trivial, so that all-zero bytes are an empty entry (generation 0) with no
  // key storage: the map's zero pages need no constructor.
  struct Entry {
    uint64_t hash;
    uint32_t generation;  // 0: empty
    std::array<uint32_t, 5> sizes;
    const void* payload;
    const char* category;
    int64_t flops;
    int64_t bytes;
    char* chars;  // the parts, one after another (malloc'd, chars_capacity bytes)
    size_t chars_capacity;
  };
  static_assert(std::is_trivial_v<Entry>);
  static constexpr size_t kMapBytes = kEntries * sizeof(Entry);
  static size_t Slot(uint64_t hash) { return static_cast<size_t>(hash >> 32) & (kEntries - 1); }

  Entry* entries_ = nullptr;
};

}  // namespace opscope::collect

#endif  // OPSCOPE_COLLECT_PAYLOAD_CACHE_H_
