#include "collect/payload_cache.h"

#include <new>

namespace opscope::collect {

void PayloadCache::Remember(uint32_t generation, const PayloadKey& key, uint64_t hash,
                            const void* payload) {
  Entry& e = entries_[Slot(hash)];
  e.hash = hash;
  e.generation = generation;
  e.payload = payload;
  e.category = key.category;
  e.flops = key.flops;
  e.bytes = key.bytes;
  try {
    e.chars.clear();
    for (size_t i = 0; i < key.parts.size(); ++i) {
      e.sizes[i] = static_cast<uint32_t>(key.parts[i].size());
      if (!key.parts[i].empty()) e.chars.append(key.parts[i]);
    }
  } catch (const std::bad_alloc&) {
    e.generation = 0;  // no memory for the key: the slot stays empty
  }
}

}  // namespace opscope::collect
