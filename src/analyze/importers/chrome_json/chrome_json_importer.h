// Importer for Chrome-trace JSON as four tools write it: opscope, PyTorch/Kineto
// (CUDA and ROCm), PyTorch without Kineto (plain X events, pid "CPU functions";
// with use_cuda=True, "CUDA functions" and cpu_to_cuda flows),
// and torch_npu's trace_view.json (a bare array, string timestamps, processes
// Python / CANN / Ascend Hardware / Overlap Analysis), from any Source.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_CHROME_JSON_CHROME_JSON_IMPORTER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_CHROME_JSON_CHROME_JSON_IMPORTER_H_

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "analyze/importer.h"
#include "analyze/source.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

// Its entry in the importer table.
Importer ChromeJsonImporter();

// True when the source looks like Chrome-trace JSON: an object with a
// top-level "traceEvents" (or Kineto's "schemaVersion") member, or an array
// whose first element is an event object. Reads as far as that takes (up to
// kMaxPeekBytes), so metadata of any size may come before the events.
bool SniffChromeJson(Source& source);

// Fills `model` (the same for any thread count); throws Error(kInvalidInput)
// naming the file and byte offset of the first problem in file order.
void ImportChromeJson(Source& source, TraceModel& model, const ImportOptions& options = {});
void ImportChromeJson(const std::filesystem::path& path, TraceModel& model,
                      const ImportOptions& options = {});

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_CHROME_JSON_CHROME_JSON_IMPORTER_H_
