// `opscope bench resnet50`: flags to the suite's ResNet-50 step.
#include <fmt/format.h>

#include <iostream>

#include "cli/common.h"
#include "cli/device_options.h"
#include "core/text.h"
#include "suite/resnet50.h"

namespace opscope::cli {
namespace {

devices::Layout ParseLayout(const std::string& text) {
  if (text == "blocked") return devices::Layout::kBlocked;
  if (text == "nchw") return devices::Layout::kNchw;
  if (text == "nhwc") return devices::Layout::kNhwc;
  throw Error(ErrorCode::kInvalidArgument,
              "--layout '" + core::EscapeForTerminal(text) + "': use nchw, nhwc or blocked");
}

struct ResNet50Command {
  CommonOptions common;
  std::string mode = "train";
  int64_t batch = 8;
  int warmup = 2;
  int iters = 10;
  std::string dtype = "fp32";
  std::string layout;  // empty: the backend's choice (cpu: blocked, cuda: nchw)
  int64_t image_size = 224;
  std::string trace;
  std::string threads_sweep;

  void Run() const {
    if (mode != "train" && mode != "infer") {
      throw Error(ErrorCode::kInvalidArgument,
                  "--mode '" + core::EscapeForTerminal(mode) + "': use train or infer");
    }
    suite::ResNet50StepOptions options;
    options.network.shape.batch = batch;
    options.network.shape.image_size = image_size;
    options.network.training = mode == "train";
    options.network.dtype = devices::ParseDType(dtype);
    options.network.warmup = warmup;
    options.network.iters = iters;
    options.network.trace_path = trace;
    if (!layout.empty()) options.layout = ParseLayout(layout);
    options.thread_counts = {common.threads};
    if (!threads_sweep.empty()) {
      options.thread_counts.clear();
      for (const auto& t : SplitList(threads_sweep, "--threads-sweep")) {
        if (t.size() > 4 || t.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(t) < 1) {
          throw Error(ErrorCode::kInvalidArgument,
                      "--threads-sweep '" + core::EscapeForTerminal(threads_sweep) +
                          "': thread counts are positive integers, e.g. 1,2");
        }
        options.thread_counts.push_back(std::stoi(t));
      }
    }
    const auto open = [&](int threads) {
      CommonOptions c = common;
      c.threads = threads;
      auto device = OpenDevice(c);
      std::cerr << fmt::format("opscope: bench resnet50: {} batch {} on {} ({})...\n", mode, batch,
                               device->properties().id,
                               devices::ComputeUnitsText(device->properties()));
      return device;
    };
    EmitStep(common, "bench resnet50", suite::ResNet50(open, options));
  }
};

}  // namespace

void RegisterBenchResNet50(CLI::App& bench) {
  auto command = std::make_shared<ResNet50Command>();
  CLI::App* r = bench.add_subcommand(
      "resnet50", "ResNet-50 training or inference: per-phase time, images/s, memory");
  AddCommonOptions(*r, command->common, "write the output to this file");
  r->add_option("--mode", command->mode, "train or infer (default train)");
  r->add_option("--batch", command->batch, "images per iteration (default 8)");
  r->add_option("--warmup", command->warmup, "excluded iterations after the first (default 2)");
  r->add_option("--iters", command->iters, "measured iterations (default 10)");
  r->add_option("--dtype", command->dtype,
                "fp32 or bf16 (cpu), fp32 or tf32 (cuda: tf32 convolutions, PyTorch's default); "
                "default fp32");
  r->add_option("--layout", command->layout,
                "activation layout: blocked (the convolutions' choice; cpu default), nchw (cuda "
                "default) or nhwc");
  r->add_option("--image-size", command->image_size, "input height and width (default 224)");
  r->add_option("--trace", command->trace,
                "write a per-operator Chrome trace of the measured iterations to this file");
  r->add_option("--threads-sweep", command->threads_sweep,
                "thread counts to compare in one table, e.g. 1,2");
  r->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
