#include "workloads/operators.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>

#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::workloads {
namespace {

using devices::Buffer;
using devices::DType;

std::string Gib(uint64_t bytes) { return fmt::format("{:.1f} GiB", bytes / double(1 << 30)); }

double PeakFor(const devices::Device& device, DType dtype) {
  for (const auto& peak : device.properties().peaks) {
    if (peak.dtype == dtype) return peak.flops_per_second;
  }
  return 0;
}

void Rate(OperatorResult& r, const devices::Device& device, DType dtype,
          const FlopsCeilings& ceilings) {
  r.flops_per_second = r.stats.median_ms > 0 ? r.flops / (r.stats.median_ms / 1e3) : 0;
  const double peak = PeakFor(device, dtype);
  if (peak > 0) r.pct_peak = 100.0 * r.flops_per_second / peak;
  const auto it = ceilings.flops_per_second.find(devices::Name(dtype));
  if (it != ceilings.flops_per_second.end() && it->second > 0) {
    r.pct_ceiling = 100.0 * r.flops_per_second / it->second;
  }
}

void AddNote(std::string& note, const std::string& text) {
  note += note.empty() ? text : "; " + text;
}

// Notes that tell the reader what a figure means.
void Annotate(OperatorResult& r, const devices::Device& device) {
  const int threads = device.properties().compute_units;
  if (r.stats.median_ms < 0.2 && r.pct_ceiling >= 0 && r.pct_ceiling < 50) {
    AddNote(r.note,
            fmt::format("too small to fill the {} cores: fixed per-call cost dominates", threads));
  } else if (r.pct_ceiling >= 80 && r.pct_ceiling <= 100) {
    AddNote(r.note, "close to the measured FMA ceiling");
  }
  if (r.stats.first_run_ms > 3 * r.stats.median_ms && r.stats.first_run_ms > 1) {
    AddNote(r.note, fmt::format("first run {:.1f}x the median (setup, page faults, cold caches)",
                                r.stats.first_run_ms / r.stats.median_ms));
  }
  if (r.rotation_sets > 1) {
    AddNote(r.note,
            fmt::format("operands rotated over {} sets to defeat the caches", r.rotation_sets));
  }
  if (r.implementation.find("Haswell") != std::string::npos &&
      r.implementation.find("sgemm") != std::string::npos) {
    const auto& f = device.properties().features;
    if (std::find(f.begin(), f.end(), "avx512f") != f.end()) {
      AddNote(r.note, "OpenBLAS runs its Haswell (AVX2) kernels on this AVX-512 CPU");
    }
  }
  FlagDoubts(r);
}

// Times the kernels, rotating between them, then checks the first one's output
// with `verify`, rates the result against peak and ceiling, and annotates it.
void MeasureAndConclude(OperatorResult& r, devices::Device& device,
                        const std::vector<devices::Kernel*>& kernels, DType dtype,
                        size_t output_elements, const RunnerOptions& runner,
                        const FlopsCeilings& ceilings,
                        const std::function<Verification(const float*, DType)>& verify) {
  r.implementation = kernels[0]->Implementation();
  r.stats = Measure(
      device, [&](int i) { kernels[i % kernels.size()]->Run(); }, runner);
  // Every kernel has run by now; check the first against the reference.
  std::vector<float> out(output_elements);
  kernels[0]->ReadOutput(out.data());
  const DType stored = kernels[0]->OutputType();
  r.output_type = stored;
  r.verification = verify(out.data(), stored);
  if (!r.verification.passed) {
    r.status = Status::kFailed;
    r.reason = "wrong result: " + r.verification.detail;
  }
  Conclude(r, device, dtype, ceilings);
  if (stored != DType::kF32) {
    AddNote(r.note, fmt::format("the device writes the result in {}: checked with that rounding "
                                "allowed ({} relative)",
                                devices::Name(stored), stored == DType::kBF16 ? "2^-8" : "2^-11"));
  }
}

}  // namespace

void FlagDoubts(OperatorResult& r) {
  r.inconsistent = false;
  r.noisy = false;
  if (r.status != Status::kOk) return;
  if (r.pct_ceiling > 100) {
    r.inconsistent = true;
    AddNote(r.note, fmt::format("inconsistent: {:.1f}% is above the ceiling; the ceiling was "
                                "measured under load or the work count is wrong",
                                r.pct_ceiling));
  }
  if (r.pct_peak > 100) {
    r.inconsistent = true;
    AddNote(r.note, fmt::format("inconsistent: {:.1f}% is above the theoretical peak; the clock "
                                "or the peak's formula is wrong, or the work count is",
                                r.pct_peak));
  }
  const Stats& t = r.stats;
  if (Spread(t) > kNoisySpread) {
    r.noisy = true;
    AddNote(r.note, fmt::format("noisy: p10-p90 spread {:.0f}% of the median (over {:.0f}%){}: "
                                "the machine was busy or the case is too short",
                                100 * Spread(t), 100 * kNoisySpread,
                                t.extended ? ", still after more repetitions" : ""));
  } else if (t.extended) {
    AddNote(r.note, fmt::format("timings were noisy at first: repeated {} times", t.reps));
  }
}

std::string DoubtFlags(const OperatorResult& r) {
  if (r.inconsistent && r.noisy) return "inconsistent, noisy";
  if (r.inconsistent) return "inconsistent";
  return r.noisy ? "noisy" : "";
}

void Conclude(OperatorResult& r, const devices::Device& device, DType dtype,
              const FlopsCeilings& ceilings) {
  r.note.clear();
  r.pct_peak = -1;
  r.pct_ceiling = -1;
  Rate(r, device, dtype, ceilings);
  Annotate(r, device);
}

const char* Name(Status status) {
  switch (status) {
    case Status::kOk: return "ok";
    case Status::kWaived: return "waived";
    case Status::kFailed: return "failed";
  }
  return "?";
}

uint64_t MatmulBytes(const devices::MatmulSpec& s) {
  const uint64_t e = devices::SizeOf(s.dtype);
  return (static_cast<uint64_t>(s.m) * s.k + static_cast<uint64_t>(s.k) * s.n) * e +
         static_cast<uint64_t>(s.m) * s.n * sizeof(float);
}

uint64_t Conv2dBytes(const devices::Conv2dSpec& s) {
  const uint64_t e = devices::SizeOf(s.dtype);
  const uint64_t src = static_cast<uint64_t>(s.batch) * s.in_channels * s.in_h * s.in_w;
  const uint64_t wei =
      static_cast<uint64_t>(s.out_channels) * (s.in_channels / s.groups) * s.kernel_h * s.kernel_w;
  const uint64_t dst = static_cast<uint64_t>(s.batch) * s.out_channels * s.out_h() * s.out_w();
  // Blocked copies of the inputs and output may double what the plain layouts need.
  return 2 * ((src + wei) * e + dst * sizeof(float));
}

void CheckMemory(devices::Device& device, const std::string& what, uint64_t bytes) {
  const uint64_t available = device.AvailableMemory();
  if (bytes > available) {
    throw Error(ErrorCode::kResourceExhausted,
                fmt::format("{} needs {} ({} bytes) of memory, but {} is available", what,
                            Gib(bytes), bytes, Gib(available)));
  }
}

std::vector<MatmulResult> RunMatmul(devices::Device& device,
                                    const std::vector<devices::MatmulSpec>& specs,
                                    const RunnerOptions& runner, const FlopsCeilings& ceilings,
                                    Progress& progress) {
  for (const auto& s : specs) {
    CheckMemory(device,
                fmt::format("matmul {}x{}x{} {} (A {}x{}, B {}x{}, C {}x{} fp32)", s.m, s.n, s.k,
                            devices::Name(s.dtype), s.m, s.k, s.k, s.n, s.m, s.n),
                MatmulBytes(s));
  }
  std::vector<MatmulResult> results;
  int index = 0;
  for (const auto& spec : specs) {
    MatmulResult r;
    r.spec = spec;
    r.key = fmt::format("matmul_{}_{}_{}x{}x{}", devices::Name(spec.dtype), spec.impl, spec.m,
                        spec.n, spec.k);
    progress.Step(++index, static_cast<int>(specs.size()), r.key);
    r.flops = 2.0 * spec.m * spec.n * spec.k;
    const devices::Applicability applicability = device.MatmulApplicability(spec);
    if (!applicability.applicable()) {
      r.status = Status::kWaived;
      r.reason = applicability.text;
      results.push_back(r);
      continue;
    }
    const uint64_t set_bytes = MatmulBytes(spec);
    r.rotation_sets = RotationSets(device.properties(), set_bytes);
    struct Set {
      Buffer a, b, c;
      std::unique_ptr<devices::Kernel> kernel;
    };
    std::vector<Set> sets;
    // The first set's inputs stay on the host for the reference check.
    std::vector<char> host_a, host_b;
    for (int i = 0; i < r.rotation_sets; ++i) {
      Set set{Buffer(device, spec.m * spec.k * devices::SizeOf(spec.dtype)),
              Buffer(device, spec.k * spec.n * devices::SizeOf(spec.dtype)),
              Buffer(device, spec.m * spec.n * sizeof(float)), nullptr};
      FillRandomOn(device, set.a.data(), spec.m * spec.k, spec.dtype, i == 0 ? &host_a : nullptr);
      FillRandomOn(device, set.b.data(), spec.k * spec.n, spec.dtype, i == 0 ? &host_b : nullptr);
      // Stale values in C must be overwritten.
      FillRandomOn(device, set.c.data(), spec.m * spec.n, DType::kF32);
      set.kernel = device.CreateMatmul(spec, set.a.data(), set.b.data(), set.c.as<float>());
      sets.push_back(std::move(set));
    }
    std::vector<devices::Kernel*> kernels;
    for (const Set& set : sets) kernels.push_back(set.kernel.get());
    MeasureAndConclude(r, device, kernels, spec.dtype, spec.m * spec.n, runner, ceilings,
                       [&](const float* c, DType stored) {
                         return VerifyMatmul(spec, host_a.data(), host_b.data(), c, 64, stored);
                       });
    results.push_back(std::move(r));
  }
  return results;
}

std::vector<Conv2dResult> RunConv2d(
    devices::Device& device,
    const std::vector<std::pair<std::string, devices::Conv2dSpec>>& configs,
    const RunnerOptions& runner, const FlopsCeilings& ceilings, Progress& progress) {
  for (const auto& [name, s] : configs) {
    CheckMemory(device, "conv2d " + name + " " + devices::Name(s.dtype), Conv2dBytes(s));
  }
  std::vector<Conv2dResult> results;
  int index = 0;
  for (const auto& config : configs) {
    // Named, not a structured binding: lambdas below capture it (C++20 as clang 14 reads it).
    const std::string& name = config.first;
    const devices::Conv2dSpec& spec = config.second;
    Conv2dResult r;
    r.config = name;
    r.spec = spec;
    r.key = "conv2d_" + std::string(devices::Name(spec.dtype)) + "_" + FormatConv2d(spec);
    progress.Step(++index, static_cast<int>(configs.size()), r.key);
    r.macs = spec.Macs();
    r.flops = 2.0 * static_cast<double>(r.macs);
    const size_t e = devices::SizeOf(spec.dtype);
    const size_t src_n = spec.batch * spec.in_channels * spec.in_h * spec.in_w;
    const size_t wei_n =
        spec.out_channels * (spec.in_channels / spec.groups) * spec.kernel_h * spec.kernel_w;
    const size_t dst_n = spec.batch * spec.out_channels * spec.out_h() * spec.out_w();
    r.rotation_sets = RotationSets(device.properties(), (src_n + wei_n) * e + dst_n * 4, 4);
    struct Set {
      Buffer src, wei, dst;
      std::unique_ptr<devices::Kernel> kernel;
    };
    std::vector<Set> sets;
    std::vector<char> host_src, host_wei;
    try {
      for (int i = 0; i < r.rotation_sets; ++i) {
        Set set{Buffer(device, src_n * e), Buffer(device, wei_n * e), Buffer(device, dst_n * 4),
                nullptr};
        FillRandomOn(device, set.src.data(), src_n, spec.dtype, i == 0 ? &host_src : nullptr);
        FillRandomOn(device, set.wei.data(), wei_n, spec.dtype, i == 0 ? &host_wei : nullptr);
        FillRandomOn(device, set.dst.data(), dst_n, DType::kF32);
        set.kernel = device.CreateConv2d(spec, set.src.data(), set.wei.data(), set.dst.as<float>());
        sets.push_back(std::move(set));
      }
    } catch (const Error& error) {
      // A convolution this device has no kernel for (a dtype its CPU or
      // library lacks) is waived with the device's reason, as a matmul is.
      if (error.code() != ErrorCode::kUnsupported) throw;
      r.status = Status::kWaived;
      r.reason = error.what();
      results.push_back(std::move(r));
      continue;
    }
    std::vector<devices::Kernel*> kernels;
    for (const Set& set : sets) kernels.push_back(set.kernel.get());
    MeasureAndConclude(r, device, kernels, spec.dtype, dst_n, runner, ceilings,
                       [&](const float* out, DType stored) {
                         return VerifyConv2d(spec, host_src.data(), host_wei.data(), out, 64,
                                             stored);
                       });
    results.push_back(std::move(r));
  }
  return results;
}

devices::Conv2dSpec ParseConv2d(const std::string& text) {
  const auto fail = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument,
                 "cannot read convolution '" + core::EscapeForTerminal(text) + "': " + why +
                     " (example: mb16ic64ih56oc64kh3sh1, benchdnn's notation; keys mb ic ih iw "
                     "oc kh kw sh sw ph pw g)");
  };
  std::map<std::string, int64_t> v;
  size_t i = (!text.empty() && text[0] == 'n' && text.rfind("mb", 0) != 0) ? 1 : 0;
  while (i < text.size()) {
    if (text[i] == '_') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && std::isalpha(static_cast<unsigned char>(text[j]))) ++j;
    const std::string key = text.substr(i, j - i);
    size_t k = j;
    while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
    if (key.empty() || k == j)
      throw fail("expected KEY followed by a number at offset " + std::to_string(i));
    static const char* kKeys[] = {"mb", "ic", "ih", "iw", "oc", "kh",
                                  "kw", "sh", "sw", "ph", "pw", "g"};
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      throw fail("unknown key '" + key + "'");
    }
    if (k - j > 9) throw fail(key + " is absurdly large");
    if (v.count(key)) throw fail(key + " is given twice");
    v[key] = std::stoll(text.substr(j, k - j));
    i = k;
  }
  for (const char* required : {"ic", "ih", "oc", "kh"}) {
    if (!v.count(required)) throw fail(std::string("missing ") + required);
  }
  devices::Conv2dSpec s;
  s.batch = v.count("mb") ? v["mb"] : 1;
  s.in_channels = v["ic"];
  s.in_h = v["ih"];
  s.in_w = v.count("iw") ? v["iw"] : s.in_h;
  s.out_channels = v["oc"];
  s.kernel_h = v["kh"];
  s.kernel_w = v.count("kw") ? v["kw"] : s.kernel_h;
  s.stride_h = v.count("sh") ? v["sh"] : 1;
  s.stride_w = v.count("sw") ? v["sw"] : s.stride_h;
  s.pad_h = v.count("ph") ? v["ph"] : (s.kernel_h - 1) / 2;
  s.pad_w = v.count("pw") ? v["pw"] : (s.kernel_w - 1) / 2;
  s.groups = v.count("g") ? v["g"] : 1;
  for (const auto& [key, value] : v) {
    if (value <= 0 && key != "ph" && key != "pw") throw fail(key + " must be positive");
  }
  if (s.in_channels % s.groups || s.out_channels % s.groups) {
    throw fail("ic and oc must be multiples of g");
  }
  if (s.kernel_h > s.in_h + 2 * s.pad_h || s.kernel_w > s.in_w + 2 * s.pad_w) {
    throw fail("the kernel is larger than the padded input");
  }
  return s;
}

std::string FormatConv2d(const devices::Conv2dSpec& s) {
  std::string out = fmt::format("mb{}ic{}ih{}", s.batch, s.in_channels, s.in_h);
  if (s.in_w != s.in_h) out += fmt::format("iw{}", s.in_w);
  out += fmt::format("oc{}kh{}", s.out_channels, s.kernel_h);
  if (s.kernel_w != s.kernel_h) out += fmt::format("kw{}", s.kernel_w);
  out += fmt::format("sh{}", s.stride_h);
  if (s.stride_w != s.stride_h) out += fmt::format("sw{}", s.stride_w);
  out += fmt::format("ph{}", s.pad_h);
  if (s.pad_w != s.pad_h) out += fmt::format("pw{}", s.pad_w);
  if (s.groups != 1) out += fmt::format("g{}", s.groups);
  return out;
}

}  // namespace opscope::workloads
