// `opscope info`: the machine, the device, its theoretical peaks and how they
// were derived.
#include <fmt/format.h>

#include "cli/common.h"
#include "core/machine.h"

namespace opscope::cli {
namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : " ") + item;
  return out;
}

struct InfoCommand {
  CommonOptions common;

  void Run() const {
    const auto device = OpenDevice(common);
    const devices::DeviceProperties& p = device->properties();
    const core::MachineInfo& m = core::GetMachineInfo();
    report::ResultTable table;
    table.section = "device";
    table.title = "Device " + p.id + ": " + p.name;
    table.columns = {{"property", "Property"}, {"value", "Value"}};
    const auto add = [&](const std::string& k, const std::string& v) { table.AddRow({k, v}); };
    add("host", m.host);
    add("os", m.os + ", kernel " + m.kernel);
    add("device", p.id);
    add("name", p.name);
    add("microarchitecture", p.microarchitecture);
    add("cores_used", fmt::format("{} of {}", p.compute_units, p.compute_units_available));
    add("clock", fmt::format("{:.2f} GHz ({})", p.clock_ghz, p.clock_source));
    add("isa", Join(p.features));
    for (const auto& cache : p.caches) {
      add("cache_" + cache.name,
          fmt::format("{} KiB, shared by {} CPU(s)", cache.bytes >> 10, cache.shared_by));
    }
    add("memory", fmt::format("{:.1f} GiB", static_cast<double>(p.memory_bytes) / (1 << 30)));
    for (const auto& peak : p.peaks) {
      add(std::string("peak_") + devices::Name(peak.dtype),
          fmt::format("{:.1f} GFLOP/s theoretical: {}", peak.flops_per_second / 1e9, peak.formula));
    }
    add("libraries", p.runtime);
    table.notes.push_back(
        "Theoretical peaks assume every core at the listed clock; `opscope bench roofline` "
        "measures what the cores reach.");
    Emit(common, "info", {table});
  }
};

}  // namespace

void RegisterInfo(CLI::App& app) {
  auto command = std::make_shared<InfoCommand>();
  CLI::App* sub = app.add_subcommand("info", "show the device, its ceilings and the machine");
  AddCommonOptions(*sub, command->common, "write the output to this file");
  sub->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
