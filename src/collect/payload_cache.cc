#include "collect/payload_cache.h"

#include <sys/mman.h>

#include <cstdlib>

namespace opscope::collect {

PayloadCache::PayloadCache() {
  void* memory =
      ::mmap(nullptr, kMapBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory != MAP_FAILED) entries_ = static_cast<Entry*>(memory);
}

PayloadCache::~PayloadCache() {
  if (entries_ == nullptr) return;
  for (size_t i = 0; i < kEntries; ++i) std::free(entries_[i].chars);
  ::munmap(entries_, kMapBytes);
}

void PayloadCache::Remember(uint32_t generation, const PayloadKey& key, uint64_t hash,
                            const void* payload) {
  if (entries_ == nullptr) return;
  Entry& e = entries_[Slot(hash)];
  size_t total = 0;
  for (const std::string_view part : key.parts) total += part.size();
  if (total > e.chars_capacity) {
    std::free(e.chars);
    e.chars = static_cast<char*>(std::malloc(total));
    e.chars_capacity = e.chars != nullptr ? total : 0;
    if (e.chars == nullptr) {
      e.generation = 0;  // no memory for the key: the slot stays empty
      return;
    }
  }
  e.hash = hash;
  e.generation = generation;
  e.payload = payload;
  e.category = key.category;
  e.flops = key.flops;
  e.bytes = key.bytes;
  char* chars = e.chars;
  for (size_t i = 0; i < key.parts.size(); ++i) {
    e.sizes[i] = static_cast<uint32_t>(key.parts[i].size());
    // Empty views may hold a null pointer, which memcpy must not see.
    if (!key.parts[i].empty()) std::memcpy(chars, key.parts[i].data(), key.parts[i].size());
    chars += key.parts[i].size();
  }
}

}  // namespace opscope::collect
