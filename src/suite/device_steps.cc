#include "suite/device_steps.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "core/machine.h"
#include "core/text.h"
#include "monitor/other_load.h"
#include "monitor/reading_format.h"
#include "monitor/watch.h"
#include "workloads/memory_bench.h"
#include "workloads/progress.h"
#include "workloads/workload.h"

namespace opscope::suite {
namespace {

using report::Unit;
using report::Value;

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : " ") + item;
  return out;
}

// A reading as people read it: bytes in KiB, MiB or GiB; anything else with
// one decimal and its unit.
std::string HumanValue(double value, const std::string& unit) {
  if (unit == "bytes") {
    static constexpr std::pair<double, const char*> kUnits[] = {
        {1024.0 * 1024 * 1024, "GiB"}, {1024.0 * 1024, "MiB"}, {1024.0, "KiB"}};
    for (const auto& [scale, name] : kUnits) {
      if (std::fabs(value) >= scale) return fmt::format("{:.1f} {}", value / scale, name);
    }
    return fmt::format("{:.0f} B", value);
  }
  return unit.empty() ? fmt::format("{:.1f}", value) : fmt::format("{:.1f} {}", value, unit);
}

}  // namespace

StepOutput DeviceInfo(const devices::Device& device) {
  const devices::DeviceProperties& p = device.properties();
  const core::MachineInfo& m = core::GetMachineInfo();
  report::ResultTable table;
  table.section = "device";
  table.title = "Device " + p.id + ": " + p.name;
  table.columns = {{"property", "Property"}, {"value", "Value"}};
  const auto add = [&](const std::string& k, const std::string& v) { table.AddRow({k, v}); };
  add("host", m.host);
  add("os", m.os + ", kernel " + m.kernel);
  add("device", p.id);
  add("name", p.name);
  add("microarchitecture", p.microarchitecture);
  add("cores_used", fmt::format("{} of {}", p.compute_units, p.compute_units_available));
  add("clock", fmt::format("{:.2f} GHz ({})", p.clock_ghz, p.clock_source));
  add("isa", Join(p.features));
  for (const auto& cache : p.caches) {
    // The units sharing it: logical CPUs on the CPU, AI Cores on an NPU.
    add("cache_" + cache.name, fmt::format("{} KiB, shared by {} compute unit(s) (from {})",
                                           cache.bytes >> 10, cache.shared_by, p.caches_source));
  }
  if (p.caches.empty()) {
    add("caches", "n/a: " + (p.caches_source.empty() ? std::string("not reported by the device")
                                                     : p.caches_source));
  }
  add("memory", fmt::format("{:.1f} GiB", static_cast<double>(p.memory_bytes) / (1 << 30)));
  for (const auto& peak : p.peaks) {
    add(std::string("peak_") + devices::Name(peak.dtype),
        fmt::format("{:.1f} GFLOP/s theoretical: {}", peak.flops_per_second / 1e9, peak.formula));
  }
  add("libraries", p.runtime);
  table.notes.push_back(
      "Theoretical peaks assume every core at the listed clock; `opscope bench roofline` "
      "measures what the cores reach.");
  return {{table}, ""};
}

StepOutput LoadSnapshot(const SnapshotOptions& options) {
  std::vector<std::string> notes;
  auto samplers = monitor::OpenSamplers(options.devices, options.pid, notes);
  // Rates need an interval: sample again 200 ms after opening.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const monitor::Reading reading = monitor::ReadAll(samplers);
  report::ResultTable table;
  table.section = "smi";
  table.title = "Device load (rates over the last 200 ms)";
  // One unit per metric everywhere: JSON and CSV carry the value in the unit
  // beside it (bytes, %, W, ...); the terminal and HTML show it humanised.
  table.columns = {{"device", "Device"},
                   {"metric", "Metric"},
                   {"labels", "Of"},
                   {"value", "Value", 1, false},
                   {"unit", "Unit", 0, false},
                   {"shown", "Value", 0, true, false},
                   {"note", "Note"}};
  for (const auto& m : reading.metrics) {
    table.AddRow({monitor::DeviceOf(m), m.Key(), m.Owner().empty() ? Value{} : Value{m.Owner()},
                  m.value ? Value{*m.value} : Value{}, m.unit,
                  m.value ? HumanValue(*m.value, m.unit) : std::string("n/a"),
                  m.value ? m.note : m.unavailable});
  }
  for (const auto& note : notes) table.notes.push_back(note);
  for (const auto& s : samplers) table.notes.push_back(s->device() + ": " + s->description());
  table.notes.push_back(fmt::format("one sample of all devices took {:.0f} us", reading.cost_us));
  return {{table}, ""};
}

BusyBefore MeasureBusyBefore() {
  const monitor::OtherLoad load = monitor::MeasureOtherLoad(std::chrono::milliseconds(200));
  if (load.measured && load.busy_percent > monitor::kBusyPercent) {
    return {
        "WARNING: the machine was busy before this benchmark: " + monitor::DescribeOtherLoad(load) +
            " in the 200 ms before it began; its figures may be low and noisy",
        true};
  }
  return {"Before this benchmark: " + monitor::DescribeOtherLoad(load) + " (200 ms).", false};
}

StepOutput Bandwidth(devices::Device& device, const BandwidthOptions& options) {
  const auto& type_list = options.types;
  for (const auto& t : type_list) {
    if (t != "d2d" && t != "h2d" && t != "d2h" && t != "bidir") {
      throw Error(ErrorCode::kInvalidArgument, "--type: unknown transfer '" +
                                                   core::EscapeForTerminal(t) +
                                                   "': use d2d, h2d, d2h, bidir");
    }
  }
  const auto size_list = workloads::ParseSizes(options.sizes);
  const workloads::RunnerOptions runner = workloads::CheckedRunnerOptions(
      2, options.min_reps, options.min_time_ms, options.max_time_ms);
  const BusyBefore busy_before = MeasureBusyBefore();
  workloads::Progress progress("bw");
  const auto results = workloads::RunBandwidth(device, type_list, size_list, runner, progress);
  report::ResultTable table;
  table.section = "bandwidth";
  table.title = fmt::format(
      "Bandwidth on {} ({}): GB/s = (bytes read + bytes written) / "
      "median time{}",
      device.properties().id, devices::ComputeUnitsText(device.properties()),
      busy_before.TitleSuffix());
  table.columns = {
      {"case", "Case", 0, false},
      {"type", "Type"},
      {"kernel", "Kernel"},
      {"size", "Size"},
      {.key = "size_bytes",
       .header = "Bytes",
       .precision = 0,
       .terminal = false,
       .unit = Unit::kBytes},
      {"level", "Fits in"},
      {"status", "Status"},
      {.key = "median_ns",
       .header = "Median ms",
       .precision = 4,
       .unit = Unit::kTime,
       .scale = 1e6},
      {"bytes_moved", "Bytes moved", 0, false},
      {.key = "bytes_per_s",
       .header = "GB/s",
       .precision = 1,
       .unit = Unit::kBytesPerSecond,
       .scale = 1e9},
      {.key = "bytes_per_s_p10",
       .header = "GB/s p10",
       .precision = 1,
       .unit = Unit::kBytesPerSecond,
       .scale = 1e9},
      {.key = "bytes_per_s_p90",
       .header = "GB/s p90",
       .precision = 1,
       .unit = Unit::kBytesPerSecond,
       .scale = 1e9},
      {.key = "spread_pct", .header = "Spread %", .precision = 1, .unit = Unit::kPercent},
      {"repeat", "Repeat", 0, false},
      {"flags", "Flags"},
      {"note", "Note"}};
  int failed = 0;
  for (const auto& r : results) {
    const bool measured = r.status != workloads::Status::kWaived;
    failed += r.status == workloads::Status::kFailed;
    const double spread = measured ? workloads::Spread(r.stats) : 0;
    const bool noisy = r.status == workloads::Status::kOk && spread > workloads::kNoisySpread;
    const auto gbps = [&](double ms) {
      return ms > 0 ? Value{r.bytes_moved / (ms / 1e3) / 1e9} : Value{};
    };
    table.AddRow(
        {r.key, r.type, r.kernel, measured ? workloads::FormatBytes(r.size_bytes) : "all",
         static_cast<int64_t>(r.size_bytes), measured ? Value{r.level} : Value{},
         std::string(workloads::Name(r.status)), measured ? Value{r.stats.median_ms} : Value{},
         static_cast<int64_t>(r.bytes_moved), measured ? Value{r.bytes_per_second / 1e9} : Value{},
         measured ? gbps(r.stats.p90_ms) : Value{}, measured ? gbps(r.stats.p10_ms) : Value{},
         measured && r.stats.median_ms > 0 ? Value{100 * spread} : Value{}, int64_t{r.repeat},
         noisy ? "noisy" : "",
         noisy ? fmt::format("noisy: p10-p90 spread {:.0f}% of the median (over {:.0f}%)",
                             100 * spread, 100 * workloads::kNoisySpread) +
                     (r.reason.empty() ? "" : "; " + r.reason)
               : r.reason});
  }
  table.notes.push_back(busy_before.note);
  table.notes.push_back(
      "1 GB = 1e9 bytes. d2d: memcpy and copy move 2 arrays per element (read one, "
      "write one), scale 2, add and triad 3; write-allocate traffic is not counted. "
      "h2d, d2h: the bytes crossing the host link, each counted once; bidir: h2d and d2h "
      "at once, both directions counted. 'pinned' copies from page-locked host memory, "
      "'pageable' from malloc'd memory.");
  table.notes.push_back(device.properties().capabilities.copy_method);
  const devices::DeviceProperties& p = device.properties();
  table.notes.push_back(
      p.caches.empty()
          ? "'Fits in' is n/a: the cache sizes are " +
                (p.caches_source.empty() ? std::string("unknown") : p.caches_source)
          : "'Fits in': the smallest cache level holding each thread's share of the arrays (at "
            "3/4 of its size); cache sizes from " +
                p.caches_source + ".");
  return {{table},
          failed > 0 ? fmt::format("{} bandwidth case(s) failed their data check", failed)
                     : std::string()};
}

StepOutput Monitor(devices::Device* device, const MonitorOptions& options) {
  monitor::Load load;
  workloads::WorkloadSpec spec;
  if (!options.command.empty()) {
    load = monitor::ProgramLoad(options.command);
  } else {
    spec = workloads::ParseWorkload(options.workload);
    if (device == nullptr) {
      throw Error(ErrorCode::kInvalidArgument, "the built-in workload needs a device");
    }
    load.description = "the built-in workload " + spec.Describe();
    load.records_operators = true;
    load.run = [device, spec](const std::atomic<bool>& stop,
                              std::vector<std::unique_ptr<monitor::Sampler>>&) {
      const workloads::WorkloadResult work = workloads::RunWorkload(*device, spec, stop);
      return fmt::format("Work completed: {:.1f} s, {} matmuls of {}^3 {}, {:.1f} GFLOP/s",
                         work.seconds, work.operations, spec.size, devices::Name(spec.dtype),
                         work.seconds > 0 ? work.flops / work.seconds / 1e9 : 0.0);
    };
  }
  const monitor::LoadComparison c = monitor::CompareIdleAndLoad(options.comparison, load);
  report::ResultTable table;
  table.section = "monitor";
  table.title = c.title;
  table.columns = {{"metric", "Metric"},    {"idle", "Idle", 1}, {"loaded", "Loaded", 1},
                   {"change", "Change", 1}, {"unit", "Unit"},    {"note", "Note"}};
  const auto value = [](const std::optional<double>& v) { return v ? Value{*v} : Value{}; };
  const auto add = [&](const monitor::MetricComparison& m) {
    table.AddRow({m.metric, value(m.idle), value(m.loaded),
                  m.idle && m.loaded ? Value{*m.loaded - *m.idle} : Value{}, m.unit, m.note});
  };
  if (c.trace_busy) add(*c.trace_busy);
  for (const auto& m : c.metrics) add(m);
  table.notes = c.notes;
  return {{table}, ""};
}

}  // namespace opscope::suite
