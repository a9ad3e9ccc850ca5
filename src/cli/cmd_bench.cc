// `opscope bench matmul|conv2d|roofline`: flags to the suite's operator steps.
#include <optional>

#include "cli/common.h"
#include "cli/device_options.h"
#include "suite/operators.h"

namespace opscope::cli {
namespace {

struct RunnerFlags {
  int warmup = 2;
  int min_reps = 10;
  double min_time_ms = 400;
  double max_time_ms = -1;  // not given

  void Add(CLI::App& app) {
    app.add_option("--warmup", warmup, "excluded warm-up runs after the first (default 2)");
    app.add_option("--min-reps", min_reps, "minimum timed repetitions (default 10)");
    app.add_option("--min-time", min_time_ms, "minimum total timed milliseconds (default 400)");
    app.add_option("--max-time", max_time_ms,
                   "most timed milliseconds per case, noisy repetitions included (default 15000)");
  }
  workloads::RunnerOptions Options() const {
    return workloads::CheckedRunnerOptions(warmup, min_reps, min_time_ms, max_time_ms);
  }
};

struct MatmulCommand {
  CommonOptions common;
  RunnerFlags runner;
  std::string sizes = "1024,2048,4096";
  std::string dtypes = "fp32,bf16";
  std::string impls;
  std::string ceilings;

  void Run() const {
    suite::MatmulOptions options;
    options.shapes = suite::ParseMatmulShapes(sizes);
    options.dtypes = suite::ParseDTypes(dtypes);
    if (!impls.empty()) options.impls = SplitList(impls, "--impl");
    options.ceilings_file = ceilings;
    options.runner = runner.Options();
    auto device = OpenDevice(common);
    EmitStep(common, "bench matmul", suite::Matmul(*device, options));
  }
};

struct Conv2dCommand {
  CommonOptions common;
  RunnerFlags runner;
  std::optional<std::string> configs;  // given, even empty: an empty list is an error
  std::string dtypes = "fp32";
  std::string ceilings;

  void Run() const {
    suite::Conv2dOptions options;
    if (configs) {
      for (const auto& c : SplitList(*configs, "--configs")) options.configs.emplace_back(c, c);
    }
    options.dtypes = suite::ParseDTypes(dtypes);
    options.ceilings_file = ceilings;
    options.runner = runner.Options();
    auto device = OpenDevice(common);
    EmitStep(common, "bench conv2d", suite::Conv2d(*device, options));
  }
};

struct RooflineCommand {
  CommonOptions common;
  RunnerFlags runner;

  void Run() const {
    suite::RooflineOptions options;
    if (common.out == "-") {
      throw Error(ErrorCode::kInvalidArgument,
                  "--out: '-' is standard output, and bench roofline writes a ceilings file "
                  "that analyze --ceilings reads back: name one");
    }
    if (!common.out.empty()) options.out = common.out;
    options.runner = runner.Options();
    auto device = OpenDevice(common);
    CommonOptions to_stdout = common;  // --out names the ceilings file
    to_stdout.out.clear();
    EmitStep(to_stdout, "bench roofline", suite::Roofline(*device, options));
  }
};

}  // namespace

void RegisterBench(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "operator benchmarks and measured ceilings");
  bench->require_subcommand(1);

  auto matmul = std::make_shared<MatmulCommand>();
  CLI::App* m =
      bench->add_subcommand("matmul", "matmul sweep: time, GFLOP/s, % of peak and ceiling");
  AddCommonOptions(*m, matmul->common, "write the output to this file");
  matmul->runner.Add(*m);
  m->add_option("--sizes", matmul->sizes, "N or MxNxK, comma-separated (default 1024,2048,4096)");
  m->add_option("--dtype", matmul->dtypes, "fp32,bf16 (default both)");
  m->add_option("--impl", matmul->impls, "implementations, e.g. onednn,openblas (default all)");
  m->add_option("--ceilings", matmul->ceilings, "ceilings.json from `opscope bench roofline`");
  m->callback([matmul] { matmul->Run(); });

  auto conv = std::make_shared<Conv2dCommand>();
  CLI::App* c = bench->add_subcommand("conv2d", "convolution configs: time, MACs, FLOPs, TFLOP/s");
  AddCommonOptions(*c, conv->common, "write the output to this file");
  conv->runner.Add(*c);
  c->add_option("--configs", conv->configs,
                "benchdnn-style configs, comma-separated, e.g. mb16ic64ih56oc64kh3sh1 "
                "(default: the field report's four)");
  c->add_option("--dtype", conv->dtypes, "fp32,bf16 (default fp32)");
  c->add_option("--ceilings", conv->ceilings, "ceilings.json from `opscope bench roofline`");
  c->callback([conv] { conv->Run(); });

  auto roofline = std::make_shared<RooflineCommand>();
  CLI::App* r =
      bench->add_subcommand("roofline", "measure FLOP/s and bandwidth ceilings into ceilings.json");
  AddCommonOptions(*r, roofline->common, "where to write the ceilings (default ceilings.json)");
  roofline->runner.Add(*r);
  r->callback([roofline] { roofline->Run(); });

  RegisterBenchResNet50(*bench);
}

}  // namespace opscope::cli
