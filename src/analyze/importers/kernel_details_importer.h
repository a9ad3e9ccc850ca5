// Importer for torch_npu's kernel_details.csv: one device task per row (name,
// type, accelerator core, start and duration in microseconds, stream). The CSV
// follows RFC 4180; start times are quoted with a trailing tab; absent values
// are "N/A".
#ifndef OPSCOPE_ANALYZE_IMPORTERS_KERNEL_DETAILS_IMPORTER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_KERNEL_DETAILS_IMPORTER_H_

#include <filesystem>
#include <string_view>

#include "analyze/trace_model.h"

namespace opscope::analyze {

bool SniffKernelDetails(std::string_view head);
// Throws Error(kInvalidInput) naming the line and column of a bad value.
void ImportKernelDetails(const std::filesystem::path& path, TraceModel& model);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_KERNEL_DETAILS_IMPORTER_H_
