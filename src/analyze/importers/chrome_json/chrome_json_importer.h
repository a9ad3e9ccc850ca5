// Importer for Chrome-trace JSON as four tools write it: opscope, PyTorch/Kineto
// (CUDA and ROCm), PyTorch without Kineto (plain X events, pid "CPU functions"),
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

struct ImportOptions {
  int threads = 0;  // parsing threads; 0: one per core, at most 8
  // Bytes read and scanned at a time; 0: by the input's size, 1/256 of it
  // between 256 KiB and 4 MiB (each parsing thread holds a chunk: a small trace
  // does not pay for a large one's buffers), 4 MiB when the size is unknown.
  size_t chunk_bytes = 0;
};

// Fills `model` (the same for any thread count); throws Error(kInvalidInput)
// naming the file and byte offset of the first problem in file order.
void ImportChromeJson(Source& source, TraceModel& model, const ImportOptions& options = {});
void ImportChromeJson(const std::filesystem::path& path, TraceModel& model,
                      const ImportOptions& options = {});

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_CHROME_JSON_CHROME_JSON_IMPORTER_H_
