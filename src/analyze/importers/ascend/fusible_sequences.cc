#include "analyze/importers/ascend/fusible_sequences.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <system_error>
#include <thread>

#include "analyze/flat_map.h"

namespace opscope::analyze {
namespace {

// A run's occurrences summed.
struct Sums {
  int64_t count = 0, wall_ns = 0, device_ns = 0, idle_ns = 0;
  double mte = 0, core = 0;
};

// How many of a sorted vector's values are at most `t`, found by moving
// `hint` (the last answer) there: queries close to each other cost little.
size_t CountUpTo(const std::vector<int64_t>& sorted, int64_t t, size_t& hint) {
  hint = std::min(hint, sorted.size());
  while (hint < sorted.size() && sorted[hint] <= t) ++hint;
  while (hint > 0 && sorted[hint - 1] > t) --hint;
  return hint;
}

// splitmix64's finaliser: the hash of a run grows one operator at a time.
uint64_t Mix(uint64_t h, uint32_t key) {
  uint64_t z = h + 0x9e3779b97f4a7c15ULL + key;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// What a run's summed occurrences say: host-bound, MTE-bound, reported.
struct Verdict {
  bool host = false, mte = false, reported = false;
  int64_t stake_ns = 0;
};
Verdict Judge(const Sums& s, int64_t span_ns) {
  Verdict v;
  v.host = s.wall_ns > 0 && static_cast<double>(s.wall_ns - s.idle_ns) <
                                kFusibleHostShare * static_cast<double>(s.wall_ns);
  v.mte = s.core > 0 && s.mte > kFusibleMteShare * s.core;
  v.reported =
      s.count >= kFusibleMinCount && (v.host || v.mte) &&
      (v.mte || static_cast<double>(s.wall_ns) >= kFusibleSpanShare * static_cast<double>(span_ns));
  v.stake_ns = (v.host ? s.idle_ns : 0) + (v.mte ? s.device_ns : 0);  // FusibleStake
  return v;
}

}  // namespace

void FusibleSequenceFinder::Add(std::string_view name, std::string_view shapes, int64_t start_ns,
                                int64_t dur_ns, double mte, double core, bool breaks,
                                uint32_t name_id, uint32_t shapes_id, bool in_graph) {
  uint32_t key = kBreak;
  if (!breaks) {
    // By the caller's ids where it has them; else by the text.
    uint32_t* by_id = nullptr;
    if (name_id != UINT32_MAX && shapes_id != UINT32_MAX) {
      by_id = &key_of_ids_[static_cast<int64_t>((uint64_t{name_id} << 32) | shapes_id)];
      if (*by_id != 0) key = *by_id - 1;
    }
    if (key == kBreak) {
      scratch_.assign(name);
      if (!shapes.empty()) scratch_.append(" [").append(shapes).append("]");
      auto it = key_of_.find(std::string_view(scratch_));
      if (it == key_of_.end()) {
        it = key_of_.emplace(scratch_, static_cast<uint32_t>(labels_.size())).first;
        labels_.push_back(&it->first);
      }
      key = it->second;
      if (by_id != nullptr) *by_id = key + 1;
    }
  }
  // Without the MTE columns a core time alone judges nothing.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t dur = std::max<int64_t>(dur_ns, 0);  // saturated: a file's times are untrusted
  const int64_t end = start_ns > std::numeric_limits<int64_t>::max() - dur
                          ? std::numeric_limits<int64_t>::max()
                          : start_ns + dur;
  tasks_.push_back({key, start_ns, end, mte_columns_ ? static_cast<float>(mte) : nan,
                    mte_columns_ ? static_cast<float>(core) : nan,
                    static_cast<uint32_t>(tasks_.size()), in_graph});
}

void FusibleSequenceFinder::Finish(PipeTable& table, size_t threads) {
  table.sequence_mte_columns = mte_columns_;
  if (tasks_.empty()) return;
  // The device's order: by start (a file lists its tasks so; a database by id).
  const auto by_start = [](const Task& a, const Task& b) { return a.start_ns < b.start_ns; };
  if (!std::is_sorted(tasks_.begin(), tasks_.end(), by_start)) {
    std::stable_sort(tasks_.begin(), tasks_.end(), by_start);
  }
  const size_t n = tasks_.size();
  int64_t last_end = tasks_[0].end_ns;
  for (const Task& t : tasks_) last_end = std::max(last_end, t.end_ns);
  const int64_t span_ns = last_end - tasks_[0].start_ns;
  table.sequence_span_ns = span_ns;
  // What the time between a run's operators was: the AI Cores computing
  // (any compute task), the next operator waiting for another task (one
  // ended at most kFusibleDependencyNs before it started: a collective, a
  // task on another stream), else waiting for the host to dispatch it.
  // Every task before task k in start order started by the time a gap before
  // k opens (at the end of a task before k), so the compute time in that gap
  // is the part the latest end of those compute tasks reaches into.
  std::vector<int64_t> computing_until(n), ends;
  ends.reserve(n);
  int64_t latest = std::numeric_limits<int64_t>::min();
  for (size_t k = 0; k < n; ++k) {
    computing_until[k] = latest;
    if (tasks_[k].key != kBreak) latest = std::max(latest, tasks_[k].end_ns);
    ends.push_back(tasks_[k].end_ns);
  }
  if (!std::is_sorted(ends.begin(), ends.end())) std::sort(ends.begin(), ends.end());
  // The host wait before task k, its run having reached `reach`; `ends_hint`
  // where the last query was in `ends` (CountUpTo).
  const auto host_gap = [&](size_t k, int64_t reach, size_t& ends_hint) -> int64_t {
    const int64_t next = tasks_[k].start_ns;
    if (tasks_[k].in_graph || next <= reach) return 0;  // a graph model's task: its graph's
    const int64_t from = std::max(reach, next - kFusibleDependencyNs);
    const size_t upto = CountUpTo(ends, next, ends_hint);
    if (upto > 0 && ends[upto - 1] > from) return 0;  // a task ended just before: waited for it
    const int64_t computing =
        computing_until[k] > reach ? std::min(computing_until[k], next) - reach : 0;
    return (next - reach) - computing;
  };
  // Each task's gap after the one before it, the common case (a run whose
  // tasks do not overlap), in one sweep; other cases bisect to start.
  std::vector<int64_t> gap_after_previous(n, 0);
  size_t sweep = 0;
  for (size_t k = 1; k < n; ++k) gap_after_previous[k] = host_gap(k, tasks_[k - 1].end_ns, sweep);
  const auto gap_before = [&](size_t k, int64_t reach) -> int64_t {
    if (reach == tasks_[k - 1].end_ns) return gap_after_previous[k];
    size_t at = static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), tasks_[k].start_ns) -
                                    ends.begin());
    return host_gap(k, reach, at);
  };
  std::vector<uint32_t> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = tasks_[i].key;
  // A run recurs at most as often as its rarest operator: operators seen
  // fewer times than a reported run must recur are in none.
  std::vector<int64_t> occurs(labels_.size(), 0);
  for (const Task& t : tasks_) {
    if (t.key != kBreak) ++occurs[t.key];
  }
  const auto usable = [&](size_t i) {
    return keys[i] != kBreak && occurs[keys[i]] >= kFusibleMinCount;
  };
  const auto same = [&](size_t a, size_t b, int length) {
    return std::equal(keys.begin() + static_cast<ptrdiff_t>(a),
                      keys.begin() + static_cast<ptrdiff_t>(a) + length,
                      keys.begin() + static_cast<ptrdiff_t>(b));
  };
  // Every run of 2 to 10 usable tasks, its occurrences summed (overlapping
  // ones too, as msprof-analyze counts them): which runs are candidates. A
  // run is known by a 64-bit hash of its operators, its length and its first
  // and last operators (a false match needs a hash collision between runs
  // that agree on all three); the runs taken below are matched in full.
  struct Run {
    uint32_t first;  // its first occurrence
    int length;
    Sums sums;
  };
  // The runs are split by hash among threads, each counting its own share
  // over every position (the cores are otherwise idle here: the file is
  // read); the candidates' order below does not depend on the split (but
  // for which runs a search that reaches kFusibleMaxRuns leaves out).
  constexpr size_t kTasksPerThread = 1 << 16;  // fewer: one thread
  const size_t parts = threads > 0 ? threads
                       : n < kTasksPerThread
                           ? 1
                           : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
  std::vector<std::vector<Run>> runs_of(parts);
  std::vector<char> capped(parts, 0);
  const auto count = [&](size_t part) {
    std::vector<Run>& runs = runs_of[part];
    Int64Map<uint32_t> run_of;  // a run's hash -> its index in runs, plus 1
    for (size_t i = 0; i < n; ++i) {
      if (!usable(i)) continue;
      uint64_t h = Mix(0, keys[i]);
      int64_t end = tasks_[i].end_ns, device = tasks_[i].end_ns - tasks_[i].start_ns, idle = 0;
      double mte = std::isnan(tasks_[i].mte) ? 0 : tasks_[i].mte;
      double core = std::isnan(tasks_[i].core) ? 0 : tasks_[i].core;
      for (int length = 2; length <= kFusibleMaxLength && i + length <= n; ++length) {
        const Task& t = tasks_[i + length - 1];
        if (!usable(i + length - 1)) break;
        h = Mix(h, t.key);
        idle += gap_before(i + length - 1, end);
        end = std::max(end, t.end_ns);
        device += t.end_ns - t.start_ns;
        if (!std::isnan(t.mte)) mte += t.mte;
        if (!std::isnan(t.core)) core += t.core;
        if (length < kFusibleMinLength || h % parts != part) continue;
        uint32_t& slot = run_of[static_cast<int64_t>(h)];
        if (slot == 0) {
          if (runs.size() >= kFusibleMaxRuns / parts) {
            capped[part] = 1;
            continue;
          }
          runs.push_back(Run{static_cast<uint32_t>(i), length, {}});
          slot = static_cast<uint32_t>(runs.size());
        } else if (const Run& r = runs[slot - 1];
                   r.length != length || keys[r.first] != keys[i] ||
                   keys[r.first + static_cast<size_t>(length) - 1] != t.key) {
          continue;  // two runs with one hash: the later left out
        }
        Sums& s = runs[slot - 1].sums;
        ++s.count;
        s.wall_ns += end - tasks_[i].start_ns;
        s.idle_ns += idle;
        s.device_ns += device;
        s.mte += mte;
        s.core += core;
      }
    }
  };
  {
    // A part that fails (out of memory) fails the search once all have
    // stopped, as if it ran alone.
    std::vector<std::exception_ptr> failed(parts);
    const auto guarded = [&](size_t part) {
      try {
        count(part);
      } catch (...) {
        failed[part] = std::current_exception();
      }
    };
    std::vector<std::thread> threads;
    for (size_t part = 1; part < parts; ++part) {
      try {
        threads.emplace_back(guarded, part);
      } catch (const std::system_error&) {  // no thread to be had: this one counts it
        guarded(part);
      }
    }
    guarded(0);
    for (std::thread& thread : threads) thread.join();
    for (const std::exception_ptr& e : failed) {
      if (e) std::rethrow_exception(e);
    }
  }
  table.sequence_capped = std::find(capped.begin(), capped.end(), 1) != capped.end();
  // By what each puts at stake, then longer first, then first seen.
  std::vector<std::pair<int64_t, const Run*>> ranked;
  for (const std::vector<Run>& runs : runs_of) {
    for (const Run& run : runs) {
      const Verdict v = Judge(run.sums, span_ns);
      if (v.reported) ranked.emplace_back(v.stake_ns, &run);
    }
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    if (a.second->length != b.second->length) return a.second->length > b.second->length;
    return a.second->first < b.second->first;
  });
  std::vector<const Run*> candidates;
  for (const auto& [stake, run] : ranked) candidates.push_back(run);
  constexpr size_t kCandidates = 64, kReported = 20;
  if (candidates.size() > kCandidates) candidates.resize(kCandidates);
  // Each candidate, the most at stake first, takes its occurrences that share no
  // task with a run already taken (nor with each other); it is reported if
  // those still make it one.
  std::unordered_map<uint32_t, std::vector<uint32_t>> starts;  // first operator -> positions
  for (const Run* c : candidates) starts[tasks_[c->first].key];
  for (size_t i = 0; i < n; ++i) {
    if (tasks_[i].key == kBreak) continue;
    const auto it = starts.find(tasks_[i].key);
    if (it != starts.end()) it->second.push_back(static_cast<uint32_t>(i));
  }
  std::vector<uint8_t> taken(n, 0);
  for (const Run* c : candidates) {
    const size_t length = static_cast<size_t>(c->length);
    Sums s;
    std::vector<uint32_t> mine;
    for (const uint32_t p : starts[tasks_[c->first].key]) {
      if (p + length > n) break;
      bool free = true;
      for (size_t k = 0; k < length && free; ++k) free = taken[p + k] == 0;
      if (!free || !same(c->first, p, c->length)) continue;
      int64_t end = tasks_[p].end_ns;
      for (size_t k = 0; k < length; ++k) {
        const Task& t = tasks_[p + k];
        taken[p + k] = 1;
        if (k > 0) s.idle_ns += gap_before(p + k, end);
        end = std::max(end, t.end_ns);
        s.device_ns += t.end_ns - t.start_ns;
        if (!std::isnan(t.mte)) s.mte += t.mte;
        if (!std::isnan(t.core)) s.core += t.core;
      }
      ++s.count;
      s.wall_ns += end - tasks_[p].start_ns;
      mine.push_back(p);
    }
    const Verdict v = Judge(s, span_ns);
    if (!v.reported) {
      for (const uint32_t p : mine) std::fill_n(taken.begin() + p, length, 0);
      continue;
    }
    FusibleSequence out;
    for (size_t k = 0; k < length; ++k) {
      if (k > 0) out.operators += " -> ";
      out.operators += *labels_[tasks_[c->first + k].key];
    }
    out.length = c->length;
    out.count = s.count;
    out.first_row = tasks_[mine.front()].row;
    out.first_start_ns = tasks_[mine.front()].start_ns;
    out.wall_ns = s.wall_ns;
    out.device_ns = s.device_ns;
    out.idle_ns = s.idle_ns;
    out.mte_share = s.core > 0 ? s.mte / s.core : -1;
    out.host_bound = v.host, out.mte_bound = v.mte;
    table.fusible.push_back(std::move(out));
  }
  std::stable_sort(table.fusible.begin(), table.fusible.end(),
                   [](const FusibleSequence& a, const FusibleSequence& b) {
                     return FusibleStake(a) > FusibleStake(b);
                   });
  if (table.fusible.size() > kReported) table.fusible.resize(kReported);
}

}  // namespace opscope::analyze
