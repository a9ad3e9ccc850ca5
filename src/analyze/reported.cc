#include "analyze/reported.h"

#include <algorithm>

namespace opscope::analyze {

int64_t ReportedStep::StepNs() const {
  if (computing_ns < 0 || comm_not_overlapped_ns < 0 || free_ns < 0) return -1;
  return computing_ns + comm_not_overlapped_ns + free_ns;
}

std::pair<int64_t, int64_t> ReportedCollective::Moved(std::string_view transport) const {
  int64_t bytes = 0, ns = 0;
  for (const ReportedTransfer& x : transfers) {
    const bool sdma = x.transport == "HCCS" || x.transport == "PCIE" || x.transport == "SIO";
    if (transport == "SDMA" ? sdma : x.transport == transport) bytes += x.bytes, ns += x.time_ns;
  }
  return {bytes, ns};
}

ReportedStepTotals SumReportedSteps(const std::vector<ReportedStep>& steps) {
  ReportedStepTotals t;
  const auto known = [](int64_t ns) { return std::max<int64_t>(ns, 0); };
  for (const ReportedStep& s : steps) {
    const int64_t ns = s.StepNs();
    if (ns <= 0 || s.comm_not_overlapped_ns < 0) continue;
    ++t.steps;
    t.step_ns += ns + known(s.preparing_ns);
    t.preparing_ns += known(s.preparing_ns);
    t.exposed_ns += s.comm_not_overlapped_ns;
    t.communication_ns += known(s.communication_ns);
    t.overlapped_ns += known(s.overlapped_ns);
    t.computing_ns += known(s.computing_ns);
    t.free_ns += known(s.free_ns);
  }
  return t;
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
