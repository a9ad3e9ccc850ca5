// Profiling an unmodified program through a backend's injection library (CUDA:
// CUPTI, loaded by the driver from CUDA_INJECTION64_PATH), which writes one
// trace per process that used the device. TraceProgram runs the program with
// the library injected, waits for it (SIGINT and SIGTERM go to the program,
// not to us, so its trace is still collected) and moves the traces into place.
#ifndef OPSCOPE_DEVICES_TRACE_PROGRAM_H_
#define OPSCOPE_DEVICES_TRACE_PROGRAM_H_

#include <filesystem>
#include <string>
#include <vector>

namespace opscope::devices {

struct TraceProgramOptions {
  std::string backend = "cuda";
  std::vector<std::string> argv;  // the program and its arguments
  std::filesystem::path out;      // the program's trace (.json or .json.gz)
};

struct TraceProgramResult {
  int exit_status = 0;  // the program's (128 + signal when it was killed)
  std::string outcome;  // "" when it exited 0, else how it ended
  // The program's own trace first, then those of its children that used the
  // device (OUT_STEM.PID.json).
  std::vector<std::filesystem::path> written;
};

// Throws Error(kUnsupported) when the backend cannot load or has no injection
// library, Error(kInvalidArgument) when the program cannot run, and
// Error(kFailedPrecondition) saying why when it wrote no trace.
TraceProgramResult TraceProgram(const TraceProgramOptions& options);

}  // namespace opscope::devices

#endif  // OPSCOPE_DEVICES_TRACE_PROGRAM_H_
