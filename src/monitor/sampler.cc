#include "monitor/sampler.h"

#include <signal.h>

#include <cerrno>

#include "core/text.h"
#include "monitor/cpu_sampler.h"
#include "monitor/dcmi_sampler.h"
#include "monitor/nvml_sampler.h"
#include "opscope/opscope.h"

namespace opscope::monitor {

namespace {
bool IsOwnerLabel(const std::string& key) { return key == "pid"; }
// Labels that say which device, beside "device" itself (an NPU's DCMI card and chip).
bool IsDeviceLabel(const std::string& key) {
  return key == "device" || key == "card" || key == "chip";
}
}  // namespace

std::string Metric::Key() const {
  std::string key = name;
  std::string extra;
  for (const auto& [k, v] : labels) {
    if (IsDeviceLabel(k) || IsOwnerLabel(k)) continue;
    extra += (extra.empty() ? "" : ",") + k + "=" + v;
  }
  return extra.empty() ? key : key + "{" + extra + "}";
}

std::string Metric::Owner() const {
  std::string owner;
  for (const auto& [k, v] : labels) {
    if (IsOwnerLabel(k)) owner += (owner.empty() ? "" : ",") + k + "=" + v;
  }
  return owner;
}

std::vector<std::unique_ptr<Sampler>> OpenSamplers(const std::string& which, int pid,
                                                   std::vector<std::string>& notes) {
  if (pid < 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "--pid " + std::to_string(pid) +
                    ": a process id is a positive number (0 or none: opscope itself)");
  }
  if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
    throw Error(ErrorCode::kInvalidArgument, "--pid " + std::to_string(pid) + ": no such process");
  }
  std::vector<std::unique_ptr<Sampler>> samplers;
  const bool all = which.empty() || which == "all";
  if (all || which == "cpu" || which == "cpu:0") samplers.push_back(CreateCpuSampler(pid));
  // A backend's devices: all of them, the one named, or its first for the
  // bare kind ("cuda", "npu"); a backend without a device here says why.
  const auto backend = [&](const std::string& kind, const char* vendor,
                           std::vector<std::unique_ptr<Sampler>> (*open)(std::string&)) {
    if (!all && which.rfind(kind, 0) != 0) return;
    std::string why;
    auto devices = open(why);
    if (!why.empty()) notes.push_back(vendor + (": " + why));
    for (auto& d : devices) {
      if (all || d->device() == which || (which == kind && d->device() == kind + ":0")) {
        samplers.push_back(std::move(d));
      }
    }
  };
  backend("cuda", "nvidia", OpenNvmlSamplers);
  backend("npu", "ascend", OpenDcmiSamplers);
  if (samplers.empty()) {
    throw Error(ErrorCode::kUnsupported,
                "no device '" + core::EscapeForTerminal(which) + "' to monitor" +
                    (notes.empty() ? std::string() : " (" + notes.front() + ")"));
  }
  return samplers;
}

}  // namespace opscope::monitor
