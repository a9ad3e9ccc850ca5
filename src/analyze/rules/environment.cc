// Environment variables of the run that bear on what the diagnosis found,
// from what the producer recorded (reported.h: ReportedTables::environment;
// torch_npu's profiler_metadata.json ENV_VARIABLES). The variables and their
// advice are msprof-analyze's advisor's (its rules/en/
// environment_variable_info.yaml and EnvironmentVariableChecker), which
// advises on each from its value alone; here each is advised only where the
// trace shows the cost it addresses:
// - ASCEND_LAUNCH_BLOCKING=1 always: every operator then waits for the device
//   (a synchronous run: host and device never overlap, whatever the trace
//   shows of either);
// - ASCEND_GLOBAL_LOG_LEVEL below 3 (debug, info, warning): where the host
//   sets the pace (the diagnosis is step_host_overhead or step_host_blocked);
// - ACLNN_CACHE_LIMIT unset or under 10000, and HOST_CACHE_CAPACITY unset or
//   0: where the host's launch work sets the pace (step_host_overhead);
// - HCCL_ALGO set: where the steps wait in communication
//   (step_device_waiting), as it fixes HCCL's algorithm.
// PYTORCH_NPU_ALLOC_CONF (expandable_segments) is left out: nothing in a
// timeline shows the fragmentation it addresses.
// A rule in a file of its own, registered with one line in advisor.cc's list
// (docs/seams.md).
#include <fmt/format.h>

#include <charconv>
#include <string>

#include "analyze/analysis.h"
#include "analyze/passes/attribution.h"
#include "analyze/reported.h"
#include "analyze/rule.h"

namespace opscope::analyze {
namespace {

// The value as an integer; `fallback` where it is empty or not a number.
int64_t Number(const std::string& value, int64_t fallback) {
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  return ec == std::errc() && end == value.data() + value.size() && !value.empty() ? n : fallback;
}

struct Advice {
  std::string name, value, why, suggest;
  bool warning = false;
};

void Apply(const RuleContext& c, std::vector<Finding>& out) {
  if (c.reported == nullptr || c.reported->environment.empty()) return;
  const std::string_view diagnosis = Diagnosis(c.analysis);
  const bool host_paced = diagnosis == "step_host_overhead" || diagnosis == "step_host_blocked";
  std::vector<Advice> advice;
  for (const auto& [name, value] : c.reported->environment) {
    if (name == "ASCEND_LAUNCH_BLOCKING" && Number(value, 0) == 1) {
      advice.push_back({name, value,
                        "every operator launch waits for the device to finish it: the run is "
                        "synchronous, host and device never overlap, and this trace measures that",
                        "unset it (or export ASCEND_LAUNCH_BLOCKING=0) outside debugging", true});
    } else if (name == "ASCEND_GLOBAL_LOG_LEVEL" && !value.empty() && Number(value, 3) < 3 &&
               host_paced) {
      advice.push_back({name, value,
                        "CANN logs at debug, info or warning level, on the host that sets the "
                        "steps' pace",
                        "export ASCEND_GLOBAL_LOG_LEVEL=3 (errors only)", false});
    } else if (name == "ACLNN_CACHE_LIMIT" && Number(value, 0) < 10000 &&
               diagnosis == "step_host_overhead") {
      advice.push_back({name, value.empty() ? "(unset)" : value,
                        "the aclnn operator cache is small while launching sets the pace",
                        "export ACLNN_CACHE_LIMIT=100000", false});
    } else if (name == "HOST_CACHE_CAPACITY" && Number(value, 0) == 0 &&
               diagnosis == "step_host_overhead") {
      advice.push_back({name, value.empty() ? "(unset)" : value,
                        "the host does not cache operators' execution data by input shapes, "
                        "while launching sets the pace (it helps where shapes vary)",
                        "export HOST_CACHE_CAPACITY=20", false});
    } else if (name == "HCCL_ALGO" && !value.empty() && diagnosis == "step_device_waiting") {
      advice.push_back({name, value,
                        "HCCL's algorithm is fixed while the steps wait in communication",
                        "unset HCCL_ALGO: HCCL then chooses by the chip, the nodes and the data "
                        "volume",
                        false});
    }
  }
  if (advice.empty()) return;
  std::string names, evidence, action;
  bool warning = false;
  for (const Advice& a : advice) {
    names += (names.empty() ? "" : ", ") + a.name + "=" + a.value;
    evidence += fmt::format("{}{}={}: {}", evidence.empty() ? "" : "; ", a.name, a.value, a.why);
    action += fmt::format("{}{}", action.empty() ? "" : "; ", a.suggest);
    warning |= a.warning;
  }
  out.push_back({"environment", warning ? Severity::kWarning : Severity::kInfo,
                 fmt::format("Environment variables of the run work against it: {}", names),
                 fmt::format("{} (recorded in {}; the step-time diagnosis: {})", evidence,
                             c.reported->environment_source,
                             diagnosis.empty() ? std::string("none") : std::string(diagnosis)),
                 action + "."});
}

}  // namespace

Rule EnvironmentRule() {
  return {"environment",
          {},
          [](const Thresholds&) {
            return std::string(
                "the producer recorded the run's environment variables (profiler_metadata.json), "
                "and one bears on what the trace shows: ASCEND_LAUNCH_BLOCKING=1 (a warning, "
                "always), ASCEND_GLOBAL_LOG_LEVEL below 3 where the host sets the pace, "
                "ACLNN_CACHE_LIMIT under 10000 or unset and HOST_CACHE_CAPACITY 0 or unset "
                "where launching sets it (step_host_overhead), HCCL_ALGO set where the steps "
                "wait in communication (msprof-analyze's variables and advice, each tied to "
                "its cost)");
          },
          Apply};
}

}  // namespace opscope::analyze
