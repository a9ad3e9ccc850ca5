// What the commands that run on a device share (device_options.cc): apart
// from common.h so that the programs without devices (opscope-scaleout) and
// the CLI's shared objects neither include nor link the device layers.
#ifndef OPSCOPE_CLI_DEVICE_OPTIONS_H_
#define OPSCOPE_CLI_DEVICE_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli/common.h"
#include "devices/device.h"
#include "suite/step.h"

namespace opscope::cli {

// Adds --device, --format, --out, --threads and --table to a subcommand.
void AddCommonOptions(CLI::App& app, CommonOptions& options, const std::string& out_help);

// Opens --device; throws Error(kUnsupported) for a device this build cannot use.
std::unique_ptr<devices::Device> OpenDevice(const CommonOptions& options);

// Emits a step's tables, then fails (exit 1) when some of its cases failed.
void EmitStep(const CommonOptions& options, const std::string& command,
              const suite::StepOutput& step);

}  // namespace opscope::cli

#endif  // OPSCOPE_CLI_DEVICE_OPTIONS_H_
