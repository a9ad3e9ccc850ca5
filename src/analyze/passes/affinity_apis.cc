// Runs of framework operators that the trace's framework has one fused API
// for, as its reader knows them (TraceModel::fused_apis; on torch_npu, the
// affinity APIs of msprof-analyze's advisor, advisor/rules/
// timeline_fusion_ops.yaml: torch_npu.npu_rms_norm for
// pow-mean-add-rsqrt-mul, torch_npu.npu_rotary_mul for chunk-neg-cat-mul-add,
// ...). The operators the user's code called are the outermost framework
// operators ("aten::" names, not nested in another) of each thread, in the
// order they start; each API's patterns are read over their names (without
// "aten::"), element by element: a name or "(a|b)" alternatives, optionally
// repeated "{m,n}" times, elements joined by '-'. Runs are found left to
// right, the longest match at each operator, never overlapping. Each run's
// device time is that of the tasks its operators (and those nested in them)
// launched.
// One analysis in one file: its pass, table and rule, registered with one
// line in registry.cc (docs/seams.md).
#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "analyze/passes/pass.h"
#include "analyze/passes/steps.h"

namespace opscope::analyze {
namespace {

constexpr std::string_view kPassName = "affinity_apis";
constexpr std::string_view kOpPrefix = "aten::";

struct Element {
  std::vector<std::string> names;
  int min = 1, max = 1;
};
using Pattern = std::vector<Element>;

// "(pow){0,1}-(mean|sum)-rsqrt" -> its elements; an element it cannot read
// makes the pattern empty (never matched).
Pattern ParsePattern(std::string_view text) {
  Pattern out;
  size_t i = 0;
  while (i < text.size()) {
    Element e;
    if (text[i] == '(') {
      const size_t close = text.find(')', i);
      if (close == std::string_view::npos) return {};
      std::string_view inner = text.substr(i + 1, close - i - 1);
      for (size_t bar; (bar = inner.find('|')) != std::string_view::npos;) {
        e.names.emplace_back(inner.substr(0, bar));
        inner.remove_prefix(bar + 1);
      }
      e.names.emplace_back(inner);
      i = close + 1;
    } else {
      size_t end = i;
      while (end < text.size() && text[end] != '-' && text[end] != '{') ++end;
      e.names.emplace_back(text.substr(i, end - i));
      i = end;
    }
    if (i < text.size() && text[i] == '{') {
      const size_t close = text.find('}', i);
      const size_t comma = text.find(',', i);
      if (close == std::string_view::npos || comma == std::string_view::npos || comma > close) {
        return {};
      }
      e.min = std::atoi(std::string(text.substr(i + 1, comma - i - 1)).c_str());
      e.max = std::atoi(std::string(text.substr(comma + 1, close - comma - 1)).c_str());
      if (e.min < 0 || e.max < e.min || e.max > 16) return {};
      i = close + 1;
    }
    if (e.names.empty() || std::any_of(e.names.begin(), e.names.end(),
                                       [](const std::string& n) { return n.empty(); })) {
      return {};
    }
    out.push_back(std::move(e));
    if (i < text.size()) {
      if (text[i] != '-') return {};
      ++i;
    }
  }
  return out;
}

// The end of the longest match of p[k..] at ops[at..], or -1.
int64_t Match(const Pattern& p, size_t k, const std::vector<std::string_view>& ops, size_t at) {
  if (k == p.size()) return static_cast<int64_t>(at);
  const Element& e = p[k];
  // How many of the element's names follow, up to its max.
  int n = 0;
  while (n < e.max && at + n < ops.size() &&
         std::find(e.names.begin(), e.names.end(), ops[at + n]) != e.names.end()) {
    ++n;
  }
  for (int take = n; take >= e.min; --take) {  // the longest first
    const int64_t end = Match(p, k + 1, ops, at + take);
    if (end >= 0) return end;
  }
  return -1;
}

struct ApiRuns {
  std::string api, since, example;
  int64_t runs = 0, ops = 0, host_ns = 0, device_ns = 0, tasks = 0;
  int64_t first_ns = -1;  // the first run's start
};

struct AffinityApis {
  std::vector<ApiRuns> apis;  // by device time (host time without device), descending
  int64_t window_ns = 0;
  bool has_device = false;
};

AffinityApis Compute(const TraceModel& model, const Analysis& a) {
  AffinityApis out;
  if (model.fused_apis.empty()) return out;
  std::vector<std::vector<Pattern>> patterns;
  for (const TraceModel::FusedApi& api : model.fused_apis) {
    auto& list = patterns.emplace_back();
    for (const std::string& p : api.patterns) {
      if (Pattern parsed = ParsePattern(p); !parsed.empty()) list.push_back(std::move(parsed));
    }
  }
  const Intervals window = StepsElseSpan(a.steps, a.span);
  out.window_ns = Total(window);
  const EventLinks& links = a.links;
  // Framework operators of the aten namespace, judged once per name.
  std::vector<int8_t> is_op(model.string_count(), -1);
  const auto aten = [&](size_t e) {
    if (model.cls[e] != EventClass::kHostOp) return false;
    int8_t& k = is_op[model.name[e]];
    if (k < 0) k = model.String(model.name[e]).starts_with(kOpPrefix);
    return k == 1;
  };
  TrackGroups g = GroupByTrack(model, [&](size_t e) {
    if (!aten(e)) return false;
    bool nested = false;
    ForEachAncestor(links, links.parent[e], [&](int32_t p) {
      nested = aten(static_cast<size_t>(p));
      return !nested;
    });
    return !nested;
  });
  SortByOpening(model, g);
  // Each matched operator's API (index into out.apis), for the device tasks.
  std::vector<ApiRuns> runs(model.fused_apis.size());
  std::unordered_map<int32_t, int32_t> api_of;  // few: only the matched operators
  for (size_t t = 0; t + 1 < g.begin.size(); ++t) {
    std::vector<uint32_t> events;
    std::vector<std::string_view> ops;
    for (size_t i = g.begin[t]; i < g.begin[t + 1]; ++i) {
      const uint32_t e = g.events[i];
      events.push_back(e);
      ops.push_back(model.String(model.name[e]).substr(kOpPrefix.size()));
    }
    for (size_t at = 0; at < ops.size();) {
      int64_t best_end = -1;
      size_t best_api = 0;
      for (size_t api = 0; api < patterns.size(); ++api) {
        for (const Pattern& p : patterns[api]) {
          const int64_t end = Match(p, 0, ops, at);
          if (end > static_cast<int64_t>(at) && end > best_end) best_end = end, best_api = api;
        }
      }
      const uint32_t first = events[at];
      if (best_end < 0 || Covered(window, model.start_ns[first], model.start_ns[first] + 1) == 0) {
        ++at;
        continue;
      }
      ApiRuns& r = runs[best_api];
      ++r.runs;
      if (r.first_ns < 0) {
        r.first_ns = model.start_ns[first];
        for (size_t i = at; i < static_cast<size_t>(best_end); ++i) {
          r.example += (i == at ? "" : "-") + std::string(ops[i]);
        }
      }
      for (size_t i = at; i < static_cast<size_t>(best_end); ++i) {
        ++r.ops;
        r.host_ns += model.duration_ns[events[i]];
        api_of[static_cast<int32_t>(events[i])] = static_cast<int32_t>(best_api);
      }
      at = static_cast<size_t>(best_end);
    }
  }
  // Device tasks launched by a matched operator or one nested in it.
  for (size_t e = 0; e < model.size(); ++e) {
    if (!IsDevice(model.cls[e])) continue;
    out.has_device = true;
    const int32_t launcher = links.launcher[e];
    if (launcher < 0 || api_of.empty()) continue;
    int32_t api = -1;
    ForEachAncestor(links, launcher, [&](int32_t p) {
      const auto it = api_of.find(p);
      if (it != api_of.end()) api = it->second;
      return api < 0;
    });
    if (api < 0) continue;
    ++runs[static_cast<size_t>(api)].tasks;
    runs[static_cast<size_t>(api)].device_ns += model.duration_ns[e];
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].runs == 0) continue;
    runs[i].api = model.fused_apis[i].api;
    runs[i].since = model.fused_apis[i].since;
    out.apis.push_back(std::move(runs[i]));
  }
  std::stable_sort(out.apis.begin(), out.apis.end(), [](const ApiRuns& x, const ApiRuns& y) {
    return x.device_ns != y.device_ns ? x.device_ns > y.device_ns : x.host_ns > y.host_ns;
  });
  return out;
}

using core::ResultTable;
using core::Unit;
using core::Value;

void Tables(const Analysis& a, const TableContext& c, std::vector<ResultTable>& tables) {
  const auto* r = a.results.Get<AffinityApis>(kPassName);
  if (r == nullptr || r->apis.empty()) return;
  ResultTable table;
  table.section = std::string(kPassName);
  table.title = "Runs of operators the framework has one fused API for";
  table.columns = {
      {"trace", "Trace", 0, false},
      {"api", "Fused API"},
      {"since", "Since"},
      {.key = "runs", .header = "Runs", .unit = Unit::kCount},
      {.key = "operators", .header = "Operators", .unit = Unit::kCount},
      {.key = "host_ns", .header = "Host", .precision = 3, .unit = Unit::kTime},
      {.key = "device_ns", .header = "Device", .precision = 3, .unit = Unit::kTime},
      {.key = "tasks", .header = "Tasks", .unit = Unit::kCount},
      {"example", "First run"},
      {.key = "first_ns", .header = "At", .precision = 3, .terminal = false, .unit = Unit::kTime}};
  const std::string path(c.path);
  for (const ApiRuns& x : r->apis) {
    table.AddRow({path, x.api, x.since, x.runs, x.ops, x.host_ns,
                  r->has_device ? Value{x.device_ns} : Value{}, x.tasks, x.example,
                  x.first_ns - a.span.begin});
  }
  table.notes.push_back(
      "The operators the code called (the outermost framework operators of each thread, in "
      "order) matched against each API's operator sequences, as msprof-analyze's advisor lists "
      "them (advisor/rules/timeline_fusion_ops.yaml), in the complete steps (else the trace); "
      "runs do not overlap. Host: the matched operators' time; device: the tasks they and the "
      "operators inside them launched. At: the first run's start from the trace's.");
  tables.push_back(std::move(table));
}

void AffinityApisRule(const RuleContext& c, std::vector<Finding>& out) {
  const auto* r = c.analysis.results.Get<AffinityApis>(kPassName);
  if (r == nullptr || r->apis.empty()) return;
  // Judged by the time at stake: the device's where the trace has device work.
  int64_t at_stake = 0, runs = 0;
  std::string evidence;
  for (const ApiRuns& x : r->apis) {
    const int64_t t = r->has_device ? x.device_ns : x.host_ns;
    if (t < c.thresholds.min_judged_ns) continue;
    at_stake += t, runs += x.runs;
    evidence += fmt::format(
        "{}{}: {} run{} of {} operators ({:.3f} ms {}; the first {}), the API "
        "since {}",
        evidence.empty() ? "" : "; ", x.api, x.runs, x.runs == 1 ? "" : "s", x.ops, t / 1e6,
        r->has_device ? "of device tasks" : "on the host", x.example, x.since);
  }
  if (runs == 0) return;
  out.push_back(
      {"affinity_apis", Severity::kInfo,
       fmt::format("{} runs of operators have a fused API ({:.3f} ms, {:.1f}% of the window): "
                   "one call instead of several operators and their launches",
                   runs, at_stake / 1e6, Pct(at_stake, r->window_ns)),
       evidence + " (the affinity_apis table; msprof-analyze's timeline_fusion_ops.yaml)",
       "Call the fused API where the code runs each sequence (torch_npu.npu_rms_norm for an "
       "RMSNorm written out, torch_npu.npu_rotary_mul for rotary embeddings, "
       "torch_npu.npu_fusion_attention for attention, ...; mindspeed.ops APIs come with "
       "MindSpeed), with the CANN version the table gives or later. Where the code is: the "
       "\"Call stack\" of the run's first operator in trace_view.json, recorded where the run "
       "profiled with with_stack=True. The saving is not projected: the fused kernel's time "
       "is not in this trace."});
}

}  // namespace

Pass AffinityApisPass() {
  return {kPassName,
          "Which runs of operators does the framework have one fused API for?",
          {"links", "steps"},
          [](const TraceModel& model, Analysis& a) { a.results.Set(kPassName, Compute(model, a)); },
          Tables,
          {{"affinity_apis",
            {std::string_view(kPassName)},
            [](const Thresholds& t) {
              return fmt::format(
                  "the trace's framework has fused APIs its reader knows (torch_npu: "
                  "msprof-analyze's timeline_fusion_ops.yaml), a run of the operators the code "
                  "called matches one of an API's sequences in the complete steps, and the runs "
                  "of an API take {:g} ms or more of device time (host time on a trace without "
                  "device work); info",
                  t.min_judged_ns / 1e6);
            },
            AffinityApisRule}}};
}

}  // namespace opscope::analyze
