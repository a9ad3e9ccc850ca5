// Layout conversions and what copies do: the pass, its tables and its rule.
#include "analyze/passes/layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analyze/analysis.h"
#include "analyze/flat_map.h"
#include "analyze/links.h"
#include "analyze/names.h"

namespace opscope::analyze {
namespace {

std::string FamilyOfKernel(std::string_view name, std::string_view op_type) {
  const std::string n = Lower(name);
  if (op_type.starts_with("Trans") || Contains(n, "transdata")) return "TransData";
  if (Contains(n, "transpose")) return "Transpose";
  if (Contains(n, "reorder")) return "oneDNN reorder";
  return "NCHW<->NHWC";
}

std::string FamilyOfOperator(std::string_view name) {
  return FunctionOf(name) == "contiguous" ? "contiguous" : "format cast";
}

std::string CopyKind(const TraceModel& model, size_t e) {
  if (model.cls[e] == EventClass::kMemset) return "memset";
  if (model.cls[e] != EventClass::kMemcpy) return "copy kernel";
  const CopyDirection direction = model.Copy(e).direction;
  return direction == CopyDirection::kUnknown ? "memcpy" : std::string("memcpy ") + Name(direction);
}

// What a count and time are of ("NCHW->NC1HWC0", "Conv2D"), the four with the
// most time first: "Conv2D x15 (0.384 ms), ..., 2 more".
using Counted = std::pair<std::string, std::pair<int64_t, int64_t>>;  // (count, ns)
std::string MostTime(std::vector<Counted> v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  std::string out;
  for (size_t i = 0; i < v.size() && i < 4; ++i) {
    out += fmt::format("{}{} x{} ({:.3f} ms)", i == 0 ? "" : ", ", v[i].first, v[i].second.first,
                       v[i].second.second / 1e6);
  }
  if (v.size() > 4) out += fmt::format(", {} more", v.size() - 4);
  return out;
}

}  // namespace

LayoutShare ComputeLayoutShare(const TraceModel& model) {
  return ComputeLayoutShare(model, LinkEvents(model));
}

LayoutShare ComputeLayoutShare(const TraceModel& model, const EventLinks& links) {
  LayoutShare out;
  const std::vector<bool> layout_op = ClassifyNames(model, IsLayoutOperator);
  const std::vector<bool> copy_op = ClassifyNames(model, IsCopyOperator);
  int64_t host_total = 0, device_total = 0;
  std::map<std::pair<std::string, std::string>, LayoutItem> items;
  // Per item, per format conversion ("NCHW->NC1HWC0"): count and time.
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::pair<int64_t, int64_t>>>
      formats, causes;
  // The outermost layout / copy operator enclosing an event, -1 none.
  const auto outermost = [&](int32_t e, const std::vector<bool>& test) {
    int32_t found = -1;
    ForEachAncestor(links, e, [&](int32_t p) {
      if (model.cls[static_cast<size_t>(p)] == EventClass::kHostOp &&
          test[model.name[static_cast<size_t>(p)]])
        found = p;
      return true;
    });
    return found;
  };
  std::map<std::pair<std::string, std::string>, CopyUse> copies;
  // A copy operator's launched work, by kind (few events are copy operators:
  // a map, not a string per event).
  std::unordered_map<size_t, std::string> what_of;
  using Tally = std::pair<int64_t, int64_t>;  // count, ns
  struct Kind {
    std::string op_type;
    bool layout_kernel;
    // A layout kernel's row, family, and tallies by format and by cause,
    // found on its first task (map nodes do not move).
    LayoutItem* item = nullptr;
    std::string family;
    std::map<std::string, Tally>*formats = nullptr, *causes = nullptr;
  };
  std::vector<Kind> kinds;
  Int64Map<uint32_t> kind_of;  // (name, category) -> index in kinds + 1
  // A layout kernel's tally of one format conversion (kind, layout id) and of
  // one cause (kind, the operator's name id + 1, 0 for none): each task adds
  // to it without building a string.
  Int64Map<Tally*> format_of, cause_of;
  for (size_t e = 0; e < model.size(); ++e) {
    const EventClass cls = model.cls[e];
    if (IsDevice(cls)) {
      device_total += model.duration_ns[e];
      const std::string_view name = model.String(model.name[e]);
      // Its operator type and whether it converts a layout, once per (name, category).
      uint32_t& kind =
          kind_of[static_cast<int64_t>(uint64_t{model.name[e]} << 32 | model.category[e])];
      if (kind == 0) {
        std::string type(model.String(model.op_type[e]));
        const bool converts = IsLayoutKernel(name, type);
        kinds.push_back({std::move(type), converts});
        kind = static_cast<uint32_t>(kinds.size());
      }
      const std::string& op_type = kinds[kind - 1].op_type;
      const int32_t launcher = links.launcher[e];
      const int32_t layout_parent = launcher >= 0 ? outermost(launcher, layout_op) : -1;
      if (Kind& k = kinds[kind - 1]; k.layout_kernel) {
        if (k.item == nullptr) {
          const std::string shown(op_type.empty() ? name : op_type);
          const std::pair<std::string, std::string> key{shown, "layout kernel"};
          k.item = &items[key];
          k.item->name = shown, k.item->how = "layout kernel";
          k.family = FamilyOfKernel(name, op_type);
          k.formats = &formats[key];
          k.causes = &causes[key];
        }
        LayoutItem& item = *k.item;
        item.family = k.family;  // as the item's last task's kernel says
        ++item.count, item.total_ns += model.duration_ns[e];
        if (model.layout[e] != 0) {
          Tally*& f = format_of[static_cast<int64_t>(uint64_t{kind} << 32 | model.layout[e])];
          if (f == nullptr) f = &(*k.formats)[std::string(model.String(model.layout[e]))];
          ++f->first, f->second += model.duration_ns[e];
        }
        // The operator that needed the conversion: the launching one, or the
        // first around it that is not itself a layout or copy operator
        // (npu_format_cast and copy_ only carry out the conversion).
        int32_t top = -1;
        ForEachAncestor(links, launcher, [&](int32_t p) {
          const size_t u = static_cast<size_t>(p);
          if (model.cls[u] != EventClass::kHostOp) return true;
          top = p;
          return layout_op[model.name[u]] || copy_op[model.name[u]];
        });
        const uint32_t top_name = top >= 0 ? model.name[static_cast<size_t>(top)] + 1 : 0;
        Tally*& c = cause_of[static_cast<int64_t>(uint64_t{kind} << 32 | top_name)];
        if (c == nullptr) {
          c = &(*k.causes)[top_name > 0 ? std::string(model.String(top_name - 1)) : std::string()];
        }
        ++c->first, c->second += model.duration_ns[e];
        out.device_ns += model.duration_ns[e];
      } else if (layout_parent >= 0) {
        const std::string op(model.String(model.name[static_cast<size_t>(layout_parent)]));
        LayoutItem& item = items[{std::string(name), op}];
        item.name = std::string(name), item.family = FamilyOfOperator(op);
        item.how = "launched by " + op;
        ++item.count, item.total_ns += model.duration_ns[e];
        out.device_ns += model.duration_ns[e];
      }
      const int32_t copy_parent = launcher >= 0 ? outermost(launcher, copy_op) : -1;
      if (copy_parent >= 0) {
        std::string& what = what_of[static_cast<size_t>(copy_parent)];
        const std::string kind = CopyKind(model, e);
        if (what.empty()) {
          what = kind;
        } else if (what != kind && what.find(kind) == std::string::npos) {
          what += " + " + kind;
        }
        const std::string op(model.String(model.name[static_cast<size_t>(copy_parent)]));
        copies[{op, kind}].device_ns += model.duration_ns[e];
      }
      continue;
    }
    if (cls != EventClass::kHostOp) continue;
    const int32_t parent = links.parent[e];
    bool top_level = true;
    ForEachAncestor(links, parent, [&](int32_t p) {
      if (model.cls[static_cast<size_t>(p)] == EventClass::kHostOp) top_level = false;
      return top_level;
    });
    if (top_level) host_total += model.duration_ns[e];
    if (layout_op[model.name[e]] && outermost(parent, layout_op) < 0) {
      const std::string op(model.String(model.name[e]));
      LayoutItem& item = items[{op, "host operator"}];
      item.name = op, item.family = FamilyOfOperator(op), item.how = "host operator";
      ++item.count, item.total_ns += model.duration_ns[e];
      out.host_ns += model.duration_ns[e];
    }
  }
  // Copy operators: the outermost of each nest, by what it launched.
  const bool has_device = device_total > 0;
  std::map<std::pair<std::string, std::string>, CopyUse> uses;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kHostOp || !copy_op[model.name[e]]) continue;
    if (outermost(links.parent[e], copy_op) >= 0) continue;
    const std::string op(model.String(model.name[e]));
    const auto launched = what_of.find(e);
    std::string what = launched == what_of.end() ? std::string() : launched->second;
    if (what.empty()) what = has_device ? "nothing on the device (host only)" : "host copy";
    CopyUse& u = uses[{op, what}];
    u.op = op, u.what = what;
    ++u.calls;
    u.host_ns += model.duration_ns[e];
  }
  for (auto& [key, u] : uses) {
    // Device time of the launched work, summed per (op, kind).
    for (const auto& [ck, c] : copies) {
      if (ck.first == u.op && u.what.find(ck.second) != std::string::npos)
        u.device_ns += c.device_ns;
    }
    out.copies.push_back(u);
  }
  std::sort(out.copies.begin(), out.copies.end(), [](const CopyUse& a, const CopyUse& b) {
    return std::max(a.host_ns, a.device_ns) > std::max(b.host_ns, b.device_ns);
  });
  out.host_pct = host_total > 0
                     ? 100.0 * static_cast<double>(out.host_ns) / static_cast<double>(host_total)
                     : 0;
  out.device_pct = device_total > 0 ? 100.0 * static_cast<double>(out.device_ns) /
                                          static_cast<double>(device_total)
                                    : 0;
  for (auto& [key, item] : items) {
    if (const auto it = causes.find(key); it != causes.end()) {
      int64_t unlinked = 0;
      std::vector<Counted> v;
      for (const auto& [op, n] : it->second) {
        if (op.empty()) {
          unlinked = n.first;
        } else {
          v.push_back({op, n});
        }
      }
      const bool linked = !v.empty();
      item.caused_by = MostTime(std::move(v));
      if (linked && unlinked > 0) {
        item.caused_by += fmt::format("; x{} not linked to an operator", unlinked);
      }
    }
    if (const auto it = formats.find(key); it != formats.end()) {
      item.formats = MostTime({it->second.begin(), it->second.end()});
    }
    out.top.push_back(std::move(item));
  }
  std::sort(out.top.begin(), out.top.end(),
            [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  if (out.top.size() > 10) out.top.resize(10);
  return out;
}

namespace {

using core::ResultTable;
using core::Unit;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const LayoutShare* layout = a.results.Get<LayoutShare>(kLayoutPass);
  if (layout == nullptr) return;
  const std::string path(c.path);
  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = layout->host_ns <= 0 && layout->device_ns <= 0;
    table.section = "layout_conversions";
    table.title =
        fmt::format("Layout conversions: {:.1f}% of device time, {:.1f}% of host operator time",
                    layout->device_pct, layout->host_pct);
    table.columns = {{"trace", "Trace", 0, false},
                     {"name", "Kernel or operator"},
                     {"family", "Conversion"},
                     {"how", "Found as"},
                     {.key = "count", .header = "Count", .unit = Unit::kCount},
                     {.key = "total_ns", .header = "Total", .precision = 3, .unit = Unit::kTime},
                     {"formats", "Formats (in->out)"},
                     {"caused_by", "Launched from (operator)"}};
    for (const auto& item : layout->top) {
      table.AddRow({path, item.name, item.family, item.how, item.count, item.total_ns, item.formats,
                    item.caused_by});
    }
    tables.push_back(std::move(table));
  }
  {  // always: empty when nothing was found, its columns kept
    ResultTable table;
    table.hidden_when_empty = layout->copies.empty();
    table.section = "copies";
    table.title = "Copying operators by what they launched";
    table.columns = {{"trace", "Trace", 0, false},
                     {"operator", "Operator"},
                     {"what", "What it did"},
                     {"calls", "Calls"},
                     {.key = "host_ns", .header = "Host", .precision = 3, .unit = Unit::kTime},
                     {.key = "device_ns", .header = "Device", .precision = 3, .unit = Unit::kTime}};
    for (const auto& copy : layout->copies) {
      table.AddRow({path, copy.op, copy.what, copy.calls, copy.host_ns, copy.device_ns});
      if (table.rows.size() == 10) break;
    }
    table.notes.push_back(
        "The outermost copy_/clone/to/contiguous of each nest; a memcpy of a direction is a "
        "transfer, not a layout conversion.");
    tables.push_back(std::move(table));
  }
}

void LayoutRule(const RuleContext& c, std::vector<Finding>& out) {
  const LayoutShare* layout = c.analysis.results.Get<LayoutShare>(kLayoutPass);
  const Thresholds& t = c.thresholds;
  if (layout == nullptr ||
      (layout->device_pct < t.layout_device_pct && layout->host_pct < t.layout_host_pct)) {
    return;
  }
  std::string top;
  std::map<std::string, int64_t> families;
  for (const auto& item : layout->top) {
    top +=
        fmt::format("{}{} ({}) {:.3f} ms{}{}", top.empty() ? "" : "; ", item.name, item.how,
                    item.total_ns / 1e6, item.formats.empty() ? std::string() : ": " + item.formats,
                    item.caused_by.empty() ? std::string() : ", launched from " + item.caused_by);
    families[item.family] += item.total_ns;
  }
  std::string action;
  if (families.count("TransData") || families.count("format cast")) {
    action +=
        "On Ascend, keep tensors in the operators' private formats (NZ/5HD) between "
        "operators instead of casting back to ND (torch_npu.npu_format_cast once, outside "
        "the loop), so TransData does not run around each operator. ";
  }
  if (families.count("NCHW<->NHWC")) {
    action +=
        "cuDNN converts between NCHW and NHWC around convolutions: run the model in "
        "channels_last (model.to(memory_format=torch.channels_last) and the inputs too), "
        "so no conversion is needed. ";
  }
  if (families.count("oneDNN reorder")) {
    action +=
        "oneDNN reorders between plain and blocked layouts: keep activations in the "
        "blocked layout between layers (to_mkldnn / channels_last on CPU). ";
  }
  if (families.count("contiguous") || families.count("Transpose")) {
    action +=
        "Tensors are made contiguous (or transposed) in the hot loop: avoid .contiguous() "
        "after permute/transpose where the next operator accepts strided input, or keep "
        "the layout the consumer wants from the start. ";
  }
  if (!action.empty()) action.pop_back();
  // Judged by what the conversions could cost the run, not by their share of
  // the device's time alone: on a device that mostly idles, a large share of
  // its time is a small part of the trace, and removing it saves little.
  const double span_pct = Pct(layout->device_ns, c.analysis.span.ns());
  const Severity severity =
      span_pct >= 2 * t.layout_device_pct ? Severity::kCritical
      : span_pct >= t.layout_device_pct / 2 || layout->host_pct >= t.layout_host_pct
          ? Severity::kWarning
          : Severity::kInfo;
  std::string evidence = "largest: " + top;
  if (severity == Severity::kInfo && c.analysis.compute_on != ComputeOn::kCpu) {
    evidence += fmt::format(
        ". Their device time is {:.1f}% of the trace's span: the device idles most of it, so "
        "removing them would save little of the run",
        span_pct);
  }
  // A trace without device work: the CPU's operators are the work, and their
  // share is the one measure (no device time to quote).
  const bool cpu = c.analysis.compute_on == ComputeOn::kCpu;
  out.push_back({"layout_conversions", severity,
                 cpu ? fmt::format("Layout conversions take {:.1f}% of the CPU operators' time",
                                   layout->host_pct)
                     : fmt::format("Layout conversions take {:.1f}% of device time ({:.1f}% of "
                                   "the trace's span, {:.1f}% of host operator time)",
                                   layout->device_pct, span_pct, layout->host_pct),
                 evidence, action});
}

}  // namespace

Pass LayoutPass() {
  return {kLayoutPass,
          "How much time goes into layout conversions, and what do copies do?",
          {"links"},
          [](const TraceModel& model, Analysis& a) {
            a.results.Set(kLayoutPass, ComputeLayoutShare(model, a.links));
          },
          Tables,
          {{"layout_conversions",
            {kLayoutPass},
            [](const Thresholds& t) {
              return fmt::format(
                  "layout conversions (TransData, NCHW<->NHWC, oneDNN reorders, contiguous) take "
                  "{:g}% or more of device time or {:g}% of host operator time; judged by their "
                  "device time's share of the trace's span (critical from {:g}%, a warning from "
                  "{:g}% or with the host share, else info: on a device that mostly idles they "
                  "cost the run little)",
                  t.layout_device_pct, t.layout_host_pct, 2 * t.layout_device_pct,
                  t.layout_device_pct / 2);
            },
            LayoutRule}}};
}

}  // namespace opscope::analyze
