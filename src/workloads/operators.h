// Operator benchmarks written once against Device: matmul and conv2d.
#ifndef OPSCOPE_WORKLOADS_OPERATORS_H_
#define OPSCOPE_WORKLOADS_OPERATORS_H_

#include <map>
#include <string>
#include <vector>

#include "devices/device.h"
#include "workloads/data.h"
#include "workloads/progress.h"
#include "workloads/runner.h"

namespace opscope::workloads {

// Ceilings the results are set against, by dtype name, with their provenance.
struct FlopsCeilings {
  std::map<std::string, double> flops_per_second;
  std::string source;  // "measured now: ...", "ceilings.json (...)"
};

enum class Status { kOk, kWaived, kFailed };
const char* Name(Status status);

struct OperatorResult {
  std::string key;  // stable: "matmul_fp32_onednn_4096x4096x4096"
  Status status = Status::kOk;
  std::string reason;  // why waived or failed
  Stats stats;
  double flops = 0;
  double flops_per_second = 0;
  double pct_peak = -1;     // of the theoretical peak; -1 when unknown
  double pct_ceiling = -1;  // of the measured ceiling; -1 when unknown
  Verification verification;
  std::string implementation;
  int rotation_sets = 1;
  // The type the device wrote the result in before it was read back as fp32
  // (Kernel::OutputType): bf16 or fp16 where aclnn writes the inputs' type.
  devices::DType output_type = devices::DType::kF32;
  std::string note;
  // Doubts (FlagDoubts): a rate above the ceiling or peak it is rated against
  // contradicts that bound; a wide spread of the timings is noise.
  bool inconsistent = false;
  bool noisy = false;
};

// Sets `inconsistent` (above 100 % of the measured ceiling or of the theoretical
// peak) and `noisy`, and adds notes that say why; never calls a figure above
// its bound close to it.
void FlagDoubts(OperatorResult& r);

// "inconsistent", "noisy", both, or empty: the flags column of the tables.
std::string DoubtFlags(const OperatorResult& r);

// Rates `r` against the peaks and `ceilings` and writes its notes anew, as the
// measurement does (used again after a ceiling was re-measured).
void Conclude(OperatorResult& r, const devices::Device& device, devices::DType dtype,
              const FlopsCeilings& ceilings);

struct MatmulResult : OperatorResult {
  devices::MatmulSpec spec;
};

struct Conv2dResult : OperatorResult {
  std::string config;
  devices::Conv2dSpec spec;
  int64_t macs = 0;
};

// Bytes one buffer set of a case needs (inputs and output).
uint64_t MatmulBytes(const devices::MatmulSpec& spec);
uint64_t Conv2dBytes(const devices::Conv2dSpec& spec);

// Throws Error(kResourceExhausted) stating need and availability when the
// largest case does not fit, before anything runs.
void CheckMemory(devices::Device& device, const std::string& what, uint64_t bytes);

std::vector<MatmulResult> RunMatmul(devices::Device& device,
                                    const std::vector<devices::MatmulSpec>& specs,
                                    const RunnerOptions& runner, const FlopsCeilings& ceilings,
                                    Progress& progress);

std::vector<Conv2dResult> RunConv2d(
    devices::Device& device,
    const std::vector<std::pair<std::string, devices::Conv2dSpec>>& configs,
    const RunnerOptions& runner, const FlopsCeilings& ceilings, Progress& progress);

// Parses a convolution in benchdnn's notation, e.g. "mb16ic64ih56oc64kh3sh1"
// (iw, kw, sw default to ih, kh, sh; padding defaults to "same": (k-1)/2; g is
// groups). Throws Error(kInvalidArgument) naming the bad part.
devices::Conv2dSpec ParseConv2d(const std::string& text);
std::string FormatConv2d(const devices::Conv2dSpec& spec);

}  // namespace opscope::workloads

#endif  // OPSCOPE_WORKLOADS_OPERATORS_H_
