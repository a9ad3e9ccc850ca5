#include "core/datasheet.h"

#include <algorithm>

namespace opscope::core {

const std::vector<Datasheet>& Datasheets() {
  // NVIDIA's tensor-core figures are printed with sparsity: halved here.
  // fp64 is the tensor-core (matrix) rate where the device has one.
  static const std::vector<Datasheet> sheets = {
      {"NVIDIA",
       "H200 NVL",
       {"H200", "NVL"},
       {{"fp32", 60}, {"tf32", 417.5}, {"bf16", 835.5}, {"fp16", 835.5}, {"fp64", 60}},
       4.8,
       "NVIDIA H200 NVL datasheet (dense): 60 TFLOP/s fp32, 417.5 tf32, 835.5 bf16/fp16; 4.8 TB/s"},
      {"NVIDIA",
       "H200 SXM",
       {"H200"},
       {{"fp32", 67}, {"tf32", 494.5}, {"bf16", 989.5}, {"fp16", 989.5}, {"fp64", 67}},
       4.8,
       "NVIDIA H200 SXM datasheet (dense): 67 TFLOP/s fp32, 494.5 tf32, 989.5 bf16/fp16; 4.8 TB/s"},
      {"NVIDIA",
       "H100 NVL",
       {"H100", "NVL"},
       {{"fp32", 60}, {"tf32", 417.5}, {"bf16", 835.5}, {"fp16", 835.5}, {"fp64", 60}},
       3.9,
       "NVIDIA H100 NVL datasheet (dense): 60 TFLOP/s fp32, 417.5 tf32, 835.5 bf16/fp16; 3.9 TB/s"},
      {"NVIDIA",
       "H100 PCIe",
       {"H100", "PCIe"},
       {{"fp32", 51}, {"tf32", 378}, {"bf16", 756}, {"fp16", 756}, {"fp64", 51}},
       2.0,
       "NVIDIA H100 PCIe datasheet (dense): 51 TFLOP/s fp32, 378 tf32, 756 bf16/fp16; 2.0 TB/s"},
      {"NVIDIA",
       "H100 SXM",
       {"H100"},
       {{"fp32", 67}, {"tf32", 494.5}, {"bf16", 989.5}, {"fp16", 989.5}, {"fp64", 67}},
       3.35,
       "NVIDIA H100 SXM datasheet (dense): 67 TFLOP/s fp32, 494.5 tf32, 989.5 bf16/fp16; 3.35 "
       "TB/s"},
      {"NVIDIA",
       "A100 80GB",
       {"A100", "80GB"},
       {{"fp32", 19.5}, {"tf32", 156}, {"bf16", 312}, {"fp16", 312}, {"fp64", 19.5}},
       2.039,
       "NVIDIA A100 80GB SXM datasheet (dense): 19.5 TFLOP/s fp32, 156 tf32, 312 bf16/fp16; "
       "2.04 TB/s"},
      {"NVIDIA",
       "A100 40GB",
       {"A100"},
       {{"fp32", 19.5}, {"tf32", 156}, {"bf16", 312}, {"fp16", 312}, {"fp64", 19.5}},
       1.555,
       "NVIDIA A100 40GB datasheet (dense): 19.5 TFLOP/s fp32, 156 tf32, 312 bf16/fp16; 1.56 TB/s"},
      {"NVIDIA",
       "V100 SXM2",
       {"V100"},
       {{"fp32", 15.7}, {"fp16", 125}, {"fp64", 7.8}},
       0.9,
       "NVIDIA V100 SXM2 datasheet: 15.7 TFLOP/s fp32, 125 fp16 tensor; no bf16 or tf32; 900 GB/s"},
      {"AMD",
       "Instinct MI300X",
       {"MI300X"},
       {{"fp32", 163.4}, {"tf32", 653.7}, {"bf16", 1307.4}, {"fp16", 1307.4}, {"fp64", 163.4}},
       5.3,
       "AMD Instinct MI300X datasheet (dense): 163.4 TFLOP/s fp32 matrix, 653.7 tf32, 1307.4 "
       "bf16/fp16; 5.3 TB/s"},
      {"AMD",
       "Instinct MI250X",
       {"MI250X"},
       {{"fp32", 95.7}, {"bf16", 383}, {"fp16", 383}, {"fp64", 95.7}},
       3.2,
       "AMD Instinct MI250X datasheet: 95.7 TFLOP/s fp32 matrix, 383 bf16/fp16; 3.2 TB/s"},
      {"AMD",
       "Instinct MI250",
       {"MI250"},
       {{"fp32", 90.5}, {"bf16", 362.1}, {"fp16", 362.1}, {"fp64", 90.5}},
       3.2,
       "AMD Instinct MI250 datasheet: 90.5 TFLOP/s fp32 matrix, 362.1 bf16/fp16; 3.2 TB/s"},
      // Huawei publishes few per-SKU figures; these are third-party, low
      // confidence (docs/formats: docs/formats/ascend.md, section 7). A run's own
      // info.json gives the AI Core peaks where it has one.
      {"Huawei",
       "Ascend 910B1",
       {"910B1"},
       {{"fp16", 378.88}, {"bf16", 378.88}, {"fp32", 189}},
       1.6,
       "Ascend 910B1, third-party figures (low confidence): 378.9 TFLOP/s fp16/bf16; 1.6 TB/s",
       true},
      {"Huawei",
       "Ascend 910B2",
       {"910B2"},
       {{"fp16", 353.89}, {"bf16", 353.89}, {"fp32", 177}},
       1.5,
       "Ascend 910B2, third-party figures (low confidence): 353.9 TFLOP/s fp16/bf16 (24 cube cores "
       "x 8192 FLOP/cycle x 1.8 GHz); 1.5 TB/s",
       true,
       1800},
      {"Huawei",
       "Ascend 910B3",
       {"910B3"},
       {{"fp16", 294.91}, {"bf16", 294.91}, {"fp32", 147}},
       1.2,
       "Ascend 910B3, third-party figures (low confidence): 294.9 TFLOP/s fp16/bf16 (20 cube cores "
       "x 8192 FLOP/cycle x 1.8 GHz); 1.2 TB/s",
       true,
       1800},
      {"Huawei",
       "Ascend 910B4",
       {"910B4"},
       {{"fp16", 270}, {"bf16", 270}, {"fp32", 135}},
       1.2,
       "Ascend 910B4, third-party figures (low confidence): 270 TFLOP/s fp16/bf16; 1.2 TB/s",
       true},
      {"Huawei",
       "Ascend 910B",
       {"910B"},
       {{"fp16", 294.91}, {"bf16", 294.91}, {"fp32", 147}},
       1.2,
       "Ascend 910B (variant not named; the 910B3's third-party figures, low confidence): 294.9 "
       "TFLOP/s fp16/bf16 (20 cube cores x 8192 FLOP/cycle x 1.8 GHz); 1.2 TB/s",
       true,
       1800},
  };
  return sheets;
}

const Datasheet* FindDatasheet(std::string_view device_name) {
  for (const Datasheet& d : Datasheets()) {
    if (std::all_of(d.match.begin(), d.match.end(), [&](std::string_view part) {
          return device_name.find(part) != std::string_view::npos;
        })) {
      return &d;
    }
  }
  return nullptr;
}

}  // namespace opscope::core
