// `opscope info`: the machine and device properties.
#include <fmt/format.h>

#include "cli/common.h"
#include "core/machine.h"

namespace opscope::cli {
namespace {

struct InfoCommand {
  CommonOptions common;

  void Run() const {
    CheckDevice(common.device);
    const core::MachineInfo& m = core::GetMachineInfo();
    report::ResultTable table;
    table.section = "machine";
    table.title = "Machine";
    table.columns = {{"property", "Property"}, {"value", "Value"}};
    table.AddRow({std::string("host"), m.host});
    table.AddRow({std::string("os"), m.os});
    table.AddRow({std::string("kernel"), m.kernel});
    table.AddRow({std::string("arch"), m.arch});
    table.AddRow({std::string("cpu_model"), m.cpu_model});
    table.AddRow({std::string("logical_cpus"), std::to_string(m.logical_cpus)});
    table.AddRow({std::string("memory"),
                  fmt::format("{:.1f} GiB", static_cast<double>(m.memory_bytes) / (1 << 30))});
    Emit(common, "info", {table});
  }
};

}  // namespace

void RegisterInfo(CLI::App& app) {
  auto command = std::make_shared<InfoCommand>();
  CLI::App* sub = app.add_subcommand("info", "show the machine and its devices");
  AddCommonOptions(*sub, command->common, "write the output to this file");
  sub->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
