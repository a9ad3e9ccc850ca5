#include "workloads/memory_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <ctime>
#include <random>

#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::workloads {
namespace {

using devices::Buffer;
using devices::StreamOp;

constexpr uint64_t kMaxSize = uint64_t{1} << 40;

uint64_t ParseSize(const std::string& part, const std::string& whole) {
  size_t i = 0;
  while (i < part.size() && (std::isdigit(static_cast<unsigned char>(part[i])) || part[i] == '.'))
    ++i;
  const auto fail = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument,
                 "--sizes '" + core::EscapeForTerminal(whole) + "': '" +
                     core::EscapeForTerminal(part) + "' " + why +
                     " (examples: 4K..1G, 64K,1M,256M; suffixes K, M, G are powers of 1024)");
  };
  if (i == 0) throw fail("is not a size");
  double value = 0;
  try {
    value = std::stod(part.substr(0, i));
  } catch (const std::exception&) {
    throw fail("is not a size");
  }
  std::string suffix = part.substr(i);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  if (suffix == "K" || suffix == "k")
    value *= 1024;
  else if (suffix == "M" || suffix == "m")
    value *= 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g")
    value *= 1024.0 * 1024 * 1024;
  else if (!suffix.empty())
    throw fail("has an unknown suffix '" + core::EscapeForTerminal(suffix) + "'");
  if (!(value >= 64)) throw fail("is too small: sizes start at 64 bytes");
  if (value > static_cast<double>(kMaxSize)) throw fail("is absurdly large");
  return static_cast<uint64_t>(value) / 64 * 64;
}

std::string LevelFor(const devices::DeviceProperties& p, uint64_t working_set) {
  if (p.caches.empty()) return "n/a";  // no cache sizes: DRAM would be a guess
  const int threads = std::max(1, p.compute_units);
  for (const auto& cache : p.caches) {
    // Private caches hold a thread's share; shared ones hold their sharers' shares.
    const uint64_t share = working_set / threads * std::min(cache.shared_by, threads);
    if (share <= cache.bytes * 3 / 4) return cache.name;
  }
  return "DRAM";
}

// Checks 1024 random elements; reads device memory through Download.
bool VerifyStream(devices::Device& device, StreamOp op, const double* a, const double* b,
                  const double* c, size_t n) {
  std::mt19937_64 rng(n);
  constexpr double s = 3.0;
  const auto at = [&](const double* array, size_t j) {
    double v = 0;
    device.Download(&v, array + j, sizeof v);
    return v;
  };
  for (int k = 0; k < 1024; ++k) {
    const size_t j = rng() % n;
    double want = 0, got = 0;
    switch (op) {
      case StreamOp::kCopy: got = at(c, j), want = at(a, j); break;
      case StreamOp::kScale: got = at(b, j), want = s * at(c, j); break;
      case StreamOp::kAdd: got = at(c, j), want = at(a, j) + at(b, j); break;
      case StreamOp::kTriad: got = at(a, j), want = at(b, j) + s * at(c, j); break;
    }
    if (std::abs(got - want) > 1e-12 * std::max(1.0, std::abs(want))) return false;
  }
  return true;
}

// Compares two regions chunk by chunk; `*_on_device` says which side Download reads.
bool SameBytes(devices::Device& device, const void* x, bool x_on_device, const void* y,
               bool y_on_device, size_t bytes) {
  constexpr size_t kChunk = size_t{16} << 20;
  std::vector<char> bx(std::min(bytes, kChunk)), by(std::min(bytes, kChunk));
  for (size_t offset = 0; offset < bytes; offset += kChunk) {
    const size_t n = std::min(kChunk, bytes - offset);
    const char* px = static_cast<const char*>(x) + offset;
    const char* py = static_cast<const char*>(y) + offset;
    if (x_on_device) device.Download(bx.data(), px, n), px = bx.data();
    if (y_on_device) device.Download(by.data(), py, n), py = by.data();
    if (std::memcmp(px, py, n) != 0) return false;
  }
  return true;
}

// Fresh random doubles in a device buffer, staged through host memory.
void FillRandomDoublesOn(devices::Device& device, void* device_dst, size_t n) {
  constexpr size_t kChunk = size_t{2} << 20;  // doubles
  std::vector<double> host(std::min(n, kChunk));
  for (size_t offset = 0; offset < n; offset += kChunk) {
    const size_t count = std::min(kChunk, n - offset);
    FillRandom(host.data(), count);
    device.Upload(static_cast<double*>(device_dst) + offset, host.data(), count * sizeof(double));
  }
}

}  // namespace

std::vector<uint64_t> ParseSizes(const std::string& text) {
  std::vector<uint64_t> sizes;
  const auto range = text.find("..");
  if (range != std::string::npos) {
    const uint64_t first = ParseSize(text.substr(0, range), text);
    const uint64_t last = ParseSize(text.substr(range + 2), text);
    if (first > last) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--sizes '" + core::EscapeForTerminal(text) + "': the range runs backwards");
    }
    for (uint64_t s = first; s <= last; s *= 4) sizes.push_back(s);
    if (sizes.back() != last) sizes.push_back(last);
    return sizes;
  }
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string part =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    sizes.push_back(ParseSize(part, text));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

std::string FormatBytes(uint64_t bytes) {
  const char* units[] = {"", "K", "M", "G", "T"};
  double value = static_cast<double>(bytes);
  int u = 0;
  while (value >= 1024 && u < 4) value /= 1024, ++u;
  if (value == std::floor(value))
    return fmt::format("{}{}", static_cast<uint64_t>(value), units[u]);
  return fmt::format("{:.1f}{}", value, units[u]);
}

std::vector<BandwidthResult> RunBandwidth(devices::Device& device,
                                          const std::vector<std::string>& types,
                                          const std::vector<uint64_t>& sizes,
                                          const RunnerOptions& runner, Progress& progress,
                                          const std::vector<std::string>& only_kernels) {
  const uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
  CheckMemory(device, "the bandwidth sweep up to " + FormatBytes(largest) + " (3 arrays)",
              3 * largest);
  struct Case {
    std::string type, kernel;
    uint64_t size;
  };
  std::vector<Case> cases;
  for (const auto& type : types) {
    for (const uint64_t size : sizes) {
      if (type == "d2d") {
        for (const char* k : {"memcpy", "copy", "scale", "add", "triad"}) {
          if (only_kernels.empty() ||
              std::find(only_kernels.begin(), only_kernels.end(), k) != only_kernels.end()) {
            cases.push_back({type, k, size});
          }
        }
      } else {
        // Transfers between host and device, from page-locked and from pageable memory.
        for (const char* k : {"pinned", "pageable"}) cases.push_back({type, k, size});
      }
    }
  }
  std::vector<BandwidthResult> results;
  int index = 0;
  for (const Case& c : cases) {
    BandwidthResult r;
    r.type = c.type;
    r.kernel = c.kernel;
    r.size_bytes = c.size;
    r.key = c.type + "_" + c.kernel + "_" + FormatBytes(c.size);
    progress.Step(++index, static_cast<int>(cases.size()), r.key);
    const devices::CopyKind kind = c.type == "h2d"     ? devices::CopyKind::kHostToDevice
                                   : c.type == "d2h"   ? devices::CopyKind::kDeviceToHost
                                   : c.type == "bidir" ? devices::CopyKind::kBidirectional
                                                       : devices::CopyKind::kDeviceToDevice;
    const devices::Applicability applicability = device.CopyApplicability(kind);
    if (!applicability.applicable()) {
      const std::string& why = applicability.text;
      // One row per transfer type that does not exist here, not one per size.
      const bool listed = std::any_of(results.begin(), results.end(),
                                      [&](const BandwidthResult& b) { return b.type == c.type; });
      if (!listed) {
        r.status = Status::kWaived;
        r.reason = why;
        r.size_bytes = 0;
        r.kernel = "all";
        r.key = c.type;
        results.push_back(r);
      }
      continue;
    }
    // Enough repeats that one run moves at least 16 MiB per array.
    r.repeat = static_cast<int>(std::max<uint64_t>(1, (uint64_t{16} << 20) / c.size));
    const size_t n = c.size / sizeof(double);
    if (kind != devices::CopyKind::kDeviceToDevice) {
      // Host memory on one side: the bytes crossing the link are counted once each
      // (bidir: both directions), as nvbandwidth does.
      const devices::HostMemory memory =
          c.kernel == "pinned" ? devices::HostMemory::kPinned : devices::HostMemory::kPageable;
      devices::HostBuffer host_src(device, c.size, memory), host_dst(device, c.size, memory);
      Buffer dev_src(device, c.size), dev_dst(device, c.size);
      FillRandom(static_cast<double*>(host_src.data()), n);
      FillRandom(static_cast<double*>(host_dst.data()), n);
      FillRandomDoublesOn(device, dev_src.data(), n);
      FillRandomDoublesOn(device, dev_dst.data(), n);
      const bool bidir = kind == devices::CopyKind::kBidirectional;
      r.bytes_moved = (bidir ? 2 : 1) * c.size * r.repeat;
      r.level = "link";
      r.stats = Measure(
          device,
          [&](int) {
            for (int k = 0; k < r.repeat; ++k) {
              if (bidir) {
                device.CopyBidirectional(dev_dst.data(), host_src.data(), host_dst.data(),
                                         dev_src.data(), c.size);
              } else if (kind == devices::CopyKind::kHostToDevice) {
                device.Copy(dev_dst.data(), host_src.data(), c.size, kind);
              } else {
                device.Copy(host_dst.data(), dev_src.data(), c.size, kind);
              }
            }
          },
          runner);
      const bool to_device_ok =
          kind == devices::CopyKind::kDeviceToHost ||
          SameBytes(device, dev_dst.data(), true, host_src.data(), false, c.size);
      const bool to_host_ok =
          kind == devices::CopyKind::kHostToDevice ||
          SameBytes(device, host_dst.data(), false, dev_src.data(), true, c.size);
      if (!to_device_ok || !to_host_ok) {
        r.status = Status::kFailed;
        r.reason = "the copy differs from its source";
      }
    } else if (c.kernel == "memcpy") {
      Buffer src(device, c.size), dst(device, c.size);
      FillRandomDoublesOn(device, src.data(), n);
      FillRandomDoublesOn(device, dst.data(), n);
      r.bytes_moved = 2 * c.size * r.repeat;
      r.level = LevelFor(device.properties(), 2 * c.size);
      r.stats = Measure(
          device,
          [&](int) {
            for (int k = 0; k < r.repeat; ++k) device.Copy(dst.data(), src.data(), c.size, kind);
          },
          runner);
      if (!SameBytes(device, src.data(), true, dst.data(), true, c.size)) {
        r.status = Status::kFailed;
        r.reason = "the copy differs from its source";
      }
    } else {
      const StreamOp op = c.kernel == "copy"    ? StreamOp::kCopy
                          : c.kernel == "scale" ? StreamOp::kScale
                          : c.kernel == "add"   ? StreamOp::kAdd
                                                : StreamOp::kTriad;
      Buffer a(device, c.size), b(device, c.size), cc(device, c.size);
      FillRandomDoublesOn(device, a.data(), n);
      FillRandomDoublesOn(device, b.data(), n);
      FillRandomDoublesOn(device, cc.data(), n);
      std::unique_ptr<devices::Kernel> kernel;
      try {
        kernel =
            device.CreateStream(op, a.as<double>(), b.as<double>(), cc.as<double>(), n, r.repeat);
      } catch (const Error& e) {
        // A device without STREAM kernels (the NPU backend: copies only):
        // one waived row per kernel, not one per size.
        if (e.code() != ErrorCode::kUnsupported) throw;
        const std::string kernel_name = c.kernel;
        const bool listed = std::any_of(
            results.begin(), results.end(),
            [&](const BandwidthResult& b) { return b.type == c.type && b.kernel == kernel_name; });
        if (!listed) {
          r.status = Status::kWaived;
          r.reason = e.what();
          r.size_bytes = 0;
          r.key = c.type + "_" + c.kernel;
          results.push_back(r);
        }
        continue;
      }
      const int arrays = devices::ArraysTouched(op);
      r.bytes_moved = static_cast<uint64_t>(arrays) * c.size * r.repeat;
      r.level = LevelFor(device.properties(), static_cast<uint64_t>(arrays) * c.size);
      r.stats = Measure(
          device, [&](int) { kernel->Run(); }, runner);
      if (!VerifyStream(device, op, a.as<double>(), b.as<double>(), cc.as<double>(), n)) {
        r.status = Status::kFailed;
        r.reason = "STREAM result check failed";
      }
    }
    r.bytes_per_second = r.stats.median_ms > 0 ? r.bytes_moved / (r.stats.median_ms / 1e3) : 0;
    results.push_back(std::move(r));
  }
  return results;
}

RooflineResult MeasureFlopsCeiling(devices::Device& device, devices::DType dtype,
                                   const RunnerOptions& runner) {
  RooflineResult r;
  r.ceiling = std::string(devices::Name(dtype)) + "_flops";
  r.unit = "FLOP/s";
  double flops_per_run = 0;
  auto kernel = device.CreatePeakLoop(dtype, &flops_per_run);
  r.stats = Measure(
      device, [&](int) { kernel->Run(); }, runner);
  r.measured = flops_per_run / (r.stats.median_ms / 1e3);
  for (const auto& peak : device.properties().peaks) {
    if (peak.dtype == dtype) r.theoretical = peak.flops_per_second;
  }
  r.method = fmt::format("{}, {}, median of {} runs", kernel->Implementation(),
                         devices::ComputeUnitsText(device.properties()), r.stats.reps);
  return r;
}

std::vector<RooflineResult> RunRoofline(devices::Device& device, const RunnerOptions& runner,
                                        Progress& progress, core::Ceilings& ceilings) {
  std::vector<RooflineResult> results;
  ceilings.device_id = device.properties().id;
  ceilings.device_name = device.properties().name;
  ceilings.clock_ghz = device.properties().clock_ghz;
  ceilings.clock_source = device.properties().clock_source;
  {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
    ceilings.written_at = stamp;
  }
  int step = 0;
  for (const devices::DType dtype : {devices::DType::kF32, devices::DType::kBF16}) {
    progress.Step(++step, 3, std::string(devices::Name(dtype)) + " FMA ceiling");
    RooflineResult r = MeasureFlopsCeiling(device, dtype, runner);
    ceilings.flops_per_second[devices::Name(dtype)] = r.measured;
    ceilings.method[r.ceiling] = r.method;
    results.push_back(std::move(r));
  }
  progress.Step(3, 3, "memory bandwidth (STREAM triad)");
  uint64_t llc = 0;
  for (const auto& cache : device.properties().caches) llc = std::max(llc, cache.bytes);
  const uint64_t size = std::max<uint64_t>(uint64_t{256} << 20, 8 * llc);
  Progress quiet("", false);
  const auto bw = RunBandwidth(device, {"d2d"}, {size}, runner, quiet, {"triad"});
  for (const auto& b : bw) {
    if (b.kernel != "triad") continue;
    if (b.status != Status::kOk) throw Error(ErrorCode::kInternal, "STREAM triad: " + b.reason);
    RooflineResult r;
    r.ceiling = "memory_bandwidth";
    r.unit = "B/s";
    r.measured = b.bytes_per_second;
    r.stats = b.stats;
    r.method =
        fmt::format("STREAM triad over 3 arrays of {}, read + write bytes, median of {} runs",
                    FormatBytes(size), b.stats.reps);
    ceilings.memory_bytes_per_second = r.measured;
    ceilings.method[r.ceiling] = r.method;
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace opscope::workloads
