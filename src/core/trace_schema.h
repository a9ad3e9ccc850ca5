// The keys of opscope's trace format, declared once: the writer (collect/)
// emits them and the importers (analyze/) read them, so a key cannot be written
// under one spelling and read under another. Kineto's own argument names that
// opscope reads are here too, since the analyses depend on their spelling.
#ifndef OPSCOPE_CORE_TRACE_SCHEMA_H_
#define OPSCOPE_CORE_TRACE_SCHEMA_H_

#include <string_view>

namespace opscope::core::trace_schema {

// Arguments ("args") of a complete event.
inline constexpr std::string_view kShapes = "shapes";  // operand shapes, "[[8,64,56,56]]"
inline constexpr std::string_view kDtype = "dtype";    // "fp32", "bf16", "tf32", "fp16"
inline constexpr std::string_view kFlops = "flops";    // floating-point operations (integer)
inline constexpr std::string_view kBytes = "bytes";    // bytes read plus written (integer)
inline constexpr std::string_view kLayout = "layout";  // operand memory layout, "nChw16c"
inline constexpr std::string_view kModule = "module";  // the model part, "layer1.0.conv1"
inline constexpr std::string_view kExternalId = "External id";   // operator -> its launches
inline constexpr std::string_view kCorrelation = "correlation";  // launch -> device work
// Kineto's record_shapes arguments and Ascend's task type.
inline constexpr std::string_view kInputDims = "Input Dims";
inline constexpr std::string_view kInputType = "Input type";
inline constexpr std::string_view kConcreteInputs = "Concrete Inputs";
inline constexpr std::string_view kTaskType = "Task Type";

// Every argument key above, for round-trip tests and documentation.
inline constexpr std::string_view kAllArgs[] = {
    kShapes,     kDtype,       kFlops,     kBytes,     kLayout,         kModule,
    kExternalId, kCorrelation, kInputDims, kInputType, kConcreteInputs, kTaskType};

// Members of the top-level object and of "otherData".
inline constexpr std::string_view kTraceEvents = "traceEvents";
inline constexpr std::string_view kOtherData = "otherData";
inline constexpr std::string_view kProducer = "producer";  // "opscope" in our traces
inline constexpr std::string_view kProducerOpscope = "opscope";
inline constexpr std::string_view kSchemaVersion = "schemaVersion";
inline constexpr std::string_view kBaseTimeNanoseconds = "baseTimeNanoseconds";
inline constexpr std::string_view kDisplayTimeUnit = "displayTimeUnit";
inline constexpr std::string_view kDeviceProperties = "deviceProperties";
inline constexpr std::string_view kDistributedInfo = "distributedInfo";

// The step spans every importer recognises (torch.profiler's and ours).
inline constexpr std::string_view kStepPrefix = "ProfilerStep#";

}  // namespace opscope::core::trace_schema

#endif  // OPSCOPE_CORE_TRACE_SCHEMA_H_
