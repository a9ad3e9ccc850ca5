// Importer for torch_npu's kernel_details.csv: one device task per row (name,
// type, accelerator core, start and duration in microseconds, stream; shapes,
// data types and formats, each "inputs->outputs" (";" between tensors), where
// the level writes them). The CSV
// follows RFC 4180; start times are quoted with a trailing tab; absent values
// are "N/A".
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_KERNEL_DETAILS_IMPORTER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_KERNEL_DETAILS_IMPORTER_H_

#include <optional>
#include <string>
#include <string_view>

#include "analyze/importer.h"
#include "analyze/importers/ascend/ai_core.h"
#include "analyze/source.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

// Its entry in the importer table.
Importer KernelDetailsImporter();

// True when the header line names the Name, Start Time(us) and Duration(us) columns.
bool SniffKernelDetails(Source& source);

// The AI Core pipeline (ai_core.h) built in the same pass as the tasks, so a
// large file is read once: `l2_cache` (may be null) is read first (when it
// cannot be, `l2_error` says why and the table has no L2 rates); `table` is
// the result, or `error` says why there is none (a PMU figure that is not a
// share of cycles: the tasks are imported all the same).
struct KernelDetailsPipeline {
  Source* l2_cache = nullptr;
  std::optional<PipeTable> table;
  std::string error, l2_error;
};

// Throws Error(kInvalidInput) naming the line and column of a bad value (the
// first in file order). Runs of records are parsed at once (`options`); the
// model and the pipeline are the same for any thread count.
void ImportKernelDetails(Source& source, TraceModel& model,
                         KernelDetailsPipeline* pipeline = nullptr,
                         const ImportOptions& options = {});

// Input Shapes without the pair of quotes the CSV writers keep; "" for N/A.
std::string AscendShapes(std::string_view text);
// "in->out" of a pair of columns (data types, formats); "?" for a side that is
// N/A; "" when both are.
std::string AscendInOut(std::string_view in, std::string_view out);

// Copies the shapes, data types, formats and core type of kernel_details.csv's
// rows onto the device events of a timeline read from trace_view.json that have
// the same name and start time (torch_npu writes both files from the same
// tasks), where the timeline lacks them. Returns how many events matched. The
// AI Core pipeline is built in the same pass when `pipeline` is given.
size_t EnrichFromKernelDetails(Source& kernel_details, TraceModel& model,
                               KernelDetailsPipeline* pipeline = nullptr);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_KERNEL_DETAILS_IMPORTER_H_
