#include "suite/run.h"

#include <fmt/format.h>

#include <chrono>

#include "analyze/analyze_files.h"
#include "core/output.h"
#include "core/text.h"
#include "devices/registry.h"
#include "monitor/watch.h"
#include "opscope/opscope.h"
#include "report/analysis_report.h"
#include "report/analysis_tables.h"
#include "suite/device_steps.h"
#include "suite/operators.h"
#include "suite/resnet50.h"

namespace opscope::suite {
namespace {

struct Step {
  std::string title;
  std::vector<std::string> command;  // the equivalent `opscope` arguments
  std::function<StepOutput()> run;
};

std::string Join(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) {
    const bool quote = a.find_first_of(" \t'\"") != std::string::npos;
    out += (out.empty() ? "" : " ") + (quote ? "'" + a + "'" : a);
  }
  return out;
}

// Quick runs stop at 3 repetitions and 20 ms; `Fast` is the same as flags.
constexpr int kQuickReps = 3;
constexpr double kQuickMs = 20;

workloads::RunnerOptions Runner(bool quick, int warmup = 2) {
  workloads::RunnerOptions o;
  o.warmup = warmup;
  if (quick) {
    o.min_reps = kQuickReps;
    o.min_time_ms = kQuickMs;
  }
  return o;
}

std::vector<std::string> Fast(bool quick) {
  return quick ? std::vector<std::string>{"--min-reps", std::to_string(kQuickReps), "--min-time",
                                          fmt::format("{:g}", kQuickMs)}
               : std::vector<std::string>{};
}

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

SuiteResult RunSuite(const SuiteOptions& options) {
  const std::string dev = options.device.empty() ? devices::DefaultDevice() : options.device;
  std::unique_ptr<devices::Device> device = devices::OpenDevice(dev);  // fails before any step
  for (const auto& t : options.extra_traces) {
    if (t != "-" && !std::filesystem::exists(t)) {
      throw Error(ErrorCode::kIo, "--analyze '" + core::EscapeForTerminal(t) + "': no such file");
    }
  }
  const std::filesystem::path& dir = options.out;
  std::error_code ec;
  std::filesystem::create_directories(dir / "traces", ec);
  if (ec) {
    throw Error(ErrorCode::kIo,
                "cannot create '" + core::EscapeForTerminal(dir.string()) + "': " + ec.message());
  }
  const bool quick = options.quick;
  const std::string ceilings = (dir / "ceilings.json").string();
  const std::string resnet_trace = (dir / "traces" / "resnet50.json").string();
  const std::string monitor_trace = (dir / "traces" / "monitor.json").string();
  devices::Device& d = *device;

  std::vector<Step> steps;
  steps.push_back({"Device", {"info", "--device", dev}, [&] { return DeviceInfo(d); }});
  steps.push_back(
      {"Load now", {"smi", "--device", dev}, [&] { return LoadSnapshot({.devices = dev}); }});
  steps.push_back({"Measured ceilings",
                   With({"bench", "roofline", "--device", dev, "--out", ceilings}, Fast(quick)),
                   [&] { return Roofline(d, {.out = ceilings, .runner = Runner(quick)}); }});
  const std::string sizes = quick ? "4K..1M" : "4K..1G";
  steps.push_back({"Bandwidth", With({"bw", "--device", dev, "--sizes", sizes}, Fast(quick)), [&] {
                     BandwidthOptions o;
                     o.sizes = sizes;
                     if (quick) o.min_reps = kQuickReps, o.min_time_ms = kQuickMs;
                     return Bandwidth(d, o);
                   }});
  const std::string matmul_sizes = quick ? "256,512" : "1024,2048,4096";
  const std::string matmul_dtypes = quick ? "fp32" : "fp32,bf16";
  steps.push_back({"Matrix multiplication",
                   With({"bench", "matmul", "--device", dev, "--sizes", matmul_sizes, "--dtype",
                         matmul_dtypes, "--warmup", "1", "--ceilings", ceilings},
                        Fast(quick)),
                   [&] {
                     MatmulOptions o;
                     o.shapes = ParseMatmulShapes(matmul_sizes);
                     o.dtypes = ParseDTypes(matmul_dtypes);
                     o.ceilings_file = ceilings;
                     o.runner = Runner(quick, 1);
                     return Matmul(d, o);
                   }});
  const std::string conv_config = "mb2ic16ih28oc16kh3sh1";  // quick: one small convolution
  steps.push_back(
      {"Convolution",
       quick ? With({"bench", "conv2d", "--device", dev, "--configs", conv_config, "--warmup", "1",
                     "--ceilings", ceilings},
                    Fast(quick))
             : std::vector<std::string>{"bench", "conv2d", "--device", dev, "--ceilings", ceilings},
       [&] {
         Conv2dOptions o;
         if (quick) o.configs = {{conv_config, conv_config}};
         o.ceilings_file = ceilings;
         o.runner = Runner(quick, quick ? 1 : 2);
         return Conv2d(d, o);
       }});
  ResNet50StepOptions resnet;
  if (quick) {
    resnet.network.shape.batch = 2;
    resnet.network.shape.image_size = 64;
    resnet.network.warmup = 0;
    resnet.network.iters = 2;
  }
  resnet.network.trace_path = resnet_trace;
  std::vector<std::string> resnet_args{"bench", "resnet50", "--device", dev};
  if (quick) {
    resnet_args =
        With(resnet_args, {"--batch", std::to_string(resnet.network.shape.batch), "--image-size",
                           std::to_string(resnet.network.shape.image_size)});
  }
  resnet_args = With(resnet_args, {"--warmup", std::to_string(resnet.network.warmup), "--iters",
                                   std::to_string(resnet.network.iters), "--trace", resnet_trace});
  steps.push_back({"ResNet-50 training", resnet_args, [&] {
                     return ResNet50(
                         [&](int threads) { return devices::OpenDevice(dev, {threads}); }, resnet);
                   }});
  const std::string workload = quick ? "matmul:256" : "matmul:1024";
  const std::string duration = quick ? "500ms" : "2s", idle = quick ? "300ms" : "1s";
  steps.push_back({"Monitor under load",
                   {"monitor", "--device", dev, "--workload", workload, "--duration", duration,
                    "--idle", idle, "--trace", monitor_trace},
                   [&] {
                     MonitorOptions o;
                     o.workload = workload;
                     o.comparison.duration_ns = monitor::ParseDurationNs(duration, "--duration");
                     o.comparison.idle_ns = monitor::ParseDurationNs(idle, "--idle");
                     o.comparison.trace_path = monitor_trace;
                     return Monitor(&d, o);
                   }});
  std::vector<std::string> traces{resnet_trace};
  traces.insert(traces.end(), options.extra_traces.begin(), options.extra_traces.end());
  const int top = 15;
  const std::filesystem::path analysis_dir = dir / "analysis";
  steps.push_back(
      {"Analysis of the traces",
       With(With({"analyze"}, traces),
            {"--out", analysis_dir.string(), "--top", std::to_string(top), "--ceilings", ceilings}),
       [&] {
         analyze::AnalyzeOptions o;
         o.inputs = traces;
         o.ceilings = analyze::LoadRooflineCeilings(ceilings);
         const analyze::AnalyzedSet set = analyze::AnalyzeFiles(o);
         auto tables = report::AnalysisTables(set, {.top = top});
         report::WriteAnalysisReport(analysis_dir, set.traces, tables,
                                     top == 0 ? tables : report::AnalysisTables(set, {.top = 0}));
         return StepOutput{std::move(tables), ""};
       }});

  SuiteResult result;
  for (size_t i = 0; i < steps.size(); ++i) {
    report::RunStep r;
    r.title = steps[i].title;
    r.command = Join(steps[i].command);
    if (options.on_step) options.on_step(i, steps.size(), r, false);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      StepOutput output = steps[i].run();
      r.tables = std::move(output.tables);
      r.status = output.failure.empty() ? "ok" : "failed";
      r.error = output.failure;
    } catch (const std::exception& e) {
      r.status = "failed";
      r.error = e.what();
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    result.failed += r.status != "ok";
    if (options.on_step) options.on_step(i, steps.size(), r, true);
    result.steps.push_back(std::move(r));
  }
  const auto write = [&](const char* name, std::string text) {
    core::AtomicFileOutput file(dir / name, false);
    file.buffer() = std::move(text);
    file.Commit();
  };
  write("results.json", report::RunResultsJson(result.steps));
  write("summary.csv", report::RunSummaryCsv(result.steps));
  std::vector<std::pair<std::string, std::string>> csv;
  for (const report::CsvFile& file : report::RunCsvFiles(result.steps)) {
    csv.emplace_back(file.name, report::TablesCsv(file.tables));
  }
  core::WriteFolderWhole(dir / "tables", csv);
  write("index.html", report::RunIndexHtml(result.steps, dev,
                                           {{"analysis/analysis.html", "trace analysis (charts)"},
                                            {"ceilings.json", "measured ceilings"},
                                            {"traces/resnet50.json", "ResNet-50 trace"},
                                            {"traces/monitor.json", "monitor trace"}}));
  result.index_html = dir / "index.html";
  return result;
}

}  // namespace opscope::suite
