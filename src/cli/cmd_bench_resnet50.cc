// `opscope bench resnet50`: a ResNet-50 training iteration (or inference) on a
// device, per operator traced, with memory from the device's accounting.
#include <fmt/format.h>

#include <iostream>
#include <map>

#include "cli/common.h"
#include "core/machine.h"
#include "core/text.h"
#include "workloads/resnet50.h"

namespace opscope::cli {
namespace {

using report::Value;

double Mib(uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

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

  devices::Layout ParseLayout(const std::string& text) const {
    if (text == "blocked") return devices::Layout::kBlocked;
    if (text == "nchw") return devices::Layout::kNchw;
    if (text == "nhwc") return devices::Layout::kNhwc;
    throw Error(ErrorCode::kInvalidArgument,
                "--layout '" + core::EscapeForTerminal(text) + "': use nchw, nhwc or blocked");
  }

  void Run() const {
    if (mode != "train" && mode != "infer") {
      throw Error(ErrorCode::kInvalidArgument,
                  "--mode '" + core::EscapeForTerminal(mode) + "': use train or infer");
    }
    workloads::ResNetOptions options;
    options.shape.batch = batch;
    options.shape.image_size = image_size;
    options.training = mode == "train";
    options.dtype = devices::ParseDType(dtype);
    if (!layout.empty()) ParseLayout(layout);  // a bad value fails before any work
    options.warmup = warmup;
    options.iters = iters;
    options.trace_path = trace;
    std::vector<int> thread_counts;
    if (threads_sweep.empty()) {
      thread_counts.push_back(common.threads);
    } else {
      for (const auto& t : SplitList(threads_sweep, "--threads-sweep")) {
        if (t.empty() || t.size() > 4 || t.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(t) < 1) {
          throw Error(ErrorCode::kInvalidArgument,
                      "--threads-sweep '" + core::EscapeForTerminal(threads_sweep) +
                          "': thread counts are positive integers, e.g. 1,2");
        }
        thread_counts.push_back(std::stoi(t));
      }
      if (!trace.empty() && thread_counts.size() > 1) {
        throw Error(ErrorCode::kInvalidArgument,
                    "--trace records one run: give it without --threads-sweep");
      }
    }
    std::vector<workloads::ResNetResult> results;
    std::string device_id, used_layout;
    for (const int threads : thread_counts) {
      CommonOptions c = common;
      c.threads = threads;
      auto device = OpenDevice(c);
      device_id = device->properties().id;
      used_layout = !layout.empty()
                        ? layout
                        : devices::Name(device->properties().capabilities.network_layout);
      options.layout = ParseLayout(used_layout);
      if (!Collecting())
        std::cerr << fmt::format("opscope: bench resnet50: {} batch {} on {} ({} threads)...\n",
                                 mode, batch, device_id, device->properties().compute_units);
      results.push_back(workloads::RunResNet50(*device, options));
    }
    const int cores = core::GetMachineInfo().logical_cpus;
    const std::string what = fmt::format("ResNet-50 v1.5 {} on {}, batch {}, {}x{}, {}, {} layout",
                                         options.training ? "training" : "inference", device_id,
                                         batch, image_size, image_size, dtype, used_layout);

    report::ResultTable time;
    time.section = "resnet50";
    time.title = what + ": time per iteration";
    time.columns = {{"threads", "Threads"},
                    {"parameters", "Parameters", 0, false},
                    {"forward_ms", "Forward ms", 2},
                    {"backward_ms", "Backward ms", 2},
                    {"optimizer_ms", "Optimizer ms", 2},
                    {"iteration_ms", "Iteration ms", 2},
                    {"iteration_p10_ms", "p10 ms", 2},
                    {"iteration_p90_ms", "p90 ms", 2},
                    {"images_per_s", "Images/s", 1},
                    {"images_per_s_p10", "Images/s p10", 1},
                    {"images_per_s_p90", "Images/s p90", 1},
                    {"first_iteration_ms", "First ms", 1},
                    {"loss_first", "Loss first", 4, false},
                    {"loss_last", "Loss last", 4, false},
                    {"layout_conversions", "Reorders/iter"}};
    for (const auto& r : results) {
      time.AddRow({int64_t{r.threads}, r.parameters, r.forward.p50_ms,
                   options.training ? Value{r.backward.p50_ms} : Value{},
                   options.training ? Value{r.optimizer.p50_ms} : Value{}, r.iteration.p50_ms,
                   r.iteration.p10_ms, r.iteration.p90_ms, r.images_per_second.p50_ms,
                   r.images_per_second.p10_ms, r.images_per_second.p90_ms, r.first_iteration_ms,
                   static_cast<double>(r.first_loss), static_cast<double>(r.last_loss),
                   r.layout_conversions});
    }
    time.notes.push_back(fmt::format(
        "Medians of {} iterations after {} warm-up iterations (and the first, timed apart); "
        "the device is synchronized before every clock read. Images/s p10 comes from the p90 "
        "iteration time.",
        iters, warmup));
    for (const auto& r : results) {
      if (r.threads > cores) {
        time.notes.push_back(fmt::format(
            "{} threads on {} logical CPUs: more threads than cores time-share the cores and "
            "make every synchronizing operator wait for the slowest thread; latency gets worse.",
            r.threads, cores));
      }
    }
    if (!results.empty() && results[0].layout_conversions > 0 && used_layout == "blocked") {
      time.notes.push_back(
          "Reorders/iter counts layout conversions of activations and gradients; the network "
          "input (NCHW) is converted once to the first convolution's layout.");
    }

    const workloads::ResNetResult& r = results.back();
    report::ResultTable memory;
    memory.section = "resnet50_memory";
    memory.title =
        what +
        fmt::format(": memory ({} threads), from the device allocator's accounting", r.threads);
    memory.columns = {{"what", "What"}, {"bytes", "Bytes", 0, false}, {"mib", "MiB", 1}};
    const auto row = [&](const std::string& name, uint64_t bytes) {
      memory.AddRow({name, static_cast<int64_t>(bytes), Mib(bytes)});
    };
    row("parameters (fp32)", r.memory.parameters);
    row("buffers (BN running statistics, low-precision weight copies)", r.memory.buffers);
    row("gradients", r.memory.gradients);
    row("optimizer state (SGD momentum)", r.memory.optimizer_state);
    row("steady: held between iterations", r.steady_bytes);
    row("activations at peak", r.memory.activations_peak);
    row("workspace at peak", r.memory.workspace_peak);
    row("total peak", r.peak_bytes);
    if (r.steady_bytes > 0) {
      memory.notes.push_back(fmt::format(
          "Peak is {:.1f}x steady and {:.1f}x the weights alone. {}",
          static_cast<double>(r.peak_bytes) / static_cast<double>(r.steady_bytes),
          r.memory.parameters > 0
              ? static_cast<double>(r.peak_bytes) / static_cast<double>(r.memory.parameters)
              : 0.0,
          options.training
              ? "A training iteration keeps every layer's input (and the BN and pooling masks) "
                "from the forward pass until the backward pass has used it: activations grow "
                "with the batch and the image, weights do not."
              : "Inference frees each activation as soon as the next layers have read it."));
    }
    if (!r.trace_file.empty()) {
      memory.notes.push_back("Wrote the per-operator trace of the measured iterations to " +
                             core::EscapeForTerminal(r.trace_file) +
                             " (opscope analyze reads it).");
    }
    report::ResultTable impls;
    impls.section = "resnet50_implementations";
    impls.title = "Implementation of each layer's forward primitive";
    impls.columns = {{"layer", "Layer"}, {"implementation", "Implementation"}};
    std::map<std::string, int> counts;
    for (const auto& line : r.implementations) {
      const auto colon = line.find(": ");
      ++counts[line.substr(colon + 2)];
    }
    for (const auto& [impl, n] : counts) impls.AddRow({fmt::format("{} layers", n), impl});
    Emit(common, "bench resnet50", {time, memory, impls});
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
