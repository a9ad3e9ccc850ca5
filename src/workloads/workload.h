// Built-in workloads for `opscope monitor`: a named operator run back to back on
// a Device until told to stop, each call recorded as a traced operator.
#ifndef OPSCOPE_WORKLOADS_WORKLOAD_H_
#define OPSCOPE_WORKLOADS_WORKLOAD_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "devices/device.h"

namespace opscope::workloads {

struct WorkloadSpec {
  std::string kind;  // "matmul"
  int64_t size = 0;
  devices::DType dtype = devices::DType::kF32;
  std::string Describe() const;
};

// "matmul:4096" or "matmul:2048:bf16"; throws Error(kInvalidArgument).
WorkloadSpec ParseWorkload(const std::string& text);

struct WorkloadResult {
  int64_t operations = 0;
  double flops = 0;
  double seconds = 0;
};

// Runs until `stop`; each operation is an OPSCOPE_SCOPE_DYN scope (category
// cpu_op, with shapes, dtype and FLOPs), so a trace of the run shows every call.
WorkloadResult RunWorkload(devices::Device& device, const WorkloadSpec& spec,
                           const std::atomic<bool>& stop);

}  // namespace opscope::workloads

#endif  // OPSCOPE_WORKLOADS_WORKLOAD_H_
