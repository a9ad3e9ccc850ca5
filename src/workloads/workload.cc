#include "workloads/workload.h"

#include <fmt/format.h>

#include "core/clock.h"
#include "core/text.h"
#include "opscope/opscope.h"
#include "workloads/data.h"
#include "workloads/operators.h"

namespace opscope::workloads {

std::string WorkloadSpec::Describe() const {
  return fmt::format("{}:{}:{}", kind, size, devices::Name(dtype));
}

WorkloadSpec ParseWorkload(const std::string& text) {
  WorkloadSpec spec;
  const auto fail = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument, "--workload '" + core::EscapeForTerminal(text) +
                                                  "': " + why +
                                                  " (example: matmul:4096 or matmul:2048:bf16)");
  };
  const auto first = text.find(':');
  spec.kind = text.substr(0, first);
  if (spec.kind != "matmul")
    throw fail("unknown workload '" + core::EscapeForTerminal(spec.kind) + "'");
  if (first == std::string::npos) throw fail("missing the size");
  const auto second = text.find(':', first + 1);
  const std::string size =
      text.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1);
  if (size.empty() || size.size() > 6 ||
      size.find_first_not_of("0123456789") != std::string::npos) {
    throw fail("the size must be a positive integer up to 999999");
  }
  spec.size = std::stoll(size);
  if (spec.size == 0) throw fail("the size must be positive");
  if (second != std::string::npos) spec.dtype = devices::ParseDType(text.substr(second + 1));
  return spec;
}

WorkloadResult RunWorkload(devices::Device& device, const WorkloadSpec& spec,
                           const std::atomic<bool>& stop) {
  // The device's first matmul library: oneDNN on the CPU, cuBLAS on a GPU.
  const devices::MatmulSpec mm{spec.size, spec.size, spec.size, spec.dtype,
                               device.MatmulImpls().front()};
  CheckMemory(device, "workload " + spec.Describe(), MatmulBytes(mm));
  const size_t elements = static_cast<size_t>(spec.size * spec.size);
  devices::Buffer a(device, elements * devices::SizeOf(spec.dtype));
  devices::Buffer b(device, elements * devices::SizeOf(spec.dtype));
  devices::Buffer c(device, elements * sizeof(float));
  FillRandomOn(device, a.data(), elements, spec.dtype);
  FillRandomOn(device, b.data(), elements, spec.dtype);
  auto kernel = device.CreateMatmul(mm, a.data(), b.data(), c.as<float>());
  const std::string shapes = fmt::format("[[{0},{0}],[{0},{0}]]", spec.size);
  const int64_t flops = 2 * spec.size * spec.size * spec.size;
  const int64_t bytes =
      static_cast<int64_t>(elements * (2 * devices::SizeOf(spec.dtype) + sizeof(float)));
  WorkloadResult result;
  const int64_t start = core::MonotonicNs();
  while (!stop.load(std::memory_order_relaxed)) {
    OPSCOPE_SCOPE_DYN("matmul", ScopeArgs{.shapes = shapes,
                                          .dtype = devices::Name(spec.dtype),
                                          .flops = flops,
                                          .bytes = bytes,
                                          .category = "cpu_op"});
    kernel->Run();
    device.Synchronize();
    ++result.operations;
  }
  result.seconds = static_cast<double>(core::MonotonicNs() - start) / 1e9;
  result.flops = static_cast<double>(flops) * static_cast<double>(result.operations);
  return result;
}

}  // namespace opscope::workloads
