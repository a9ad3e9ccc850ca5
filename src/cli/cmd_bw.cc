// `opscope bw`: bandwidth by transfer type over a size sweep.
#include <fmt/format.h>

#include "cli/common.h"
#include "core/text.h"
#include "workloads/memory_bench.h"

namespace opscope::cli {
namespace {

using report::Value;

struct BandwidthCommand {
  CommonOptions common;
  std::string types = "d2d,h2d,d2h,bidir";
  std::string sizes = "4K..1G";
  int min_reps = 10;
  double min_time_ms = 100;

  void Run() const {
    const auto type_list = SplitList(types, "--type");
    for (const auto& t : type_list) {
      if (t != "d2d" && t != "h2d" && t != "d2h" && t != "bidir") {
        throw Error(ErrorCode::kInvalidArgument, "--type: unknown transfer '" +
                                                     core::EscapeForTerminal(t) +
                                                     "': use d2d, h2d, d2h, bidir");
      }
    }
    const auto size_list = workloads::ParseSizes(sizes);
    if (min_reps < 1 || !(min_time_ms >= 0)) {
      throw Error(ErrorCode::kInvalidArgument, "--min-reps must be >= 1 and --min-time >= 0");
    }
    workloads::RunnerOptions runner;
    runner.warmup = 2;
    runner.min_reps = min_reps;
    runner.min_time_ms = min_time_ms;
    auto device = OpenDevice(common);
    workloads::Progress progress("bw");
    const auto results = workloads::RunBandwidth(*device, type_list, size_list, runner, progress);
    report::ResultTable table;
    table.section = "bandwidth";
    table.title = fmt::format(
        "Bandwidth on {} ({} threads): GB/s = (bytes read + bytes written) / "
        "median time",
        device->properties().id, device->properties().compute_units);
    table.columns = {{"case", "Case", 0, false},
                     {"type", "Type"},
                     {"kernel", "Kernel"},
                     {"size", "Size"},
                     {"size_bytes", "Bytes", 0, false},
                     {"level", "Fits in"},
                     {"status", "Status"},
                     {"median_ms", "Median ms", 4},
                     {"bytes_moved", "Bytes moved", 0, false},
                     {"gbps", "GB/s", 1},
                     {"gbps_p10", "GB/s p10", 1},
                     {"gbps_p90", "GB/s p90", 1},
                     {"repeat", "Repeat", 0, false},
                     {"note", "Note"}};
    int failed = 0;
    for (const auto& r : results) {
      const bool measured = r.status != workloads::Status::kWaived;
      failed += r.status == workloads::Status::kFailed;
      const auto gbps = [&](double ms) {
        return ms > 0 ? Value{r.bytes_moved / (ms / 1e3) / 1e9} : Value{};
      };
      table.AddRow(
          {r.key, r.type, r.kernel, measured ? workloads::FormatBytes(r.size_bytes) : "all",
           static_cast<int64_t>(r.size_bytes), measured ? Value{r.level} : Value{},
           std::string(workloads::Name(r.status)), measured ? Value{r.stats.median_ms} : Value{},
           static_cast<int64_t>(r.bytes_moved),
           measured ? Value{r.bytes_per_second / 1e9} : Value{},
           measured ? gbps(r.stats.p90_ms) : Value{}, measured ? gbps(r.stats.p10_ms) : Value{},
           int64_t{r.repeat}, r.reason});
    }
    table.notes.push_back(
        "1 GB = 1e9 bytes. d2d: memcpy and copy move 2 arrays per element (read one, "
        "write one), scale 2, add and triad 3; write-allocate traffic is not counted. "
        "h2d, d2h: the bytes crossing the host link, each counted once; bidir: h2d and d2h "
        "at once, both directions counted. 'pinned' copies from page-locked host memory, "
        "'pageable' from malloc'd memory.");
    table.notes.push_back(device->properties().capabilities.copy_method);
    table.notes.push_back(
        "'Fits in': the smallest cache level holding each thread's share of the "
        "arrays (at 3/4 of its size).");
    Emit(common, "bw", {table});
    if (failed > 0) {
      throw Error(ErrorCode::kInternal,
                  fmt::format("{} bandwidth case(s) failed their data check", failed));
    }
  }
};

}  // namespace

void RegisterBandwidth(CLI::App& app) {
  auto command = std::make_shared<BandwidthCommand>();
  CLI::App* sub =
      app.add_subcommand("bw", "memory bandwidth: d2d, h2d, d2h, bidir over a size sweep");
  AddCommonOptions(*sub, command->common, "write the output to this file");
  sub->add_option("--type", command->types,
                  "transfer types, comma-separated (default d2d,h2d,d2h,bidir)");
  sub->add_option("--sizes", command->sizes, "4K..1G (powers of four) or a list like 64K,1M,256M");
  sub->add_option("--min-reps", command->min_reps, "minimum timed repetitions (default 10)");
  sub->add_option("--min-time", command->min_time_ms,
                  "minimum total timed ms per case (default 100)");
  sub->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
