// `opscope run`: the whole suite on one device, one report. Each step is an
// ordinary opscope command (its line is printed in the report, so every figure
// can be reproduced); their tables are collected into results.json,
// summary.csv and index.html, and their traces into traces/.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "cli/common.h"
#include "core/output.h"
#include "core/text.h"
#include "devices/registry.h"
#include "report/run_report.h"
#include "workloads/progress.h"

namespace opscope::cli {
namespace {

struct Step {
  std::string title;
  std::vector<std::string> args;  // after "opscope"
};

std::string Join(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) {
    const bool quote = a.find_first_of(" \t'\"") != std::string::npos;
    out += (out.empty() ? "" : " ") + (quote ? "'" + a + "'" : a);
  }
  return out;
}

// Runs one opscope command in this process, collecting its tables.
report::RunStep Execute(const Step& step) {
  report::RunStep result;
  result.title = step.title;
  result.command = Join(step.args);
  CLI::App app{"opscope"};
  app.require_subcommand(1);
  RegisterInfo(app);
  RegisterBench(app);
  RegisterBandwidth(app);
  RegisterSmi(app);
  RegisterMonitor(app);
  RegisterAnalyze(app);
  RunCollector collector;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    std::vector<std::string> reversed(step.args.rbegin(), step.args.rend());  // CLI11's order
    app.parse(reversed);
    result.status = "ok";
  } catch (const CLI::Error& e) {
    result.status = "failed";
    result.error = std::string("command line: ") + e.what();
  } catch (const Error& e) {
    result.status = "failed";
    result.error = e.what();
  } catch (const std::exception& e) {
    result.status = "failed";
    result.error = e.what();
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& emitted : collector.emitted) {
    for (auto& table : emitted.tables) result.tables.push_back(std::move(table));
  }
  return result;
}

struct RunCommand {
  std::string device;
  std::string out = "opscope-report";
  bool quick = false;
  std::vector<std::string> extra_traces;

  void Run() const {
    const std::string dev = device.empty() ? devices::DefaultDevice() : device;
    devices::OpenDevice(dev);  // an unknown device fails here, before any step
    for (const auto& t : extra_traces) {
      if (!std::filesystem::exists(t)) {
        throw Error(ErrorCode::kIo, "--analyze '" + core::EscapeForTerminal(t) + "': no such file");
      }
    }
    const std::filesystem::path dir = out;
    std::error_code ec;
    std::filesystem::create_directories(dir / "traces", ec);
    if (ec) {
      throw Error(ErrorCode::kIo,
                  "cannot create '" + core::EscapeForTerminal(dir.string()) + "': " + ec.message());
    }
    const std::string resnet_trace = (dir / "traces" / "resnet50.json").string();
    const std::string monitor_trace = (dir / "traces" / "monitor.json").string();
    const std::vector<std::string> fast =
        quick ? std::vector<std::string>{"--min-reps", "3", "--min-time", "20"}
              : std::vector<std::string>{};
    const auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
      a.insert(a.end(), b.begin(), b.end());
      return a;
    };
    std::vector<Step> steps;
    steps.push_back({"Device", {"info", "--device", dev}});
    steps.push_back({"Load now", {"smi", "--device", dev}});
    const std::string ceilings = (dir / "ceilings.json").string();
    steps.push_back({"Measured ceilings",
                     with({"bench", "roofline", "--device", dev, "--out", ceilings}, fast)});
    steps.push_back(
        {"Bandwidth", with({"bw", "--device", dev, "--sizes", quick ? "4K..1M" : "4K..1G"}, fast)});
    steps.push_back(
        {"Matrix multiplication",
         with({"bench", "matmul", "--device", dev, "--sizes", quick ? "256,512" : "1024,2048,4096",
               "--dtype", quick ? "fp32" : "fp32,bf16", "--warmup", "1", "--ceilings", ceilings},
              fast)});
    steps.push_back({"Convolution", quick ? with({"bench", "conv2d", "--device", dev, "--configs",
                                                  "mb2ic16ih28oc16kh3sh1", "--warmup", "1",
                                                  "--ceilings", ceilings},
                                                 fast)
                                          : std::vector<std::string>{"bench", "conv2d", "--device",
                                                                     dev, "--ceilings", ceilings}});
    steps.push_back(
        {"ResNet-50 training",
         quick ? std::vector<std::string>{"bench", "resnet50", "--device", dev, "--batch", "2",
                                          "--image-size", "64", "--warmup", "0", "--iters", "2",
                                          "--trace", resnet_trace}
               : std::vector<std::string>{"bench", "resnet50", "--device", dev, "--warmup", "2",
                                          "--iters", "10", "--trace", resnet_trace}});
    steps.push_back({"Monitor under load",
                     {"monitor", "--device", dev, "--workload",
                      quick ? "matmul:256" : "matmul:1024", "--duration", quick ? "500ms" : "2s",
                      "--idle", quick ? "300ms" : "1s", "--trace", monitor_trace}});
    std::vector<std::string> analyze{"analyze", resnet_trace};
    analyze.insert(analyze.end(), extra_traces.begin(), extra_traces.end());
    analyze.insert(analyze.end(),
                   {"--out", (dir / "analysis").string(), "--top", "15", "--ceilings", ceilings});
    steps.push_back({"Analysis of the traces", analyze});

    const bool terminal = ::isatty(STDERR_FILENO) != 0;
    workloads::Progress::SetSilent(!terminal);  // quiet and machine-readable off a terminal
    std::vector<report::RunStep> results;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (terminal) {
        std::cerr << fmt::format("opscope run [{}/{}] {}: opscope {}\n", i + 1, steps.size(),
                                 steps[i].title, core::EscapeForTerminal(Join(steps[i].args)));
      }
      results.push_back(Execute(steps[i]));
      const auto& r = results.back();
      if (r.status != "ok") {
        std::cerr << "opscope run: " << core::EscapeForTerminal(steps[i].title)
                  << " failed: " << core::EscapeForTerminal(r.error) << '\n';
      } else if (terminal) {
        std::cerr << fmt::format("opscope run [{}/{}] done in {:.1f} s\n", i + 1, steps.size(),
                                 r.seconds);
      }
    }
    const auto write = [&](const char* name, std::string text) {
      core::AtomicFileOutput file(dir / name, false);
      file.buffer() = std::move(text);
      file.Commit();
    };
    write("results.json", report::RunResultsJson(results));
    write("summary.csv", report::RunSummaryCsv(results));
    write("index.html", report::RunIndexHtml(results, dev,
                                             {{"analysis/analysis.html", "trace analysis (charts)"},
                                              {"ceilings.json", "measured ceilings"},
                                              {"traces/resnet50.json", "ResNet-50 trace"},
                                              {"traces/monitor.json", "monitor trace"}}));
    int failed = 0;
    for (const auto& r : results) failed += r.status != "ok";
    std::cout << fmt::format("opscope run: {} steps, {} failed; report in {}\n", results.size(),
                             failed, core::EscapeForTerminal((dir / "index.html").string()));
    if (failed > 0) {
      throw Error(ErrorCode::kInternal, fmt::format("{} of {} steps failed (see {})", failed,
                                                    results.size(), (dir / "index.html").string()));
    }
  }
};

}  // namespace

void RegisterRun(CLI::App& app) {
  auto command = std::make_shared<RunCommand>();
  CLI::App* sub = app.add_subcommand(
      "run", "the whole suite on one device into one report (index.html, results.json)");
  sub->add_option("--device", command->device, "device to use (default: the best present)");
  sub->add_option("--out", command->out, "report folder (default opscope-report)");
  sub->add_flag("--quick", command->quick, "small sizes: the whole run in under 30 s");
  sub->add_option("--analyze", command->extra_traces,
                  "further traces to analyze into the report (e.g. from PyTorch)");
  sub->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
