#include "analyze/importers/ascend/op_type.h"

#include <algorithm>
#include <cctype>

#include "analyze/flat_map.h"
#include "analyze/importers/ascend/ascend_cost.h"
#include "analyze/names.h"

namespace opscope::analyze {

EventClass AscendTaskClass(std::string_view name, std::string_view op_type,
                           std::string_view task_type) {
  const std::string type = Lower(op_type);
  const std::string lower = Lower(name);
  const std::string task = Lower(task_type);
  if (task == "communication" || task == "hccl" || lower.starts_with("hcom_")) {
    return EventClass::kCommunication;
  }
  // The task type decides where the file gives one (a PLACE_HOLDER_SQE task
  // may be named EVENT_RECORD); the names of such tasks otherwise.
  if (task == "place_holder_sqe") return EventClass::kDeviceAnnotation;
  for (const std::string_view wait :
       {"notify wait", "notify_wait", "notify record", "notify_record", "write value", "event_wait",
        "event_record", "event_wait_sqe", "event_record_sqe"}) {
    if (lower == wait || task == wait) return EventClass::kDeviceWait;
  }
  if (lower == "sdma" || task == "sdma") return EventClass::kDma;
  if (lower == "profiling_enable" || lower == "profiling_disable") {
    return EventClass::kDeviceAnnotation;
  }
  if (type == "memset" || lower == "memset" || lower.ends_with("_memset"))
    return EventClass::kMemset;
  if (type == "memcopy" || type == "memcpy" || lower.starts_with("memcpy_async") ||
      lower == "memcopy") {
    return EventClass::kMemcpy;
  }
  return EventClass::kKernel;
}

std::string AscendOpType(std::string_view name, std::string_view category) {
  if (!category.empty() && category != "kernel") return std::string(category);
  std::string_view rest = name;
  while (!rest.empty()) {
    const size_t cut = rest.rfind('_');
    const std::string_view part = cut == std::string_view::npos ? rest : rest.substr(cut + 1);
    const bool number = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
    if (!part.empty() && !number) return std::string(part);
    if (cut == std::string_view::npos) break;
    rest = rest.substr(0, cut);
  }
  return std::string(name);
}

void CompleteAscendModel(TraceModel& model) {
  Int64Map<uint32_t> type_of;  // (name, category) -> interned type
  for (size_t e = 0; e < model.size(); ++e) {
    if (!IsDevice(model.cls[e]) || model.op_type[e] != 0) continue;
    uint32_t& type =
        type_of[static_cast<int64_t>(uint64_t{model.name[e]} << 32 | model.category[e])];
    if (type == 0) {
      type =
          model.Intern(AscendOpType(model.String(model.name[e]), model.String(model.category[e])));
    }
    model.op_type.Set(e, type);
  }
  if (model.implied_device.empty()) model.implied_device = "Ascend 910B";
  // torch_npu's fused optimizers (torch_npu.optim's __all__): NpuFused<Class>.
  model.fused_optimizers.prefix = "torch_npu.optim.NpuFused";
  model.fused_optimizers.classes = {"SGD",   "Adadelta", "Lamb",    "Adam",     "AdamW",
                                    "AdamP", "BertAdam", "RMSprop", "RMSpropTF"};
  CompleteAscendCosts(model);
}

}  // namespace opscope::analyze
