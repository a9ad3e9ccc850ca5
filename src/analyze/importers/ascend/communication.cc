#include "analyze/importers/ascend/communication.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <tuple>

#include "analyze/importers/ascend/json_file.h"
#include "analyze/median.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

// Communication files are summaries (kilobytes to a few megabytes): read whole.
constexpr size_t kMaxBytes = size_t{1} << 30;

// The file's root, an object of steps.
simdjson::dom::element Parse(simdjson::dom::parser& parser, Source& source) {
  const std::string& path = source.name();
  const simdjson::dom::element root =
      ReadJsonFile(source, parser, kMaxBytes, "a communication summary");
  if (!root.is_object()) {
    throw Error(ErrorCode::kInvalidInput, path + ": not a JSON object of steps");
  }
  return root;
}

std::string Where(const std::string& path, std::initializer_list<std::string_view> keys) {
  std::string out = path + ": ";
  bool first = true;
  for (const std::string_view k : keys) {
    if (!first) out += '/';
    out += k;
    first = false;
  }
  return out;
}

// A number in ms (or MB) at obj[key], as int64 ns (or bytes): `scale` per unit.
int64_t Scaled(simdjson::dom::object obj, std::string_view key, double scale, bool required,
               const std::function<std::string()>& where) {
  simdjson::dom::element value;
  if (obj[key].get(value) != simdjson::SUCCESS) {
    if (!required) return 0;
    throw Error(ErrorCode::kInvalidInput, where() + ": no '" + std::string(key) + "'");
  }
  double v = 0;
  if (value.get_double().get(v) != simdjson::SUCCESS || !std::isfinite(v) || v < -1e-6 ||
      v * scale > 4e18) {
    throw Error(ErrorCode::kInvalidInput,
                where() + "/" + std::string(key) + ": not a non-negative number");
  }
  return static_cast<int64_t>(std::llround(std::max(0.0, v) * scale));
}

// "hcom_allReduce__586_0_1@17522688603477080586" -> (op, group).
std::pair<std::string, std::string> SplitKey(std::string_view key) {
  const size_t at = key.rfind('@');
  if (at == std::string_view::npos) return {std::string(key), ""};
  return {std::string(key.substr(0, at)), std::string(key.substr(at + 1))};
}

// Calls f(step, kind, key, value) for every entry of a communication file's
// {step: {"p2p"|"collective": {key: value}}} nesting; anything else there is an
// error naming where.
template <typename F>
void ForEachEntry(simdjson::dom::element root, const std::string& path, F&& f) {
  for (const auto [step, kinds] : simdjson::dom::object(root)) {
    simdjson::dom::object kind_map;
    if (kinds.get_object().get(kind_map) != simdjson::SUCCESS) {
      throw Error(ErrorCode::kInvalidInput, Where(path, {step}) + ": not an object");
    }
    for (const auto [kind, entries] : kind_map) {
      simdjson::dom::object entry_map;
      if (entries.get_object().get(entry_map) != simdjson::SUCCESS) {
        throw Error(ErrorCode::kInvalidInput, Where(path, {step, kind}) + ": not an object");
      }
      for (const auto [key, value] : entry_map) f(step, kind, key, value);
    }
  }
}

}  // namespace

bool IsTotalEntry(std::string_view key) {
  return key.size() >= 5 && (key.substr(0, 5) == "Total" || key.substr(0, 5) == "total");
}

std::optional<int> ParseRank(std::string_view text) {
  if (text.empty() || text.size() > 7 ||
      text.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  return std::stoi(std::string(text));
}

std::vector<AscendCollective> ReadCommunication(Source& source) {
  const std::string& path = source.name();
  simdjson::dom::parser parser;
  const simdjson::dom::element root = Parse(parser, source);
  std::vector<AscendCollective> out;
  ForEachEntry(
      root, path,
      [&](std::string_view step, std::string_view kind, std::string_view key,
          simdjson::dom::element info) {
        // "Total Op Info" sums the others (ascend.md 3.5): recomputed, not read.
        if (IsTotalEntry(key)) return;
        const auto where = [&] { return Where(path, {step, kind, key}); };
        simdjson::dom::object time;
        if (info["Communication Time Info"].get_object().get(time) != simdjson::SUCCESS) {
          throw Error(ErrorCode::kInvalidInput, where() + ": no 'Communication Time Info' object");
        }
        AscendCollective c;
        c.step = std::string(step);
        c.kind = std::string(kind);
        std::tie(c.op, c.group) = SplitKey(key);
        const auto time_where = [&] { return where() + "/Communication Time Info"; };
        c.elapse_ns = Scaled(time, "Elapse Time(ms)", 1e6, true, time_where);
        c.transit_ns = Scaled(time, "Transit Time(ms)", 1e6, true, time_where);
        c.wait_ns = Scaled(time, "Wait Time(ms)", 1e6, true, time_where);
        c.sync_ns = Scaled(time, "Synchronization Time(ms)", 1e6, false, time_where);
        c.idle_ns = Scaled(time, "Idle Time(ms)", 1e6, false, time_where);
        if (simdjson::dom::element start;
            time["Start Timestamp(us)"].get(start) == simdjson::SUCCESS) {
          double us = 0;
          if (start.get_double().get(us) == simdjson::SUCCESS && std::isfinite(us) && us >= 0) {
            c.start_ns = static_cast<int64_t>(std::llround(us * 1e3));
          }
        }
        simdjson::dom::object bandwidth;
        if (info["Communication Bandwidth Info"].get_object().get(bandwidth) == simdjson::SUCCESS) {
          for (const auto [transport_key, figures] : bandwidth) {
            // A plain copy: clang before 16 cannot capture a structured binding in a lambda.
            const std::string_view transport = transport_key;
            if (transport == "SDMA") continue;  // HCCS + PCIE + SIO (ascend.md 3.5)
            simdjson::dom::object f;
            if (figures.get_object().get(f) != simdjson::SUCCESS) continue;
            const auto bw_where = [&] {
              return where() + "/Communication Bandwidth Info/" + std::string(transport);
            };
            AscendTransfer t{std::string(transport),
                             Scaled(f, "Transit Size(MB)", 1e6, false, bw_where),
                             Scaled(f, "Transit Time(ms)", 1e6, false, bw_where)};
            if (t.bytes > 0 || t.time_ns > 0) c.transfers.push_back(std::move(t));
          }
        }
        out.push_back(std::move(c));
      });
  return out;
}

std::vector<AscendLink> ReadCommunicationMatrix(Source& source) {
  const std::string& path = source.name();
  simdjson::dom::parser parser;
  const simdjson::dom::element root = Parse(parser, source);
  std::vector<AscendLink> out;
  ForEachEntry(root, path,
               [&](std::string_view step, std::string_view kind, std::string_view key,
                   simdjson::dom::element links) {
                 // "{type}-{agg}@{group}": only the "total" aggregate (the others are the
                 // fastest, median and slowest single operations of the same links).
                 const auto [type_agg, group] = SplitKey(key);
                 const size_t dash = type_agg.rfind('-');
                 if (dash == std::string::npos || type_agg.substr(dash + 1) != "total") return;
                 simdjson::dom::object link_map;
                 if (links.get_object().get(link_map) != simdjson::SUCCESS) return;
                 for (const auto [pair_key, figures] : link_map) {
                   const std::string_view pair = pair_key;  // captured below (see above)
                   const auto where = [&] { return Where(path, {step, kind, key, pair}); };
                   simdjson::dom::object f;
                   if (figures.get_object().get(f) != simdjson::SUCCESS) {
                     throw Error(ErrorCode::kInvalidInput, where() + ": not an object");
                   }
                   AscendLink link;
                   link.step = std::string(step);
                   link.kind = std::string(kind);
                   link.op_type = type_agg.substr(0, dash);
                   link.group = group;
                   const size_t sep = pair.find('-');
                   const std::optional<int> src = sep == std::string_view::npos
                                                      ? std::nullopt
                                                      : ParseRank(pair.substr(0, sep));
                   const std::optional<int> dst = sep == std::string_view::npos
                                                      ? std::nullopt
                                                      : ParseRank(pair.substr(sep + 1));
                   if (!src || !dst) {
                     throw Error(ErrorCode::kInvalidInput,
                                 where() + ": a link is named 'source-destination' (two ranks)");
                   }
                   link.src = *src;
                   link.dst = *dst;
                   std::string_view transport;
                   if (f["Transport Type"].get_string().get(transport) != simdjson::SUCCESS) {
                     throw Error(ErrorCode::kInvalidInput, where() + ": no 'Transport Type'");
                   }
                   link.transport = std::string(transport);
                   link.bytes = Scaled(f, "Transit Size(MB)", 1e6, true, where);
                   link.time_ns = Scaled(f, "Transit Time(ms)", 1e6, true, where);
                   out.push_back(std::move(link));
                 }
               });
  return out;
}

AscendCommunicationCluster CompareAscendCommunication(
    const std::vector<AscendCommunicationInput>& inputs) {
  AscendCommunicationCluster out;
  // Operations by (step, kind, op, group) -> (rank index, wait).
  std::map<std::tuple<std::string, std::string, std::string, std::string>,
           std::vector<std::pair<size_t, int64_t>>>
      shared;
  for (const AscendCommunicationInput& in : inputs) {
    if (in.collectives == nullptr || in.collectives->empty()) continue;
    AscendRankCommunication r{.rank = in.rank, .path = in.path};
    std::map<std::string, AscendTransfer> transports;
    for (const AscendCollective& c : *in.collectives) {
      ++r.collectives;
      r.elapse_ns += c.elapse_ns, r.transit_ns += c.transit_ns, r.wait_ns += c.wait_ns;
      r.sync_ns += c.sync_ns, r.idle_ns += c.idle_ns;
      for (const AscendTransfer& t : c.transfers) {
        AscendTransfer& sum = transports[t.transport];
        sum.transport = t.transport;
        sum.bytes += t.bytes, sum.time_ns += t.time_ns;
      }
      shared[{c.step, c.kind, c.op, c.group}].push_back({out.ranks.size(), c.wait_ns});
    }
    for (auto& [name, t] : transports) r.transports.push_back(t);
    out.ranks.push_back(std::move(r));
  }
  // In an operation on several ranks, the one that waited least arrived last;
  // the others' mean wait is the time they spent waiting for it.
  for (const auto& [key, waits] : shared) {
    if (waits.size() < 2) continue;
    size_t last = 0;
    int64_t total = 0;
    for (size_t i = 0; i < waits.size(); ++i) {
      total += waits[i].second;
      if (waits[i].second < waits[last].second) last = i;
      ++out.ranks[waits[i].first].shared;
    }
    AscendRankCommunication& r = out.ranks[waits[last].first];
    ++r.arrived_last;
    r.others_waited_ns += (total - waits[last].second) / static_cast<int64_t>(waits.size() - 1);
  }
  int64_t most = 0;
  for (const auto& r : out.ranks) {
    if (r.others_waited_ns > most) most = r.others_waited_ns, out.waited_for_rank = r.rank;
  }
  std::stable_sort(out.ranks.begin(), out.ranks.end(),
                   [](const auto& a, const auto& b) { return a.rank < b.rank; });
  // Group-local ranks to global ones (ascend.md 1.7): from the groups of
  // profiler_metadata.json (a local rank indexes the sorted global ranks), else
  // from each rank's own LOCAL link k-k, which says it is local rank k.
  std::map<std::string, const AscendGroup*> group_of;
  std::map<std::pair<std::string, int>, int> self_rank;  // (group, local) -> rank
  for (const AscendCommunicationInput& in : inputs) {
    if (in.groups != nullptr) {
      for (const AscendGroup& g : *in.groups) group_of.emplace(g.hash, &g);
    }
    if (in.links == nullptr || in.rank < 0) continue;
    for (const AscendLink& l : *in.links) {
      if (l.transport == "LOCAL" && l.src == l.dst)
        self_rank.emplace(std::pair{l.group, l.src}, in.rank);
    }
  }
  const auto globalize = [&](AscendLink& l) {
    if (const auto g = group_of.find(l.group); g != group_of.end()) {
      const std::vector<int>& ranks = g->second->global_ranks;
      const auto at = [&](int local) {
        return local >= 0 && static_cast<size_t>(local) < ranks.size() ? ranks[local] : -1;
      };
      l.global_src = at(l.src), l.global_dst = at(l.dst);
      l.group_role = g->second->role;
      l.ranks_from = "profiler_metadata.json";
      return;
    }
    const auto self = [&](int local) {
      const auto it = self_rank.find({l.group, local});
      return it == self_rank.end() ? -1 : it->second;
    };
    l.global_src = self(l.src), l.global_dst = self(l.dst);
    if (l.global_src >= 0 || l.global_dst >= 0) l.ranks_from = "self-links";
  };
  // Links: one entry per (step, kind, type, group, source, destination), the
  // first rank's file that reports it; LOCAL copies and small links left out.
  std::map<std::tuple<std::string, std::string, std::string, std::string, int, int>, bool> seen;
  std::map<std::string, std::vector<AscendSlowLink>> by_transport;
  for (const AscendCommunicationInput& in : inputs) {
    if (in.links == nullptr) continue;
    for (const AscendLink& l : *in.links) {
      if (l.transport == "LOCAL" || l.bytes < kMinLinkBytes || l.time_ns <= 0) continue;
      if (!seen.emplace(std::tuple{l.step, l.kind, l.op_type, l.group, l.src, l.dst}, true)
               .second) {
        continue;
      }
      AscendSlowLink slow{in.rank, l, 0};
      globalize(slow.link);
      by_transport[l.transport].push_back(std::move(slow));
    }
  }
  for (auto& [transport, links] : by_transport) {
    if (links.size() < 3) continue;
    std::vector<double> gbps;
    for (const auto& l : links) gbps.push_back(l.link.Gbps());
    const double median = Median(gbps);
    for (auto& l : links) {
      l.median_gbps = median;
      out.links.push_back(std::move(l));
    }
  }
  const auto ratio = [](const AscendSlowLink& l) {
    return l.median_gbps > 0 ? l.link.Gbps() / l.median_gbps : 1.0;
  };
  std::stable_sort(out.links.begin(), out.links.end(),
                   [&](const auto& a, const auto& b) { return ratio(a) < ratio(b); });
  for (const auto& l : out.links) out.slow_links += ratio(l) < kSlowLinkRatio ? 1 : 0;
  return out;
}

}  // namespace opscope::analyze
