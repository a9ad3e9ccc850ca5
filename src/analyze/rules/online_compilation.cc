// Online operator compilation, from the host API statistics the producer
// reported (reported.h: ReportedSummaries; msprof's api_statistic), when the
// timeline does not already show it (a Level0 timeline has no CANN layer).
// A rule in a file of its own, registered with one line in advisor.cc's list
// (docs/seams.md).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "analyze/advisor.h"
#include "analyze/analysis.h"
#include "analyze/reported.h"
#include "analyze/rule.h"

namespace opscope::analyze {

std::vector<Finding> AdviseSummaries(const ReportedSummaries& summaries, const Analysis& a,
                                     const Thresholds& t) {
  std::vector<Finding> out;
  const bool in_timeline =
      std::any_of(a.busy.compile_ns.begin(), a.busy.compile_ns.end(),
                  [](const auto& k) { return k.first == "ACL operator compilation"; });
  if (!summaries.apis.empty() && !in_timeline) {
    int64_t total = 0, calls = 0, longest = 0;
    std::string apis;
    for (const ReportedApiStat& api : summaries.apis) {
      std::string lower(api.api);
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (!lower.starts_with("aclopcompile") || api.total_ns <= 0) continue;
      total += api.total_ns;
      calls += std::max<int64_t>(0, api.count);
      longest = std::max(longest, api.max_ns);
      apis +=
          fmt::format("{}{} x{} {:.3f} ms (longest {:.3f} ms)", apis.empty() ? "" : ", ", api.api,
                      api.count, api.total_ns / 1e6, std::max<int64_t>(0, api.max_ns) / 1e6);
    }
    const int64_t window = a.busy.window_end_ns - a.busy.window_begin_ns;
    if (total >= t.compile_min_ns && (window <= 0 || Pct(total, window) >= t.compile_pct)) {
      out.push_back(
          {"online_compilation", Pct(total, window) >= 20 ? Severity::kWarning : Severity::kInfo,
           fmt::format(
               "CANN compiles operators online: {:.3f} ms in {} calls{}", total / 1e6, calls,
               window > 0 ? fmt::format(" ({:.1f}% of the device window)", Pct(total, window))
                          : std::string()),
           summaries.apis_source + ": " + apis,
           "Online compilation belongs to warm-up: leave those steps out of what you measure "
           "(schedule warmup/skip_first). If it recurs in steady state: " +
               CompileAction("ACL operator compilation")});
    }
  }
  return out;
}

namespace {

void Apply(const RuleContext& c, std::vector<Finding>& out) {
  if (c.reported == nullptr) return;
  for (Finding& f : AdviseSummaries(c.reported->summaries, c.analysis, c.thresholds)) {
    out.push_back(std::move(f));
  }
}

}  // namespace

Rule OnlineCompilationRule() {
  return {"online_compilation",
          {"device_busy"},
          [](const Thresholds& t) {
            return fmt::format(
                "the rank's host API statistics hold aclopCompile* calls of at least {:g} ms and "
                "{:g}% of the device window, and the timeline does not already show them",
                t.compile_min_ns / 1e6, t.compile_pct);
          },
          Apply};
}

}  // namespace opscope::analyze
