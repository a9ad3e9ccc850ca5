// Communication operations whose copies between chips are not a whole number
// of 512-byte units: msprof-analyze's advisor's "Byte Alignment Analysis"
// (its rules/en/byte_alignment.yaml, min_size 512, and ByteAlignmentChecker):
// of an HCCL operation's Memcpy and Reduce_Inline tasks over SDMA on a link
// between chips (not ON_CHIP) that move more than 512 bytes, those whose
// size is not a multiple of 512 move data less efficiently; the operation is
// named with its time in such tasks. One analysis in one file: its pass,
// table and rule, registered with one line in registry.cc (docs/seams.md).
//
// The tasks are torch_npu's communication plane tasks (trace_view.json's
// "size(Byte)", "transport type", "link type"; the database's
// COMMUNICATION_TASK_INFO size, transportType, linkType); each belongs to
// the HCCL operation (an event named hcom_*) whose span holds its start.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyze/analysis.h"
#include "analyze/names.h"
#include "analyze/passes/pass.h"

namespace opscope::analyze {
namespace {

constexpr std::string_view kPassName = "byte_alignment";
constexpr int64_t kAlignBytes = 512;
// The share of the checked tasks' time in unaligned ones from which the rule
// warns (msprof-analyze's priority: low under 20%, high from 70%).
constexpr double kWarningPct = 20;
// An operation that started this long before a task (a minute) holds none:
// the search for the one that does stops there.
constexpr int64_t kFarNs = int64_t{60} * 1000 * 1000 * 1000;

struct UnalignedOp {
  std::string name;
  int64_t bytes = 0;         // the checked tasks' bytes
  int64_t ns = 0;            // their time
  int64_t unaligned_ns = 0;  // the time of those not a multiple of 512 bytes
  int64_t unaligned = 0;     // how many
};

struct ByteAlignment {
  int64_t checked_ns = 0, unaligned_ns = 0;  // over every operation
  std::vector<UnalignedOp> ops;              // operations with an unaligned task, most time first
};

bool IsCopyTask(std::string_view name) {
  const std::string n = Lower(name);
  return n == "memcpy" || n == "reduce_inline" || n == "reduce inline";
}

ByteAlignment Compute(const TraceModel& model) {
  ByteAlignment out;
  // The tasks to check (msprof-analyze's pre-check: a copy task over SDMA
  // between chips, over 512 bytes); none in a trace that records no transport.
  std::vector<size_t> tasks;
  for (const TraceModel::CollectiveArgs& a : model.collective_args) {
    const size_t e = a.event;
    if (e < model.size() && a.transport == 0 && a.link > 0 && model.bytes[e] > kAlignBytes &&
        IsCopyTask(model.String(model.name[e]))) {
      tasks.push_back(e);
    }
  }
  if (tasks.empty()) return out;
  // The HCCL operations' spans, by start (each name judged once).
  std::vector<size_t> ops;
  std::vector<int8_t> is_op(model.string_count(), -1);
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kCommunication) continue;
    int8_t& op = is_op[model.name[e]];
    if (op < 0) op = Lower(model.String(model.name[e])).starts_with("hcom");
    if (op == 1) ops.push_back(e);
  }
  std::sort(ops.begin(), ops.end(),
            [&](size_t a, size_t b) { return model.start_ns[a] < model.start_ns[b]; });
  std::map<size_t, UnalignedOp> by_op;
  for (const size_t e : tasks) {
    const int64_t t = model.start_ns[e];
    auto it = std::upper_bound(ops.begin(), ops.end(), t,
                               [&](int64_t v, size_t o) { return v < model.start_ns[o]; });
    // The latest operation to start at or before the task that still holds it.
    size_t op = SIZE_MAX;
    while (it != ops.begin()) {
      --it;
      if (model.start_ns[*it] + model.duration_ns[*it] >= t) {
        op = *it;
        break;
      }
      if (model.start_ns[*it] + kFarNs < t) break;  // far before: none holds it
    }
    if (op == SIZE_MAX) continue;
    UnalignedOp& u = by_op[op];
    u.name = std::string(model.String(model.name[op]));
    u.bytes += model.bytes[e];
    u.ns += model.duration_ns[e];
    out.checked_ns += model.duration_ns[e];
    if (model.bytes[e] % kAlignBytes != 0) {
      ++u.unaligned;
      u.unaligned_ns += model.duration_ns[e];
      out.unaligned_ns += model.duration_ns[e];
    }
  }
  for (auto& [op, u] : by_op) {
    if (u.unaligned > 0) out.ops.push_back(std::move(u));
  }
  std::stable_sort(out.ops.begin(), out.ops.end(), [](const UnalignedOp& a, const UnalignedOp& b) {
    return a.unaligned_ns > b.unaligned_ns;
  });
  return out;
}

using core::ResultTable;
using core::Unit;
using core::Value;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const auto* b = a.results.Get<ByteAlignment>(kPassName);
  if (b == nullptr || b->ops.empty()) return;
  ResultTable table;
  table.section = std::string(kPassName);
  table.title = fmt::format(
      "Communication operations whose copies between chips are not whole 512-byte units: {}, "
      "{:.3f} ms of {:.3f} ms in such tasks",
      b->ops.size(), b->unaligned_ns / 1e6, b->checked_ns / 1e6);
  table.columns = {
      {"trace", "Trace", 0, false},
      {"operation", "Operation"},
      {.key = "bytes", .header = "Size", .precision = 2, .unit = Unit::kBytes},
      {.key = "time_ns", .header = "Time", .precision = 3, .unit = Unit::kTime},
      {.key = "unaligned_ns", .header = "Unaligned time", .precision = 3, .unit = Unit::kTime},
      {"unaligned_tasks", "Unaligned tasks"},
      {.key = "bytes_per_s",
       .header = "GB/s",
       .precision = 2,
       .unit = Unit::kBytesPerSecond,
       .scale = 1e9}};
  const std::string path(c.path);
  for (const UnalignedOp& u : b->ops) {
    table.AddRow({path, u.name, u.bytes, u.ns, u.unaligned_ns, u.unaligned,
                  u.ns > 0 ? Value{static_cast<double>(u.bytes) / u.ns} : Value{}});
  }
  table.notes.push_back(
      "Of each HCCL operation's Memcpy and Reduce_Inline tasks over SDMA between chips (not "
      "ON_CHIP) that move more than 512 bytes (msprof-analyze's byte-alignment rule): size, time, "
      "and the time of those whose size is not a multiple of 512 bytes.");
  tables.push_back(std::move(table));
}

void ByteAlignmentRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* b = c.analysis.results.Get<ByteAlignment>(kPassName);
  if (b == nullptr || b->ops.empty()) return;
  std::string names;
  for (size_t i = 0; i < b->ops.size() && i < 3; ++i) {
    names += fmt::format("{}{} ({} task{}, {:.3f} ms)", i == 0 ? "" : "; ", b->ops[i].name,
                         b->ops[i].unaligned, b->ops[i].unaligned == 1 ? "" : "s",
                         b->ops[i].unaligned_ns / 1e6);
  }
  if (b->ops.size() > 3) names += fmt::format("; {} more", b->ops.size() - 3);
  const double pct = Pct(b->unaligned_ns, b->checked_ns);
  out.push_back(
      {"byte_alignment", pct >= kWarningPct ? Severity::kWarning : Severity::kInfo,
       fmt::format("{} communication operation{} copy data between chips in sizes that are not "
                   "whole 512-byte units ({:.1f}% of the time of such copies)",
                   b->ops.size(), b->ops.size() == 1 ? "" : "s", pct),
       names + " (the byte_alignment table)",
       "Make the communicated tensors' sizes multiples of 512 bytes (pad the bucket or the "
       "tensor: with fp16, multiples of 256 elements); HCCL's engineers can say how a given "
       "collective splits its data."});
}

}  // namespace

Pass ByteAlignmentPass() {
  return {kPassName,
          "Do the communication operations copy data between chips in whole 512-byte units?",
          {},
          [](const TraceModel& model, Analysis& a) { a.results.Set(kPassName, Compute(model)); },
          Tables,
          {{"byte_alignment",
            {std::string_view(kPassName)},
            [](const Thresholds&) {
              return fmt::format(
                  "an HCCL operation's Memcpy or Reduce_Inline task over SDMA between chips "
                  "(not ON_CHIP) moves more than {0} bytes and not a multiple of {0} "
                  "(msprof-analyze's byte-alignment rule); a warning where such tasks take {1:g}% "
                  "of those checked or more",
                  kAlignBytes, kWarningPct);
            },
            ByteAlignmentRule}}};
}

}  // namespace opscope::analyze
