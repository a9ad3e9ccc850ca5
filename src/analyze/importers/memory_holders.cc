#include "analyze/importers/memory_holders.h"

#include <algorithm>

namespace opscope::analyze {

void MemoryHolders::Add(const std::string& name, int64_t bytes) {
  MemoryHolder& h = by_name_[name];
  h.name = name, ++h.blocks, h.bytes += bytes;
}

std::vector<MemoryHolder> MemoryHolders::Largest() const {
  std::vector<MemoryHolder> v;
  v.reserve(by_name_.size());
  for (const auto& [name, h] : by_name_) v.push_back(h);
  // The map gives name order; a stable sort keeps it among equal sizes.
  std::stable_sort(v.begin(), v.end(),
                   [](const MemoryHolder& a, const MemoryHolder& b) { return a.bytes > b.bytes; });
  return v;
}

}  // namespace opscope::analyze
