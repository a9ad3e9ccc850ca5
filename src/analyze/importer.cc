#include "analyze/importer.h"

#include <fnmatch.h>

#include <algorithm>

#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {

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
  for (const auto& input : inputs) {
    std::error_code ec;
    if (input == "-" || !std::filesystem::is_directory(input, ec)) {
      out.push_back(input);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(input, ec)) {
      if (entry.is_regular_file() && MatchesTraceName(entry.path().filename().string())) {
        found.push_back(entry.path().string());
      }
    }
    if (ec) {
      throw Error(ErrorCode::kIo, "cannot list '" + input + "': " + ec.message());
    }
    if (found.empty()) {
      std::string patterns;
      for (const Importer& importer : Importers()) {
        for (const std::string_view p : importer.file_patterns) {
          patterns += (patterns.empty() ? "" : ", ") + std::string(p);
        }
      }
      throw Error(ErrorCode::kInvalidInput,
                  "'" + input + "' holds no trace files (" + patterns + ", plain or .gz/.zip)");
    }
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace opscope::analyze
