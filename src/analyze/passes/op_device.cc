#include "analyze/passes/op_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "analyze/analysis.h"
#include "analyze/flat_map.h"
#include "analyze/links.h"
#include "analyze/names.h"
#include "analyze/passes/op_stats.h"

namespace opscope::analyze {
namespace {

constexpr std::string_view kModulePrefix = "nn.Module: ";

// Rows found by a 64-bit key, in order of first appearance.
class Rows {
 public:
  OpDeviceRow& At(int64_t key, uint32_t& index) {
    uint32_t& slot = index_[key];
    if (slot == 0) {
      rows_.emplace_back();
      slot = static_cast<uint32_t>(rows_.size());
    }
    index = slot - 1;
    return rows_[index];
  }
  const uint32_t* Find(int64_t key) const { return index_.Find(key); }
  std::vector<OpDeviceRow>& rows() { return rows_; }

 private:
  Int64Map<uint32_t> index_;  // key -> row + 1
  std::vector<OpDeviceRow> rows_;
};

// The device time behind each row, per kernel name.
class KernelsBehind {
 public:
  void Add(uint32_t row, uint32_t name, int64_t ns) {
    Tally& t = tally_[static_cast<int64_t>(uint64_t{row} << 32 | name)];
    t.ns += ns;
    ++t.count;
  }
  // Each row's top_kernels text.
  void Describe(const TraceModel& model, std::vector<OpDeviceRow>& rows) const {
    std::vector<std::vector<std::pair<Tally, uint32_t>>> of(rows.size());
    tally_.ForEach([&](int64_t key, const Tally& t) {
      of[static_cast<size_t>(static_cast<uint64_t>(key) >> 32)].emplace_back(
          t, static_cast<uint32_t>(key & 0xffffffff));
    });
    for (size_t r = 0; r < rows.size(); ++r) {
      auto& kernels = of[r];
      std::sort(kernels.begin(), kernels.end(), [&](const auto& a, const auto& b) {
        if (a.first.ns != b.first.ns) return a.first.ns > b.first.ns;
        return model.String(a.second) < model.String(b.second);
      });
      std::string text;
      for (size_t k = 0; k < kernels.size() && k < 3; ++k) {
        text +=
            fmt::format("{}{} x{} {:.3f} ms", k == 0 ? "" : "; ", model.String(kernels[k].second),
                        kernels[k].first.count, kernels[k].first.ns / 1e6);
      }
      if (kernels.size() > 3) text += fmt::format("; {} more", kernels.size() - 3);
      rows[r].top_kernels = std::move(text);
    }
  }

 private:
  struct Tally {
    int64_t ns = 0, count = 0;
  };
  Int64Map<Tally> tally_;
};

void Rank(std::vector<OpDeviceRow>& rows, bool by_total) {
  std::sort(rows.begin(), rows.end(), [&](const OpDeviceRow& a, const OpDeviceRow& b) {
    const int64_t da = by_total ? a.device_total_ns : a.device_self_ns;
    const int64_t db = by_total ? b.device_total_ns : b.device_self_ns;
    if (da != db) return da > db;
    const int64_t ha = by_total ? a.host_total_ns : a.host_self_ns;
    const int64_t hb = by_total ? b.host_total_ns : b.host_self_ns;
    if (ha != hb) return ha > hb;
    if (a.name != b.name) return a.name < b.name;
    return a.shapes < b.shapes;
  });
}

}  // namespace

OpDeviceTime ComputeOpDevice(const TraceModel& model, const EventLinks& links) {
  return ComputeOpDevice(model, links, SelfTimes(model));
}

OpDeviceTime ComputeOpDevice(const TraceModel& model, const EventLinks& links,
                             std::span<const int64_t> self) {
  OpDeviceTime out;
  Rows ops, shapes, modules;
  // Input shapes as recorded (Kineto's Input Dims, else opscope's shapes),
  // without white space: a file written indented and one written compact
  // give the same text. 0: none; else an index + 1 into shape_texts.
  Int64Map<uint32_t> shape_of_raw;
  std::unordered_map<std::string, uint32_t> shape_index;
  std::vector<std::string> shape_texts;
  const auto shapes_of = [&](size_t e) -> uint32_t {
    const uint32_t raw = model.input_dims[e] != 0 ? model.input_dims[e] : model.shapes[e];
    if (raw == 0) return 0;
    uint32_t& slot = shape_of_raw[raw];
    if (slot == 0) {
      std::string text;
      for (const char c : model.String(raw)) {
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') text += c;
      }
      const auto [it, added] =
          shape_index.emplace(std::move(text), static_cast<uint32_t>(shape_texts.size() + 1));
      if (added) shape_texts.push_back(it->first);
      slot = it->second;
    }
    return slot;
  };
  const auto shape_key = [&](size_t e, uint32_t s) {
    return static_cast<int64_t>(uint64_t{model.name[e]} << 32 | s);
  };
  // Modules: a Python event named "nn.Module: X", or an operator carrying
  // opscope's module argument (outermost of a run of one module: an operator
  // nested in another of the same module is inside that one's span).
  std::vector<bool> module_name =
      ClassifyNames(model, [](std::string_view name) { return name.starts_with(kModulePrefix); });
  const auto is_module = [&](int32_t e) {
    const size_t i = static_cast<size_t>(e);
    if (model.cls[i] == EventClass::kPython) return static_cast<bool>(module_name[model.name[i]]);
    if (model.cls[i] != EventClass::kHostOp || model.module[i] == 0) return false;
    const int32_t p = links.parent[i];
    return p < 0 || model.module[static_cast<size_t>(p)] != model.module[i];
  };
  // A module event's row, by its path: the enclosing module's path, '/', its
  // own name (opscope's module argument is a path already).
  Int64Map<uint32_t> module_row;  // event -> row + 1
  std::unordered_map<std::string, int64_t> path_ids;
  const auto row_of_module = [&](auto&& self_fn, int32_t e) -> uint32_t {
    if (const uint32_t* r = module_row.Find(e)) return *r - 1;
    std::string path;
    const size_t i = static_cast<size_t>(e);
    if (model.cls[i] == EventClass::kPython) {
      path = std::string(model.String(model.name[i]).substr(kModulePrefix.size()));
      int32_t outer = -1;
      ForEachAncestor(links, links.parent[i], [&](int32_t a) {
        if (!is_module(a) || model.cls[static_cast<size_t>(a)] != EventClass::kPython) return true;
        outer = a;
        return false;
      });
      if (outer >= 0) path = modules.rows()[self_fn(self_fn, outer)].name + "/" + path;
    } else {
      path = std::string(model.String(model.module[i]));
    }
    const auto [it, added] = path_ids.emplace(path, static_cast<int64_t>(path_ids.size()));
    uint32_t row = 0;
    OpDeviceRow& r = modules.At(it->second, row);
    if (added) r.name = path, r.host_self_ns = -1;
    module_row[e] = row + 1;
    return row;
  };

  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    if (IsDevice(cls)) {
      out.has_device = true;
      ++out.tasks;
      out.device_ns += model.duration_ns[e];
      continue;
    }
    if (cls == EventClass::kHostOp) {
      uint32_t row = 0;
      OpDeviceRow& op = ops.At(model.name[e], row);
      if (op.calls == 0) op.name = std::string(model.String(model.name[e]));
      ++op.calls;
      op.host_self_ns += self[e];
      op.host_total_ns += model.duration_ns[e];
      if (const uint32_t s = shapes_of(e); s != 0) {
        OpDeviceRow& by = shapes.At(shape_key(e, s), row);
        if (by.calls == 0) {
          by.name = op.name;
          by.shapes = shape_texts[s - 1];
        }
        ++by.calls;
        by.host_self_ns += self[e];
        by.host_total_ns += model.duration_ns[e];
      }
    }
    if ((cls == EventClass::kPython || cls == EventClass::kHostOp) &&
        is_module(static_cast<int32_t>(e))) {
      OpDeviceRow& m = modules.rows()[row_of_module(row_of_module, static_cast<int32_t>(e))];
      ++m.calls;
      m.host_total_ns += model.duration_ns[e];
    }
  }

  // Each linked task to its launcher (self) and to every operator and module
  // around it (total).
  KernelsBehind op_kernels, shape_kernels;
  std::vector<uint32_t> touched;  // modules counted for this task
  for (size_t d = 0; d < model.size(); ++d) {
    if (!IsDevice(model.cls[d]) || links.launcher[d] < 0) continue;
    const int32_t launcher = links.launcher[d];
    const int64_t ns = model.duration_ns[d];
    ++out.linked_tasks;
    out.linked_ns += ns;
    touched.clear();
    ForEachAncestor(links, launcher, [&](int32_t a) {
      const size_t i = static_cast<size_t>(a);
      if (model.cls[i] == EventClass::kHostOp) {
        const uint32_t row = *ops.Find(model.name[i]) - 1;
        OpDeviceRow& op = ops.rows()[row];
        op.device_total_ns += ns;
        ++op.kernels_total;
        op_kernels.Add(row, model.name[d], ns);
        if (a == launcher) op.device_self_ns += ns, ++op.kernels;
        if (const uint32_t s = shapes_of(i); s != 0) {
          const uint32_t srow = *shapes.Find(shape_key(i, s)) - 1;
          OpDeviceRow& by = shapes.rows()[srow];
          by.device_total_ns += ns;
          ++by.kernels_total;
          shape_kernels.Add(srow, model.name[d], ns);
          if (a == launcher) by.device_self_ns += ns, ++by.kernels;
        }
      }
      if (is_module(a)) {
        const uint32_t row = row_of_module(row_of_module, a);
        if (std::find(touched.begin(), touched.end(), row) == touched.end()) {
          OpDeviceRow& m = modules.rows()[row];
          m.device_total_ns += ns;
          ++m.kernels_total;
          if (touched.empty()) m.device_self_ns += ns, ++m.kernels;
          touched.push_back(row);
        }
      }
      return true;
    });
  }
  op_kernels.Describe(model, ops.rows());
  shape_kernels.Describe(model, shapes.rows());
  out.ops = std::move(ops.rows());
  out.by_shape = std::move(shapes.rows());
  out.modules = std::move(modules.rows());
  Rank(out.ops, false);
  Rank(out.by_shape, false);
  Rank(out.modules, true);
  return out;
}

std::string DeviceNote(const OpDeviceTime& d) {
  return fmt::format(
      "Device self: the device tasks (kernels, copies, sets) the operator launched itself "
      "(External id, or its launch call's correlation id); device total: with those launched by "
      "the operators nested in it. {} of {} tasks, {:.3f} of {:.3f} ms of device time, have a "
      "launching operator{}.",
      d.linked_tasks, d.tasks, d.linked_ns / 1e6, d.device_ns / 1e6,
      d.linked_tasks < d.tasks ? "; the rest (no launch record, or one outside every operator) "
                                 "are in the kernels table only"
                               : "");
}

namespace {

using core::ResultTable;
using core::Unit;
using core::Value;

// Operators per input shapes, and modules, with their device time.
void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const OpDeviceTime& d = a.op_device;
  const std::string path(c.path);
  const auto device = [&](int64_t ns) { return d.has_device ? Value{ns} : Value{}; };
  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = d.by_shape.empty();
    table.section = "operators_by_shape";
    table.title = d.has_device ? "Framework operators per input shapes, by device self time"
                               : "Framework operators per input shapes, by host self time";
    table.columns = {
        {"trace", "Trace", 0, false},
        {"operator", "Name"},
        {"input_shapes", "Input shapes"},
        {"calls", "Calls"},
        {.key = "host_self_ns", .header = "Host self", .precision = 3, .unit = Unit::kTime},
        {.key = "host_total_ns", .header = "Host total", .precision = 3, .unit = Unit::kTime},
        {.key = "device_self_ns", .header = "Device self", .precision = 3, .unit = Unit::kTime},
        {.key = "device_total_ns", .header = "Device total", .precision = 3, .unit = Unit::kTime},
        {"kernels", "Kernels"},
        {"kernels_total", "Kernels in total", 0, false},
        {"top_kernels", "Kernels behind it", 0, false}};
    const size_t shown = c.Shown(d.by_shape.size(), table);
    for (size_t i = 0; i < shown; ++i) {
      const OpDeviceRow& r = d.by_shape[i];
      table.AddRow({path, r.name, r.shapes, r.calls, r.host_self_ns, r.host_total_ns,
                    device(r.device_self_ns), device(r.device_total_ns), device(r.kernels),
                    device(r.kernels_total), d.has_device ? Value{r.top_kernels} : Value{}});
    }
    table.notes.push_back(
        "One row per operator and input shapes as the trace records them (Kineto's Input Dims, "
        "opscope's shapes); operators whose calls record no shapes are in the operators table "
        "only.");
    if (d.has_device) table.notes.push_back(DeviceNote(d));
    tables.push_back(std::move(table));
  }
  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = d.modules.empty();
    table.section = "modules";
    table.title = d.has_device ? "Modules by device time" : "Modules by host time";
    table.columns = {
        {"trace", "Trace", 0, false},
        {"module", "Module"},
        {"calls", "Calls"},
        {.key = "host_total_ns", .header = "Host total", .precision = 3, .unit = Unit::kTime},
        {.key = "device_self_ns", .header = "Device self", .precision = 3, .unit = Unit::kTime},
        {.key = "device_total_ns", .header = "Device total", .precision = 3, .unit = Unit::kTime},
        {"kernels", "Kernels"},
        {"kernels_total", "Kernels in total", 0, false}};
    const size_t shown = c.Shown(d.modules.size(), table);
    for (size_t i = 0; i < shown; ++i) {
      const OpDeviceRow& r = d.modules[i];
      table.AddRow({path, r.name, r.calls, r.host_total_ns, device(r.device_self_ns),
                    device(r.device_total_ns), device(r.kernels), device(r.kernels_total)});
    }
    table.notes.push_back(
        "A module's path is the chain of nn.Module spans around it (Kineto with_modules or "
        "with_stack), or opscope's module argument; device total: the tasks launched inside it; "
        "device self: those not inside a nested module.");
    tables.push_back(std::move(table));
  }
}

}  // namespace

Pass OpDevicePass() {
  return {"op_device",
          "Which framework operators (per input shapes, per module) cause the device time?",
          // After op_stats, not beside it: the two passes' temporaries are not held at once.
          {"links", "op_stats", kSelfTimesPass},
          [](const TraceModel& model, Analysis& a) {
            a.op_device = ComputeOpDevice(model, a.links, SelfTimesOf(a));
          },
          Tables};
}

}  // namespace opscope::analyze
