// A small trace model built event by event, whose answers the analysis tests
// know by construction.
#ifndef OPSCOPE_TESTS_ANALYZE_MODEL_BUILDER_H_
#define OPSCOPE_TESTS_ANALYZE_MODEL_BUILDER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "analyze/trace_model.h"

namespace opscope::analyze::model_builder {

class Builder {
 public:
  Builder& Add(EventClass cls, std::string_view name, int64_t begin_us, int64_t end_us,
               int64_t bytes = -1) {
    model.Append(EventRow{.start_ns = begin_us * 1000,
                          .duration_ns = (end_us - begin_us) * 1000,
                          .name = model.Intern(name),
                          .track = model.TrackFor(IsDevice(cls) ? "0" : "1", "1"),
                          .cls = cls,
                          .bytes = bytes,
                          .correlation = next_correlation,
                          .kind = model.Intern(kind),
                          .external_id = next_external});
    return *this;
  }
  // The External id of the events added next (-1: none).
  Builder& External(int64_t id) {
    next_external = id;
    return *this;
  }
  Builder& Correlate(int64_t id) {
    next_correlation = id;
    return *this;
  }
  // The last event added is a copy of this direction and host memory.
  Builder& Copy(CopyDirection direction, HostMemory memory = HostMemory::kUnknown) {
    model.copy.Set(model.size() - 1, CopyInfo{direction, memory}.Packed());
    return *this;
  }
  Builder& Kind(std::string_view k) {
    kind = std::string(k);
    return *this;
  }
  TraceModel model;
  int64_t next_correlation = -1;
  int64_t next_external = -1;
  std::string kind;
};

}  // namespace opscope::analyze::model_builder

#endif  // OPSCOPE_TESTS_ANALYZE_MODEL_BUILDER_H_
