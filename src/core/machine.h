// The machine context every output carries: where and on what a figure was measured.
#ifndef OPSCOPE_CORE_MACHINE_H_
#define OPSCOPE_CORE_MACHINE_H_

#include <cstdint>
#include <string>

namespace opscope::core {

struct MachineInfo {
  std::string host;
  std::string os;      // e.g. "Debian GNU/Linux 12 (bookworm)"
  std::string kernel;  // uname release
  std::string arch;
  std::string cpu_model;
  int logical_cpus = 0;  // the CPUs this process may run on
  uint64_t memory_bytes = 0;
};

// Reads /proc, /etc/os-release and uname once; cheap to call again.
const MachineInfo& GetMachineInfo();

std::string HostName();

// The `machine` object of every JSON output.
std::string MachineJson();

}  // namespace opscope::core

#endif  // OPSCOPE_CORE_MACHINE_H_
