// PyTorch's memory events in a Kineto trace (profile_memory=True): an instant
// event named "[memory]" on the thread that allocated or freed, with
// "Bytes" (negative for a free), "Addr", "Total Allocated" and "Total
// Reserved" (the caching allocator's totals after it, in bytes), "Device Type"
// and "Device Id" (PyTorch's c10::DeviceType: 0 the CPU, 1 CUDA, which ROCm
// builds report too). The device with the most events other than the CPU is
// judged as an NPU's memory files are (reported.h: ReportedMemory): the
// highest total allocated and when, the operator whose allocation reached it
// (the innermost framework operator on its thread), the reserved total then,
// the blocks live at that moment by operator, and every operator's
// allocations.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_CHROME_JSON_KINETO_MEMORY_H_
#define OPSCOPE_ANALYZE_IMPORTERS_CHROME_JSON_KINETO_MEMORY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/reported.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct MemoryEvent {
  int64_t ts = 0;
  uint32_t track = 0;  // in the merged model
  int64_t bytes = 0, addr = -1, total_allocated = -1, total_reserved = -1;
  int64_t device_type = -1, device_id = -1;
};

// Null where no event is of a device other than the CPU.
std::optional<ReportedMemory> KinetoMemory(const TraceModel& model, std::vector<MemoryEvent> events,
                                           const std::string& path);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_CHROME_JSON_KINETO_MEMORY_H_
