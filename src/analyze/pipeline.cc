#include "analyze/pipeline.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

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

Analysis AnalyzeTrace(const TraceModel& model, const AnalysisOptions& options) {
  Analysis a;
  a.ceilings = options.ceilings;
  if (!a.ceilings && !model.device_name.empty())
    a.ceilings = KnownDeviceCeilings(model.device_name);
  if (!a.ceilings && model.format.rfind("ascend", 0) == 0) {
    a.ceilings = KnownDeviceCeilings("Ascend 910B");
    if (a.ceilings) {
      a.ceilings->source = "assumed Ascend 910B (the trace names no device): " + a.ceilings->source;
    }
  }
  const std::vector<const Pass*> order = PassOrder(Passes());
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
      try {
        order[next]->run(model, a);
      } catch (...) {
        failure = std::current_exception();
      }
      lock.lock();
      if (failure && !error) error = failure;
      done[order[next]->name] = true;
      ++finished;
      changed.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return a;
}

}  // namespace opscope::analyze
