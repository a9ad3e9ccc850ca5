// Importer for torch_npu's kernel_details.csv: one device task per row (name,
// type, accelerator core, start and duration in microseconds, stream). The CSV
// follows RFC 4180; start times are quoted with a trailing tab; absent values
// are "N/A".
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_KERNEL_DETAILS_IMPORTER_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_KERNEL_DETAILS_IMPORTER_H_

#include "analyze/importer.h"
#include "analyze/source.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

// Its entry in the importer table.
Importer KernelDetailsImporter();

// True when the header line names the Name, Start Time(us) and Duration(us) columns.
bool SniffKernelDetails(Source& source);
// Throws Error(kInvalidInput) naming the line and column of a bad value.
void ImportKernelDetails(Source& source, TraceModel& model);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_KERNEL_DETAILS_IMPORTER_H_
