#include "suite/run.h"

#include <chrono>

#include "analyze/analyze_files.h"
#include "core/output.h"
#include "core/text.h"
#include "devices/registry.h"
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

workloads::RunnerOptions Runner(bool quick, int warmup = 2) {
  workloads::RunnerOptions o;
  o.warmup = warmup;
  if (quick) {
    o.min_reps = 3;
    o.min_time_ms = 20;
  }
  return o;
}

std::vector<std::string> Fast(bool quick) {
  return quick ? std::vector<std::string>{"--min-reps", "3", "--min-time", "20"}
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
  steps.push_back({"Load now", {"smi", "--device", dev}, [&] {
                     return LoadSnapshot({.devices = dev, .bytes_as_mib = true});
                   }});
  steps.push_back({"Measured ceilings",
                   With({"bench", "roofline", "--device", dev, "--out", ceilings}, Fast(quick)),
                   [&] { return Roofline(d, {.out = ceilings, .runner = Runner(quick)}); }});
  const std::string sizes = quick ? "4K..1M" : "4K..1G";
  steps.push_back({"Bandwidth", With({"bw", "--device", dev, "--sizes", sizes}, Fast(quick)), [&] {
                     BandwidthOptions o;
                     o.sizes = sizes;
                     o.min_reps = quick ? 3 : 10;
                     o.min_time_ms = quick ? 20 : 100;
                     return Bandwidth(d, o);
                   }});
  steps.push_back(
      {"Matrix multiplication",
       With({"bench", "matmul", "--device", dev, "--sizes", quick ? "256,512" : "1024,2048,4096",
             "--dtype", quick ? "fp32" : "fp32,bf16", "--warmup", "1", "--ceilings", ceilings},
            Fast(quick)),
       [&] {
         MatmulOptions o;
         o.shapes = ParseMatmulShapes(quick ? "256,512" : "1024,2048,4096");
         if (quick) o.dtypes = {devices::DType::kF32};
         o.ceilings_file = ceilings;
         o.runner = Runner(quick, 1);
         return Matmul(d, o);
       }});
  steps.push_back(
      {"Convolution",
       quick ? With({"bench", "conv2d", "--device", dev, "--configs", "mb2ic16ih28oc16kh3sh1",
                     "--warmup", "1", "--ceilings", ceilings},
                    Fast(quick))
             : std::vector<std::string>{"bench", "conv2d", "--device", dev, "--ceilings", ceilings},
       [&] {
         Conv2dOptions o;
         if (quick) o.configs = {{"mb2ic16ih28oc16kh3sh1", "mb2ic16ih28oc16kh3sh1"}};
         o.ceilings_file = ceilings;
         o.runner = Runner(quick, quick ? 1 : 2);
         return Conv2d(d, o);
       }});
  steps.push_back(
      {"ResNet-50 training",
       quick ? std::vector<std::string>{"bench", "resnet50", "--device", dev, "--batch", "2",
                                        "--image-size", "64", "--warmup", "0", "--iters", "2",
                                        "--trace", resnet_trace}
             : std::vector<std::string>{"bench", "resnet50", "--device", dev, "--warmup", "2",
                                        "--iters", "10", "--trace", resnet_trace},
       [&] {
         ResNet50StepOptions o;
         if (quick) {
           o.network.shape.batch = 2;
           o.network.shape.image_size = 64;
           o.network.warmup = 0;
           o.network.iters = 2;
         }
         o.network.trace_path = resnet_trace;
         return ResNet50([&](int threads) { return devices::OpenDevice(dev, {threads}); }, o);
       }});
  steps.push_back({"Monitor under load",
                   {"monitor", "--device", dev, "--workload", quick ? "matmul:256" : "matmul:1024",
                    "--duration", quick ? "500ms" : "2s", "--idle", quick ? "300ms" : "1s",
                    "--trace", monitor_trace},
                   [&] {
                     MonitorOptions o;
                     o.workload = quick ? "matmul:256" : "matmul:1024";
                     o.comparison.duration_ns = quick ? 500000000 : 2000000000;
                     o.comparison.idle_ns = quick ? 300000000 : 1000000000;
                     o.comparison.trace_path = monitor_trace;
                     return Monitor(&d, o);
                   }});
  std::vector<std::string> analyze_args{"analyze", resnet_trace};
  analyze_args.insert(analyze_args.end(), options.extra_traces.begin(), options.extra_traces.end());
  analyze_args.insert(analyze_args.end(), {"--out", (dir / "analysis").string(), "--top", "15",
                                           "--ceilings", ceilings});
  steps.push_back({"Analysis of the traces", analyze_args, [&] {
                     analyze::AnalyzeOptions o;
                     o.inputs = {resnet_trace};
                     o.inputs.insert(o.inputs.end(), options.extra_traces.begin(),
                                     options.extra_traces.end());
                     o.ceilings = analyze::LoadRooflineCeilings(ceilings);
                     const analyze::AnalyzedSet set = analyze::AnalyzeFiles(o);
                     auto tables = report::AnalysisTables(set, {.top = 15});
                     report::WriteAnalysisReport(dir / "analysis", set.traces, tables);
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
  write("index.html", report::RunIndexHtml(result.steps, dev,
                                           {{"analysis/analysis.html", "trace analysis (charts)"},
                                            {"ceilings.json", "measured ceilings"},
                                            {"traces/resnet50.json", "ResNet-50 trace"},
                                            {"traces/monitor.json", "monitor trace"}}));
  result.index_html = dir / "index.html";
  return result;
}

}  // namespace opscope::suite
