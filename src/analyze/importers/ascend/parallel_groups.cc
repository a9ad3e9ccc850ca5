#include "analyze/importers/ascend/parallel_groups.h"

#include <simdjson.h>

#include <algorithm>
#include <string>

#include "analyze/importers/json_file.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

// profiler_metadata.json is a small flat object (a few KB; users may add keys).
constexpr size_t kMaxBytes = size_t{64} << 20;

}  // namespace

uint64_t HcclGroupHash(std::string_view hccl_name) {
  uint32_t high = 0, low = 0;
  for (const char c : hccl_name) {
    const auto byte = static_cast<uint32_t>(static_cast<unsigned char>(c));
    high = high * 29 + byte;
    low = low * 131 + byte;
  }
  return uint64_t{high} << 32 | low;
}

std::vector<ReportedGroup> ReadParallelGroups(Source& source) {
  return ReadProfilerMetadata(source).groups;
}

namespace {

std::vector<ReportedGroup> GroupsOf(simdjson::dom::element root, const std::string& path);

}  // namespace

ProfilerMetadata ReadProfilerMetadata(Source& source) {
  const std::string& path = source.name();
  simdjson::dom::parser parser;
  const simdjson::dom::element root = ReadJsonFile(source, parser, kMaxBytes, "profiler metadata");
  ProfilerMetadata out;
  out.groups = GroupsOf(root, path);
  simdjson::dom::object env;
  if (root["ENV_VARIABLES"].get_object().get(env) == simdjson::SUCCESS) {
    for (const auto [name, value] : env) {
      std::string_view text;
      out.environment.emplace_back(std::string(name),
                                   value.get_string().get(text) == simdjson::SUCCESS
                                       ? std::string(text)
                                       : simdjson::to_string(value));
    }
  }
  return out;
}

namespace {

std::vector<ReportedGroup> GroupsOf(simdjson::dom::element root, const std::string& path) {
  simdjson::dom::object groups;
  if (root["parallel_group_info"].get_object().get(groups) != simdjson::SUCCESS) return {};
  std::vector<ReportedGroup> out;
  for (const auto [name_key, info] : groups) {
    ReportedGroup g;
    g.library_name = std::string(name_key);
    g.hash = std::to_string(HcclGroupHash(g.library_name));
    g.source = path;
    const std::string where = path + ": parallel_group_info/" + g.library_name;
    std::string_view role;
    if (info["group_name"].get_string().get(role) == simdjson::SUCCESS) g.role = std::string(role);
    simdjson::dom::array ranks;
    if (info["global_ranks"].get_array().get(ranks) != simdjson::SUCCESS) {
      throw Error(ErrorCode::kInvalidInput, where + ": no 'global_ranks' list");
    }
    for (const simdjson::dom::element r : ranks) {
      int64_t rank = -1;
      if (r.get_int64().get(rank) != simdjson::SUCCESS || rank < 0 || rank > 9999999) {
        throw Error(ErrorCode::kInvalidInput,
                    where + "/global_ranks: '" + simdjson::to_string(r) + "' is not a rank");
      }
      g.global_ranks.push_back(static_cast<int>(rank));
    }
    std::sort(g.global_ranks.begin(), g.global_ranks.end());
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

}  // namespace opscope::analyze
