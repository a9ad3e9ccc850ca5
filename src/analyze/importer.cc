#include "analyze/importer.h"

#include <fnmatch.h>

#include <algorithm>
#include <mutex>

#include "analyze/trace_inputs.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {
std::mutex settings_mutex;
ImportSettings settings;
}  // namespace

void SetImportSettings(const ImportSettings& s) {
  std::lock_guard lock(settings_mutex);
  settings = s;
  settings.threads = std::max(0, s.threads);
}

ImportSettings GetImportSettings() {
  std::lock_guard lock(settings_mutex);
  return settings;
}

const Importer* FindImporter(Source& source) {
  for (const Importer& importer : Importers()) {
    if (importer.sniff(source)) return &importer;
  }
  return nullptr;
}

TraceModel ImportTrace(Source& source) {
  const Importer* importer = FindImporter(source);
  if (importer == nullptr) {
    std::string formats;
    for (const Importer& i : Importers()) {
      formats += (formats.empty() ? "" : "; ") + std::string(i.description);
    }
    throw Error(ErrorCode::kUnsupported, "'" + source.name() +
                                             "' is not a trace format opscope reads (" + formats +
                                             "; plain, gzip or zip); it begins: " +
                                             core::EscapeForTerminal(std::string(source.Peek(40))));
  }
  TraceModel model;
  importer->import(source, model);
  return model;
}

TraceModel ImportTrace(const std::filesystem::path& path) {
  const auto source = Source::Open(path);
  return ImportTrace(*source);
}

bool MatchesTraceName(std::string_view file_name) {
  std::string name(file_name);
  for (const char* suffix : {".gz", ".zip"}) {
    if (name.size() > std::string_view(suffix).size() && name.ends_with(suffix)) {
      name.resize(name.size() - std::string_view(suffix).size());
      break;
    }
  }
  for (const Importer& importer : Importers()) {
    for (const std::string_view pattern : importer.file_patterns) {
      if (fnmatch(std::string(pattern).c_str(), name.c_str(), 0) == 0) return true;
    }
  }
  return false;
}

std::vector<std::string> FindTraceFiles(const std::vector<std::string>& inputs) {
  std::vector<std::string> out;
  for (TraceInput& input : FindTraceInputs(inputs).traces) out.push_back(std::move(input.path));
  return out;
}

}  // namespace opscope::analyze
