// Decides issue "CPU device and operator benchmarks": our fp32 matmul at 4096
// against numpy (Debian's python3-numpy on OpenBLAS) on the same machine, in the
// same run. Goal: ours >= 0.95x numpy's GFLOP/s.
//
// numpy runs twice: with the environment as it is (this workplace sets
// OPENBLAS_CORETYPE=Haswell because older OpenBLAS builds misbehave on new cores)
// and with OPENBLAS_CORETYPE=SkylakeX, OpenBLAS's AVX-512 kernels; a run whose
// result fails the check does not count. The verdict uses numpy's best valid run.
#include <fmt/format.h>
#include <simdjson.h>

#include <cstdio>
#include <string>

#include "devices/registry.h"
#include "workloads/operators.h"

namespace {

struct NumpyRun {
  std::string label;
  double median_ms = 0, max_rel_error = 1;
  bool valid = false;
  std::string error;
};

NumpyRun RunNumpy(const std::string& label, const std::string& env, int n) {
  NumpyRun run;
  run.label = label;
  const std::string command = env + " /usr/bin/python3 " OPSCOPE_BENCH_DIR "/numpy_matmul.py " +
                              std::to_string(n) + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  char buffer[4096];
  while (pipe != nullptr && fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int status = pipe != nullptr ? pclose(pipe) : -1;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (status != 0 || parser.parse(output).get(doc)) {
    run.error = "numpy run failed: " + output.substr(0, 300);
    return run;
  }
  run.median_ms = double(doc["median_ms"]);
  run.max_rel_error = double(doc["max_rel_error"]);
  run.valid = run.max_rel_error < 1e-4;
  if (!run.valid)
    run.error = fmt::format("wrong results (relative error {:.2g})", run.max_rel_error);
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::stoi(argv[1]) : 4096;
  auto device = opscope::devices::OpenDevice("cpu");
  opscope::workloads::RunnerOptions runner;
  runner.min_time_ms = 2000;
  opscope::workloads::Progress quiet("", false);
  const auto ours = opscope::workloads::RunMatmul(
      *device, {{n, n, n, opscope::devices::DType::kF32, "onednn"}}, runner, {}, quiet)[0];
  const double flops = 2.0 * n * n * n;
  const double our_gflops = flops / (ours.stats.median_ms / 1e3) / 1e9;
  std::printf("fp32 matmul %dx%dx%d, %d threads, same machine, one run\n", n, n, n,
              device->properties().compute_units);
  std::printf("  opscope (%s): median %.2f ms, %.1f GFLOP/s, verified: %s\n",
              ours.implementation.c_str(), ours.stats.median_ms, our_gflops,
              ours.verification.passed ? "yes" : "NO");
  NumpyRun best;
  for (const auto& [label, env] :
       {std::pair<std::string, std::string>{"numpy, environment as is", ""},
        {"numpy, OPENBLAS_CORETYPE=SkylakeX",
         "env -u OPENBLAS_L2_SIZE OPENBLAS_CORETYPE=SkylakeX"}}) {
    const NumpyRun run = RunNumpy(label, env, n);
    if (!run.error.empty() && run.median_ms == 0) {
      std::printf("  %s: %s\n", label.c_str(), run.error.c_str());
      continue;
    }
    const double gflops = flops / (run.median_ms / 1e3) / 1e9;
    std::printf("  %s: median %.2f ms, %.1f GFLOP/s%s%s; ratio ours/numpy %.2f\n", label.c_str(),
                run.median_ms, gflops, run.valid ? "" : " -- ", run.error.c_str(),
                our_gflops / gflops);
    if (run.valid && (best.median_ms == 0 || run.median_ms < best.median_ms)) best = run;
  }
  if (best.median_ms == 0) {
    std::printf("no valid numpy run to compare with\n");
    return 1;
  }
  const double ratio = best.median_ms / ours.stats.median_ms;
  std::printf("verdict: ours vs numpy's best valid run (%s): ratio %.2f, goal >= 0.95: %s\n",
              best.label.c_str(), ratio, ratio >= 0.95 ? "met" : "NOT MET");
  return 0;
}
