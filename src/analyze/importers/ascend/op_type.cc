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
  // torch_npu's affinity APIs and the operator runs each replaces, as
  // msprof-analyze's advisor lists them (advisor/rules/timeline_fusion_ops.yaml,
  // by the CANN version that brought each; the optimizers are above).
  model.fused_apis = {
      {"torch_npu.npu_confusion_transpose",
       "CANN 6.3.RC2",
       {"(permute|transpose)-(contiguous){0,1}-(reshape|view)",
        "(reshape|view)-(contiguous){0,1}-(permute|transpose)"}},
      {"torch_npu.fast_gelu", "CANN 6.3.RC2", {"gelu"}},
      {"torch_npu.npu_scaled_masked_softmax",
       "CANN 6.3.RC2",
       {"softmax-(mul){0,1}-(masked_fill_|add)"}},
      {"optimizer.clip_grad_norm_fused_", "CANN 6.3.RC2", {"add-reciprocal-mul"}},
      {"torch_npu.npu_fusion_attention",
       "CANN 7.0.RC1",
       {"matmul-(add){0,1}-(mul){0,1}-(masked_fill_|add){0,1}-softmax-(dropout){0,1}-matmul"}},
      {"torch_npu.npu_rotary_mul", "CANN 7.0.RC1", {"(chunk|slice)-neg-cat-(mul){0,2}-add"}},
      {"torch_npu.npu_rms_norm",
       "CANN 7.0.0",
       {"(pow){0,1}-(mean){0,1}-(add){0,1}-rsqrt-mul-(type_as){0,1}"}},
      {"torch_npu.npu_swiglu",
       "CANN 7.0.0",
       {"(slice|chunk)-silu-mul", "(slice|chunk)-mul-silu", "(slice|chunk)-sigmoid-mul-mul",
        "(slice|chunk)-mul-sigmoid-mul", "(slice|chunk)-mul-mul-sigmoid"}},
      {"torch_npu.npu_geglu", "CANN 8.0.RC1", {"(slice|chunk)-gelu-mul", "(slice|chunk)-mul-gelu"}},
      {"torch_npu.npu_group_norm_silu", "CANN 8.0.RC1", {"group_norm-silu"}},
      {"torch.addmm", "CANN 8.0.RC1", {"mul-mul-add"}},
      {"torch_npu.npu_add_layer_norm", "CANN 8.0.RC1", {"add-layer_norm"}},
      {"mindspeed.ops.npu_matmul_add", "CANN 8.0.RC3", {"matmul-add"}},
      {"mindspeed.ops.npu_moe_token_permute", "CANN 8.0.RC3", {"argsort-argsort-index_select"}},
      {"mindspeed.ops.npu_moe_token_unpermute", "CANN 8.0.RC3", {"index_select-mul-reduce_sum"}},
  };
  CompleteAscendCosts(model);
}

}  // namespace opscope::analyze
