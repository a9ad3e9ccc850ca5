#include "analyze/passes/device_time.h"

#include "analyze/analysis.h"

namespace opscope::analyze {

Pass DeviceTimePass() {
  return {
      "device_time",
      "How much device time is there, and how much of it is fp32 GEMM?",
      {},
      [](const TraceModel& model, Analysis& a) {
        for (size_t e = 0; e < model.size(); ++e) {
          if (!IsDevice(model.cls[e])) continue;
          a.device_ns += model.duration_ns[e];
          const std::string_view name = model.String(model.name[e]);
          if (model.cls[e] == EventClass::kKernel && name.find("sgemm") != std::string_view::npos) {
            a.fp32_gemm_ns += model.duration_ns[e];
          }
        }
      }};
}

}  // namespace opscope::analyze
