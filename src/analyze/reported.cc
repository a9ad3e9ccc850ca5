#include "analyze/reported.h"

namespace opscope::analyze {

int64_t ReportedStep::StepNs() const {
  if (computing_ns < 0 || comm_not_overlapped_ns < 0 || free_ns < 0) return -1;
  return computing_ns + comm_not_overlapped_ns + free_ns;
}

const char* Name(AiCorePipe pipe) {
  switch (pipe) {
    case AiCorePipe::kCube: return "cube";
    case AiCorePipe::kVector: return "vector";
    case AiCorePipe::kScalar: return "scalar";
    case AiCorePipe::kMte1: return "MTE1";
    case AiCorePipe::kMte2: return "MTE2";
    case AiCorePipe::kMte3: return "MTE3";
    case AiCorePipe::kFixpipe: return "fixpipe";
  }
  return "?";
}

}  // namespace opscope::analyze
