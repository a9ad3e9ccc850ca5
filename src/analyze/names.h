// What an event's name says it is: layout conversion, communication,
// synchronization, data loading. Each test is evaluated once per distinct
// (interned) name of a model.
#ifndef OPSCOPE_ANALYZE_NAMES_H_
#define OPSCOPE_ANALYZE_NAMES_H_

#include <string>
#include <string_view>
#include <vector>

#include "analyze/trace_model.h"

namespace opscope::analyze {

// TransData, contiguous, permute/transpose, copy_/clone and format casts.
bool IsLayoutConversion(std::string_view name);
bool IsCommunication(std::string_view name);
// On a lower-cased name: waits and synchronizations, data loading.
bool IsSyncName(const std::string& lower);
bool IsDataName(const std::string& lower);

std::string Lower(std::string_view s);
bool Contains(const std::string& haystack, std::string_view needle);

// A name test evaluated once per distinct (interned) name of the model.
std::vector<bool> ClassifyNames(const TraceModel& model, bool (*test)(std::string_view));

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_NAMES_H_
