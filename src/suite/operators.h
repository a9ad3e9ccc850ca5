// The operator benchmarks as steps: matmul and conv2d sweeps (time, FLOP/s, %
// of peak and of the measured ceiling, verification) and the measured ceilings
// (`bench roofline`).
#ifndef OPSCOPE_SUITE_OPERATORS_H_
#define OPSCOPE_SUITE_OPERATORS_H_

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "devices/device.h"
#include "suite/step.h"
#include "workloads/operators.h"
#include "workloads/runner.h"

namespace opscope::suite {

struct MatmulOptions {
  std::vector<std::array<int64_t, 3>> shapes{
      {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}};
  std::vector<devices::DType> dtypes{devices::DType::kF32, devices::DType::kBF16};
  std::vector<std::string> impls;  // empty: every implementation the device has
  std::string ceilings_file;       // empty: the FMA-loop ceiling measured now
  workloads::RunnerOptions runner;
};
// Throws Error(kInvalidArgument) for an implementation the device does not have,
// Error(kResourceExhausted) for a case that cannot fit in its memory.
StepOutput Matmul(devices::Device& device, const MatmulOptions& options);

// A ceiling is an upper bound: a result above a ceiling measured now means the
// ceiling was measured too low (under load, say). Each such ceiling is measured
// once more, longer (the higher of the two is kept, and `ceilings.source` says
// so), and the results of its dtype are rated again; what is still above it
// stays flagged inconsistent (workloads::FlagDoubts). Ceilings from a file
// (`ceilings_file` not empty) are the user's and are not re-measured.
struct RatedResult {
  workloads::OperatorResult* result;
  devices::DType dtype;
};
void RemeasureCeilingsBelowResults(devices::Device& device, const std::string& ceilings_file,
                                   workloads::FlopsCeilings& ceilings,
                                   const std::vector<RatedResult>& results);

// "1024,2048" (N x N x N) or "MxNxK" items; throws Error(kInvalidArgument) naming --sizes.
std::vector<std::array<int64_t, 3>> ParseMatmulShapes(const std::string& text);
// "fp32,bf16"; throws Error(kInvalidArgument) naming --dtype.
std::vector<devices::DType> ParseDTypes(const std::string& text);

struct Conv2dOptions {
  // (label, benchdnn-style config); empty: the field report's four.
  std::vector<std::pair<std::string, std::string>> configs;
  std::vector<devices::DType> dtypes{devices::DType::kF32};
  std::string ceilings_file;
  workloads::RunnerOptions runner;
};
StepOutput Conv2d(devices::Device& device, const Conv2dOptions& options);

struct RooflineOptions {
  std::string out = "ceilings.json";  // where the measured ceilings are written
  workloads::RunnerOptions runner;
};
StepOutput Roofline(devices::Device& device, const RooflineOptions& options);

}  // namespace opscope::suite

#endif  // OPSCOPE_SUITE_OPERATORS_H_
