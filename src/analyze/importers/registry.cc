// The importers opscope has, one line each, in the order they are tried: the
// only place a new importer is registered.
#include "analyze/importer.h"
#include "analyze/importers/ascend/db_importer.h"
#include "analyze/importers/ascend/kernel_details_importer.h"
#include "analyze/importers/ascend/task_time_importer.h"
#include "analyze/importers/chrome_json/chrome_json_importer.h"

namespace opscope::analyze {

const std::vector<Importer>& Importers() {
  static const std::vector<Importer> importers = {
      ChromeJsonImporter(),
      KernelDetailsImporter(),
      AscendDbImporter(),
      TaskTimeImporter(),
  };
  return importers;
}

}  // namespace opscope::analyze
