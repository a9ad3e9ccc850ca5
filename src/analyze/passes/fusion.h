// Analysis pass "fusion": Fusion candidates: a matmul or convolution followed back to back by an
// elementwise operator.
#ifndef OPSCOPE_ANALYZE_PASSES_FUSION_H_
#define OPSCOPE_ANALYZE_PASSES_FUSION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct FusionCandidate {
  std::string producer, consumer;  // e.g. a GEMM kernel followed by an elementwise one
  int64_t count = 0;
  int64_t consumer_ns = 0;  // time the consumers take: what fusion could save at most
};

// Back-to-back (within 5 us, same track) matmul/conv kernels or operators
// followed by an elementwise one, seen at least 3 times.
std::vector<FusionCandidate> ComputeFusionCandidates(const TraceModel& model);

// Its entry in the pass table.
Pass FusionPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_FUSION_H_
