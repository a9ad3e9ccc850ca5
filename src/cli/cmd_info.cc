// `opscope info`: the machine, the device, its theoretical peaks and how they
// were derived (suite::DeviceInfo).
#include "cli/common.h"
#include "cli/device_options.h"
#include "suite/device_steps.h"

namespace opscope::cli {

void RegisterInfo(CLI::App& app) {
  auto common = std::make_shared<CommonOptions>();
  CLI::App* sub = app.add_subcommand("info", "show the device, its ceilings and the machine");
  AddCommonOptions(*sub, *common, "write the output to this file");
  sub->callback([common] { EmitStep(*common, "info", suite::DeviceInfo(*OpenDevice(*common))); });
}

}  // namespace opscope::cli
