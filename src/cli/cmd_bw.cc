// `opscope bw`: flags to the suite's bandwidth step.
#include "cli/common.h"
#include "cli/device_options.h"
#include "core/text.h"
#include "suite/device_steps.h"

namespace opscope::cli {
namespace {

struct BandwidthCommand {
  CommonOptions common;
  std::string types = "d2d,h2d,d2h,bidir";
  suite::BandwidthOptions options;

  void Run() {
    options.types = SplitList(types, "--type");
    for (const auto& t : options.types) {
      if (t != "d2d" && t != "h2d" && t != "d2h" && t != "bidir") {
        throw Error(ErrorCode::kInvalidArgument, "--type: unknown transfer '" +
                                                     core::EscapeForTerminal(t) +
                                                     "': use d2d, h2d, d2h, bidir");
      }
    }
    EmitStep(common, "bw", suite::Bandwidth(*OpenDevice(common), options));
  }
};

}  // namespace

void RegisterBandwidth(CLI::App& app) {
  auto command = std::make_shared<BandwidthCommand>();
  CLI::App* sub =
      app.add_subcommand("bw", "memory bandwidth: d2d, h2d, d2h, bidir over a size sweep");
  AddCommonOptions(*sub, command->common, "write the output to this file");
  sub->add_option("--type", command->types,
                  "transfer types, comma-separated (default d2d,h2d,d2h,bidir)");
  sub->add_option("--sizes", command->options.sizes,
                  "4K..1G (powers of four) or a list like 64K,1M,256M");
  sub->add_option("--min-reps", command->options.min_reps,
                  "minimum timed repetitions (default 10)");
  sub->add_option("--min-time", command->options.min_time_ms,
                  "minimum total timed ms per case (default 100)");
  sub->add_option("--max-time", command->options.max_time_ms,
                  "most timed ms per case, noisy repetitions included (default 15000)");
  sub->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
