// The one table of devices' theoretical peaks: dense FLOP/s per data type and
// memory bandwidth of every GPU and NPU opscope knows, each entry with its
// source. The roofline of a trace (analyze/passes/roofline.h) and the CUDA
// backend's `opscope info` (devices/cuda/cuda_peaks.h) both read it, so a
// device is judged against the figures it is shown with.
#ifndef OPSCOPE_CORE_DATASHEET_H_
#define OPSCOPE_CORE_DATASHEET_H_

#include <string_view>
#include <utility>
#include <vector>

namespace opscope::core {

struct Datasheet {
  std::string_view vendor;  // "NVIDIA", "AMD", "Huawei"
  std::string_view part;    // "H200 NVL": the variant the figures are for
  // Every one of these appears in a device name the entry is for
  // (case-sensitive, as drivers and profilers write them); entries are tried
  // in order, the more specific variant first.
  std::vector<std::string_view> match;
  // Dense TFLOP/s (no sparsity) per data type: "fp32", "tf32", "bf16",
  // "fp16", "fp64", "int8"; tensor-core (matrix) rates where the device has
  // them.
  std::vector<std::pair<std::string_view, double>> tflops;
  double memory_tbps = 0;       // TB/s of 10^12 bytes
  std::string_view source;      // where the figures come from, in words
  bool low_confidence = false;  // third-party figures, not the vendor's
  // The compute cores' clock (MHz) the tflops figures are worked out at,
  // where `source` states it; 0 where it does not.
  double core_mhz = 0;
};

// Every entry, in the order they are tried.
const std::vector<Datasheet>& Datasheets();

// The first entry whose match strings all appear in `device_name`; nullptr
// for a device the table does not hold.
const Datasheet* FindDatasheet(std::string_view device_name);

}  // namespace opscope::core

#endif  // OPSCOPE_CORE_DATASHEET_H_
