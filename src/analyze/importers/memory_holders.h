// Allocated blocks tallied by what holds them (the operator or the allocation
// site that asked), for every importer that reads a memory record.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_MEMORY_HOLDERS_H_
#define OPSCOPE_ANALYZE_IMPORTERS_MEMORY_HOLDERS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyze/reported.h"

namespace opscope::analyze {

class MemoryHolders {
 public:
  // One block of `bytes` held by `name`.
  void Add(const std::string& name, int64_t bytes);
  // The holders, the most bytes first (equal bytes by name).
  std::vector<MemoryHolder> Largest() const;

 private:
  std::map<std::string, MemoryHolder> by_name_;
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_MEMORY_HOLDERS_H_
