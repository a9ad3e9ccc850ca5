// rocprofv3's CSV output, its default format (rocprofiler-sdk's
// using-rocprofv3 guide, "Output formats": "CSV (Default)"; ROCm 7 made the
// rocpd database the default): one file per kind of record, each named
// PREFIX + kind + ".csv", PREFIX the process id and '_' ("238_kernel_trace.csv")
// or the --output-file name, and `rocpd convert -f csv`'s "out_" the same way.
// The columns are read by their header names, as the guide's "Output file
// fields" and the tool's generateCSV.cpp name them; releases add columns
// (Stream_Id, Accum_VGPR_Count, a leading Guid) and write an agent either as
// its number or as "Agent N" (--agent-index): both are read.
//
// The timeline is PREFIX kernel_trace.csv (Kind, Agent_Id, Queue_Id,
// Kernel_Name, Correlation_Id, Start_Timestamp, End_Timestamp in ns); the same
// prefix's memory_copy_trace.csv, hip_api_trace.csv, marker_api_trace.csv,
// rccl_api_trace.csv and agent_info.csv come with it (the finder's Beside) and
// their readers add their records to the model: copies on their GPU's copy
// lane, HIP and RCCL calls on their threads (linked to the kernels by
// Correlation_Id), ROCTx ranges as annotations (an iteration's as a step),
// and each GPU agent's product name. A folder of several processes' files is
// read as one rank per process; the output folder above rocprofv3's
// HOSTNAME folders (its default layout, for any of its three formats) too.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ROCPROF_ROCPROF_CSV_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ROCPROF_ROCPROF_CSV_H_

#include <vector>

#include "analyze/importer.h"
#include "analyze/side_files.h"
#include "analyze/trace_inputs.h"

namespace opscope::analyze {

Importer RocprofCsvImporter();
TreeFinder RocprofCsvFinder();
std::vector<SideFileReader> RocprofCsvSideFileReaders();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ROCPROF_ROCPROF_CSV_H_
