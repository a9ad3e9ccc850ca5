#include "analyze/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "analyze/importers/timestamps.h"
#include "analyze/names.h"
#include "analyze/passes/roofline.h"
#include "core/cancel.h"
#include "core/datasheet.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {

std::vector<const Pass*> PassOrder(const std::vector<Pass>& passes) {
  std::map<std::string_view, const Pass*> by_name;
  for (const Pass& p : passes) {
    if (!by_name.emplace(p.name, &p).second) {
      throw Error(ErrorCode::kInternal,
                  "two analysis passes are named '" + std::string(p.name) + "'");
    }
  }
  for (const Pass& p : passes) {
    for (const std::string_view need : p.needs) {
      if (!by_name.count(need)) {
        throw Error(ErrorCode::kInternal, "analysis pass '" + std::string(p.name) + "' needs '" +
                                              std::string(need) + "', which is not registered");
      }
    }
  }
  std::vector<const Pass*> order;
  std::map<std::string_view, int> state;  // 1 visiting, 2 done
  const auto visit = [&](auto&& self, const Pass* p) -> void {
    int& s = state[p->name];
    if (s == 2) return;
    if (s == 1) {
      throw Error(ErrorCode::kInternal, "analysis passes need each other in a cycle through '" +
                                            std::string(p->name) + "'");
    }
    s = 1;
    for (const std::string_view need : p->needs) self(self, by_name.at(need));
    state[p->name] = 2;
    order.push_back(p);
  };
  for (const Pass& p : passes) visit(visit, &p);
  return order;
}

namespace {

std::string LowerTrim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A chip assumed for a trace that names none (an Ascend kernel_details.csv
// without info.json) against the clock its tasks imply: the producer turns
// cycles into time at the chip's clock, so cycles / (time x blocks) is that
// clock (PipeTable::implied_core_mhz). Where most of the tasks agree on one
// that differs from the assumed part's by more than 2%, the compute peaks
// are scaled to it (memory bandwidth is left as assumed); either way the
// source says what the data showed.
void CheckAssumedClock(const TraceModel& model, RooflineCeilings& ceilings) {
  const auto& pipes = model.reported.pipes;
  if (!pipes || pipes->implied_core_mhz <= 0 ||
      2 * pipes->clock_tasks_agreeing < pipes->clock_tasks) {
    return;
  }
  const core::Datasheet* sheet = core::FindDatasheet(model.implied_device);
  if (sheet == nullptr || sheet->core_mhz <= 0) return;
  const double implied = pipes->implied_core_mhz, assumed = sheet->core_mhz;
  const std::string tasks = fmt::format("{} of {} AI_CORE tasks' cycles, times and block counts",
                                        pipes->clock_tasks_agreeing, pipes->clock_tasks);
  if (std::abs(implied - assumed) <= 0.02 * assumed) {
    ceilings.source += fmt::format("; {} imply a {:g} MHz clock, as assumed", tasks, implied);
    return;
  }
  for (auto& [dtype, peak] : ceilings.flops_per_second) peak *= implied / assumed;
  ceilings.source += fmt::format(
      "; but {} imply a {:g} MHz clock, not the assumed {:g} MHz: the compute peaks are scaled "
      "by {:.3f} (another variant, or another clock setting)",
      tasks, implied, assumed, implied / assumed);
}

}  // namespace

std::string TraceDeviceName(const TraceModel& model, ComputeOn on) {
  if (!model.device_name.empty() && on != ComputeOn::kCpu) return model.device_name;
  // opscope's own traces list their devices in otherData.devices, the CPU
  // first: {"id":"cpu","type":"cpu","name":"..."}, {"id":"cuda:0","type":"cuda",...}.
  const auto other = model.metadata.find("otherData");
  if (other == model.metadata.end()) return on == ComputeOn::kCpu ? "" : model.device_name;
  const std::string& json = other->second;
  const std::string type = on == ComputeOn::kCpu ? "\"type\":\"cpu\"" : "\"type\":\"cuda\"";
  const size_t at = json.find(type);
  if (at == std::string::npos) return {};
  const size_t name = json.find("\"name\":\"", at);
  const size_t close = json.find('}', at);
  if (name == std::string::npos || name > close) return {};
  const size_t begin = name + 8, end = json.find('"', begin);
  return end == std::string::npos ? std::string() : json.substr(begin, end - begin);
}

std::string CeilingsApplicability(const RooflineCeilings& ceilings, const TraceModel& model,
                                  ComputeOn on) {
  const std::string device = TraceDeviceName(model, on);
  if (device.empty()) {
    return "the trace does not name the device it ran on, so ceilings measured on '" +
           ceilings.device + "' cannot be matched to it";
  }
  if (LowerTrim(device) != LowerTrim(ceilings.device)) {
    return "the ceilings were measured on '" + ceilings.device + "' but the trace ran on '" +
           device + "'";
  }
  return {};
}

Analysis AnalyzeTrace(const TraceModel& model, const AnalysisOptions& options) {
  // Analyses add durations up (per operator, per class, per step), each
  // within kMaxTimeNs; a trace whose durations together pass it (126 years:
  // no recording) is refused here, before any such sum can overflow.
  int64_t durations = 0;
  for (size_t e = 0; e < model.size(); ++e) {
    const int64_t d = std::max<int64_t>(model.duration_ns[e], 0);
    if (__builtin_add_overflow(durations, d, &durations) || durations > kMaxTimeNs) {
      throw Error(ErrorCode::kInvalidInput,
                  fmt::format("'{}': the events' durations add up to more than 4e18 ns (about 126 "
                              "years) by event {} ('{}', {} ns): the durations are wrong (a time "
                              "column read as a duration?)",
                              core::EscapeForTerminal(model.source), e,
                              core::EscapeForTerminal(model.String(model.name[e])), d));
    }
  }
  Analysis a;
  a.compute_on = ComputeDeviceOf(model);
  const TraceSpan whole = SpanOf(model);
  a.span = WorkSpanOf(model, whole);
  a.profiler_ns = whole.ns() - a.span.ns();
  if (options.ceilings) {
    const std::string mismatch = CeilingsApplicability(*options.ceilings, model, a.compute_on);
    if (mismatch.empty()) {
      a.ceilings = options.ceilings;
    } else {
      a.ceilings_note = "measured ceilings not used: " + mismatch;
    }
  }
  const bool measured = a.ceilings.has_value();
  const std::string device = TraceDeviceName(model, a.compute_on);
  a.device = device;
  a.compute_major = ComputeCapabilityMajor(model);
  a.format = model.format;
  a.pytorch = RecordsPyTorch(model);
  if (!a.ceilings && !device.empty() && a.compute_on != ComputeOn::kCpu)
    a.ceilings = KnownDeviceCeilings(device);
  if (!a.ceilings && !model.implied_device.empty()) {
    a.ceilings = KnownDeviceCeilings(model.implied_device);
    if (a.ceilings) {
      a.ceilings->source =
          "assumed " + model.implied_device + " (the trace names no device): " + a.ceilings->source;
      if (!model.reported.chip) CheckAssumedClock(model, *a.ceilings);
    }
  }
  // The chip the run recorded sets the peaks its reader works out; the table
  // (the named variant's, else the assumed family's) the rest.
  if (model.reported.chip && !measured && a.ceilings) {
    a.ceilings = ChipCeilings(*model.reported.chip, *a.ceilings);
  }
  if (!a.ceilings) {
    if (!a.ceilings_note.empty()) a.ceilings_note += "; ";
    a.ceilings_note +=
        device.empty()
            ? "no roofline bound: the trace names no device and no matching ceilings were given"
            : "no roofline bound: '" + device +
                  "' is not in the table of known devices; measure its ceilings with `opscope "
                  "bench roofline` on it and pass --ceilings";
  }
  std::vector<const Pass*> order = PassOrder(Passes());
  if (!options.passes.empty()) {
    // The passes asked for and, walking back from the last, what they need.
    std::set<std::string_view> wanted(options.passes.begin(), options.passes.end());
    for (auto p = order.rbegin(); p != order.rend(); ++p) {
      if (wanted.count((*p)->name)) wanted.insert((*p)->needs.begin(), (*p)->needs.end());
    }
    for (const std::string_view name : options.passes) {
      if (std::none_of(order.begin(), order.end(),
                       [&](const Pass* p) { return p->name == name; })) {
        throw Error(ErrorCode::kInternal, "no analysis pass '" + std::string(name) + "'");
      }
    }
    std::erase_if(order, [&](const Pass* p) { return !wanted.count(p->name); });
  }
  for (const Pass* p : order) a.results.Make(p->name);
  const size_t workers = std::min<size_t>(
      order.size(), options.threads > 0 ? static_cast<size_t>(options.threads)
                                        : std::max(1u, std::thread::hardware_concurrency()));
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string_view, bool> done;
  std::vector<bool> started(order.size(), false);
  size_t finished = 0;
  std::exception_ptr error;
  const auto ready = [&](const Pass* p) {
    return std::all_of(p->needs.begin(), p->needs.end(),
                       [&](std::string_view n) { return done[n]; });
  };
  const auto work = [&] {
    std::unique_lock lock(mutex);
    while (true) {
      size_t next = order.size();
      changed.wait(lock, [&] {
        if (error || finished == order.size()) return true;
        for (size_t i = 0; i < order.size(); ++i) {
          if (!started[i] && ready(order[i])) {
            next = i;
            return true;
          }
        }
        return false;
      });
      if (error || next == order.size()) return;
      started[next] = true;
      lock.unlock();
      std::exception_ptr failure;
      const auto began = std::chrono::steady_clock::now();
      try {
        core::ThrowIfCancelled();
        order[next]->run(model, a);
      } catch (...) {
        failure = std::current_exception();
      }
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began)
              .count();
      lock.lock();
      a.pass_ms.emplace_back(order[next]->name, ms);
      if (failure && !error) error = failure;
      done[order[next]->name] = true;
      ++finished;
      // A scratch result goes once every pass that reads it has finished.
      for (const std::string_view need : order[next]->needs) {
        const auto owner = std::find_if(order.begin(), order.end(),
                                        [&](const Pass* p) { return p->name == need; });
        if (owner == order.end() || !(*owner)->scratch) continue;
        if (std::all_of(order.begin(), order.end(), [&](const Pass* p) {
              return done[p->name] ||
                     std::find(p->needs.begin(), p->needs.end(), need) == p->needs.end();
            })) {
          a.results.Drop(need);
        }
      }
      changed.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(core::WithCallersCancel(work));
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return a;
}

}  // namespace opscope::analyze
