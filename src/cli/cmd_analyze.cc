// `opscope analyze TRACE...`: reads traces of opscope, PyTorch/Kineto and
// torch_npu, and reports operator statistics.
#include <fmt/format.h>

#include "analyze/importer.h"
#include "analyze/op_stats.h"
#include "cli/common.h"

namespace opscope::cli {
namespace {

using report::Value;

struct AnalyzeCommand {
  std::vector<std::string> traces;
  std::string format = "table";
  std::string out;
  int top = 20;

  void Run() const {
    if (top < 0) throw Error(ErrorCode::kInvalidArgument, "--top must be >= 0 (0: all)");
    std::vector<report::ResultTable> tables;
    for (const std::string& path : traces) {
      const analyze::TraceModel model = analyze::ImportTrace(path);
      const auto stats = analyze::ComputeOpStats(model);
      report::ResultTable table;
      table.section = "operators";
      table.title = fmt::format("{} ({}): {} complete events on {} tracks", path, model.format,
                                model.size(), model.tracks.size());
      table.columns = {{"trace", "Trace", 0, false},   {"format", "Format", 0, false},
                       {"events", "Events", 0, false}, {"operator", "Operator"},
                       {"category", "Category"},       {"count", "Count"},
                       {"total_us", "Total us", 3},    {"mean_us", "Mean us", 3},
                       {"p50_us", "p50 us", 3},        {"p99_us", "p99 us", 3},
                       {"max_us", "Max us", 3},        {"share_pct", "Share %", 1},
                       {"flops", "FLOPs", 0, false},   {"bytes", "Bytes", 0, false}};
      const size_t shown = top == 0 ? stats.size() : std::min<size_t>(stats.size(), top);
      for (size_t i = 0; i < shown; ++i) {
        const auto& s = stats[i];
        table.AddRow({path, model.format, static_cast<int64_t>(model.size()), s.name,
                      std::string(analyze::Name(s.cls)), s.count, s.total_ns / 1e3, s.mean_ns / 1e3,
                      s.p50_ns / 1e3, s.p99_ns / 1e3, s.max_ns / 1e3, s.share_pct,
                      s.flops >= 0 ? Value{s.flops} : Value{},
                      s.bytes >= 0 ? Value{s.bytes} : Value{}});
      }
      if (shown < stats.size()) {
        table.notes.push_back(
            fmt::format("{} more operators (--top 0 lists all)", stats.size() - shown));
      }
      table.notes.push_back(
          "Share %: of all device time for kernels, copies and sets; of the same class's time "
          "otherwise. Host times include nested calls.");
      tables.push_back(std::move(table));
    }
    Emit(CommonOptions{"", format, out, 0}, "analyze", tables);
  }
};

}  // namespace

void RegisterAnalyze(CLI::App& app) {
  auto command = std::make_shared<AnalyzeCommand>();
  CLI::App* sub = app.add_subcommand(
      "analyze", "operator statistics of traces from opscope, PyTorch/Kineto and torch_npu");
  sub->add_option("traces", command->traces, "trace files (.json or .json.gz)")->required();
  sub->add_option("--format", command->format, "table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  sub->add_option("--out", command->out, "write the output to this file");
  sub->add_option("--top", command->top, "operators per trace (default 20; 0: all)");
  sub->callback([command] { command->Run(); });
}

}  // namespace opscope::cli
