// Analysis pass "fusion": Which producer-consumer pairs could be fused?
//
// A pair is a candidate only when the data shows that the consumer reads the
// producer's output: the producer is a matmul or convolution operator (the
// outermost of a nest such as aten::linear > aten::addmm), the consumer an
// elementwise operator that is the next operator under the same parent on the
// same thread, and one of the consumer's recorded input shapes is the
// producer's output shape (matmul family: exact; convolution: batch and output
// channels) with the same element type. Without recorded shapes no pair is
// claimed. Two kernels of one operator (one library algorithm) are never a pair.
#ifndef OPSCOPE_ANALYZE_PASSES_FUSION_H_
#define OPSCOPE_ANALYZE_PASSES_FUSION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/links.h"
#include "analyze/passes/pass.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

struct FusionCandidate {
  std::string producer, consumer;  // operators
  std::string shape;               // the tensor passed between them, "[64, 4096]"
  int64_t count = 0;
  // What fusion could save at most: the consumers' device time (the kernels
  // they launched) on a device trace, their host time on a CPU trace.
  int64_t consumer_ns = 0;
};

// Pairs seen at least 3 times, the largest saving first, at most 10.
std::vector<FusionCandidate> ComputeFusionCandidates(const TraceModel& model);
std::vector<FusionCandidate> ComputeFusionCandidates(const TraceModel& model,
                                                     const EventLinks& links);

// Shapes as recorded ("[[64, 3, 224, 224], [64], []]", compact or indented over
// lines as PyTorch 2 writes them); empty when unparsable (nested lists included).
std::vector<std::vector<int64_t>> ParseShapes(std::string_view json);
// Types as recorded ("[\"float\", \"c10::Half\", \"\"]").
std::vector<std::string> ParseTypes(std::string_view json);

// Its entry in the pass table (with its table and rule); its result is its
// slot of Analysis::results.
inline constexpr std::string_view kFusionPass = "fusion";
Pass FusionPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_FUSION_H_
