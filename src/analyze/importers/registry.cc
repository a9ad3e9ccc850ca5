// The importers, side-file readers and output-tree finders opscope has, one
// line each, in the order they are tried (importers, finders) or run
// (readers): the only place a new one is registered.
#include "analyze/importer.h"
#include "analyze/importers/ascend/db_importer.h"
#include "analyze/importers/ascend/kernel_details_importer.h"
#include "analyze/importers/ascend/output_trees.h"
#include "analyze/importers/ascend/profiler_info.h"
#include "analyze/importers/ascend/side_file_readers.h"
#include "analyze/importers/ascend/step_trace_time.h"
#include "analyze/importers/ascend/task_time_importer.h"
#include "analyze/importers/chrome_json/chrome_json_importer.h"
#include "analyze/importers/nsys/nsys_importer.h"
#include "analyze/importers/rocpd/rocpd_importer.h"
#include "analyze/importers/rocprof/rocprof_csv.h"
#include "analyze/importers/rocprof/rocprof_json_importer.h"
#include "analyze/importers/torch_memory/snapshot_importer.h"
#include "analyze/importers/xplane/xplane_importer.h"
#include "analyze/side_files.h"
#include "analyze/trace_inputs.h"

namespace opscope::analyze {

const std::vector<Importer>& Importers() {
  static const std::vector<Importer> importers = {
      // Each sniffer claims only its own format; those that look inside a
      // JSON object or an SQLite file come before the ones that would try it.
      XPlaneImporter(),  //
      TorchMemorySnapshotImporter(),
      RocprofJsonImporter(),  //
      ChromeJsonImporter(),   //
      KernelDetailsImporter(),
      RocprofCsvImporter(),
      RocpdImporter(),  //
      NsysImporter(),   //
      AscendDbImporter(),
      TaskTimeImporter(),
      StepTraceTimeImporter(),  // last: a rank with summaries and no timeline
  };
  return importers;
}

const std::vector<SideFileReader>& SideFileReaders() {
  static const std::vector<SideFileReader> readers = [] {
    std::vector<SideFileReader> all = AscendSideFileReaders();
    for (SideFileReader& r : RocprofCsvSideFileReaders()) all.push_back(std::move(r));
    for (SideFileReader& r : std::vector<SideFileReader>{
             ProfilerInfoReader(),
         }) {
      all.push_back(std::move(r));
    }
    return all;
  }();
  return readers;
}

const std::vector<TreeFinder>& TreeFinders() {
  static const std::vector<TreeFinder> finders = {
      AscendTreeFinder(),
      RocprofCsvFinder(),
  };
  return finders;
}

}  // namespace opscope::analyze
