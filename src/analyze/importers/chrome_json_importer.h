// Importer for Chrome-trace JSON as four tools write it: opscope, PyTorch/Kineto
// (CUDA and ROCm), PyTorch without Kineto (plain X events, pid "CPU functions"),
// and torch_npu's trace_view.json (a bare array, string timestamps, processes
// Python / CANN / Ascend Hardware / Overlap Analysis). Files may be gzip.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_CHROME_JSON_IMPORTER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_CHROME_JSON_IMPORTER_H_

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "analyze/trace_model.h"

namespace opscope::analyze {

// True when the (decompressed) head of a file looks like Chrome-trace JSON.
bool SniffChromeJson(std::string_view head);

struct ImportOptions {
  int threads = 0;                       // parsing threads; 0: one per core, at most 8
  size_t chunk_bytes = size_t{8} << 20;  // bytes read and scanned at a time
};

// Fills `model` (the same for any thread count); throws Error(kInvalidInput)
// naming the file and byte offset of the first problem in file order.
void ImportChromeJson(const std::filesystem::path& path, TraceModel& model,
                      const ImportOptions& options = {});

// The largest time or duration accepted, in nanoseconds (about 126 years): any
// sum or difference of two stays within int64.
constexpr int64_t kMaxTimeNs = 4000000000000000000;

// Microseconds as JSON writes them ("12", "12.3456", "1.2e3", or the same in a
// string) to integer nanoseconds, exactly when there are at most 3 decimals.
bool MicrosToNs(std::string_view text, int64_t& ns);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_CHROME_JSON_IMPORTER_H_
