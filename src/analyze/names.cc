#include "analyze/names.h"

#include <cctype>

namespace opscope::analyze {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool Contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

bool IsSyncName(const std::string& lower) {
  return Contains(lower, "synchronize") || Contains(lower, "sync") || Contains(lower, "item") ||
         Contains(lower, "_local_scalar_dense") || Contains(lower, "dtoh") ||
         Contains(lower, "memcpy") || Contains(lower, "wait");
}

bool IsDataName(const std::string& lower) {
  return Contains(lower, "dataloader") || Contains(lower, "data_loader") ||
         Contains(lower, "next_data") || Contains(lower, "__next__");
}

bool IsLayoutConversion(std::string_view name) {
  const std::string n = Lower(name);
  return Contains(n, "transdata") || Contains(n, "contiguous") || Contains(n, "permute") ||
         Contains(n, "transpose") || n == "aten::copy_" || n == "aten::clone" ||
         Contains(n, "reorder") || Contains(n, "npu_format_cast") || Contains(n, "format_cast");
}

bool IsCommunication(std::string_view name) {
  const std::string n = Lower(name);
  return Contains(n, "nccl") || Contains(n, "hccl") || Contains(n, "hcom") || Contains(n, "rccl") ||
         Contains(n, "allreduce") || Contains(n, "all_reduce") || Contains(n, "allgather") ||
         Contains(n, "reducescatter") || Contains(n, "alltoall") || Contains(n, "broadcast");
}

std::vector<bool> ClassifyNames(const TraceModel& model, bool (*test)(std::string_view)) {
  std::vector<bool> out(model.string_count(), false);
  std::vector<bool> seen(model.string_count(), false);
  for (const uint32_t id : model.name) {
    if (seen[id]) continue;
    seen[id] = true;
    out[id] = test(model.String(id));
  }
  return out;
}

}  // namespace opscope::analyze
