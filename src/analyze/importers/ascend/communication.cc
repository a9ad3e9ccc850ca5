#include "analyze/importers/ascend/communication.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <tuple>

#include "analyze/importers/json_file.h"
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

std::vector<ReportedCollective> ReadCommunication(Source& source) {
  const std::string& path = source.name();
  simdjson::dom::parser parser;
  const simdjson::dom::element root = Parse(parser, source);
  std::vector<ReportedCollective> out;
  ForEachEntry(
      root, path,
      [&](std::string_view step, std::string_view kind, std::string_view key,
          simdjson::dom::element info) {
        // "Total Op Info" sums the others (docs/formats/ascend.md 3.5): recomputed, not read.
        if (IsTotalEntry(key)) return;
        const auto where = [&] { return Where(path, {step, kind, key}); };
        simdjson::dom::object time;
        if (info["Communication Time Info"].get_object().get(time) != simdjson::SUCCESS) {
          throw Error(ErrorCode::kInvalidInput, where() + ": no 'Communication Time Info' object");
        }
        ReportedCollective c;
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
            if (transport == "SDMA") continue;  // HCCS + PCIE + SIO (docs/formats/ascend.md 3.5)
            simdjson::dom::object f;
            if (figures.get_object().get(f) != simdjson::SUCCESS) continue;
            const auto bw_where = [&] {
              return where() + "/Communication Bandwidth Info/" + std::string(transport);
            };
            ReportedTransfer t{std::string(transport),
                               Scaled(f, "Transit Size(MB)", 1e6, false, bw_where),
                               Scaled(f, "Transit Time(ms)", 1e6, false, bw_where)};
            if (t.bytes > 0 || t.time_ns > 0) c.transfers.push_back(std::move(t));
          }
        }
        out.push_back(std::move(c));
      });
  return out;
}

std::vector<ReportedLink> ReadCommunicationMatrix(Source& source) {
  const std::string& path = source.name();
  simdjson::dom::parser parser;
  const simdjson::dom::element root = Parse(parser, source);
  std::vector<ReportedLink> out;
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
                   ReportedLink link;
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

}  // namespace opscope::analyze
