#include "analyze/side_files.h"

#include <fnmatch.h>

#include <algorithm>

#include "opscope/opscope.h"

namespace opscope::analyze {

const std::string& TraceInput::File(std::string_view role) const {
  static const std::string kNone;
  for (const SideFile& f : files) {
    if (f.role == role) return f.path;
  }
  return kNone;
}

void TraceInput::SetFile(std::string_view role, std::string file) {
  const auto it =
      std::find_if(files.begin(), files.end(), [&](const SideFile& f) { return f.role == role; });
  if (file.empty()) {
    if (it != files.end()) files.erase(it);
  } else if (it != files.end()) {
    it->path = std::move(file);
  } else {
    files.push_back({std::string(role), std::move(file)});
  }
}

void RankFiles::CouldNotRead(const std::string& path, std::string_view why) {
  unused_.push_back({path, "could not be read: " + std::string(why)});
}

bool RankFiles::IsDone(std::string_view role) const {
  return std::find(done_.begin(), done_.end(), role) != done_.end();
}

std::string_view RoleOfFile(std::string_view file_name) {
  const std::string name(file_name);
  for (const SideFileReader& reader : SideFileReaders()) {
    for (const auto& [role, patterns] : reader.roles) {
      for (const std::string_view pattern : patterns) {
        if (fnmatch(std::string(pattern).c_str(), name.c_str(), 0) == 0) return role;
      }
    }
  }
  return {};
}

void ReadSideFiles(RankFiles& files, TraceModel& model) {
  for (const SideFileReader& reader : SideFileReaders()) {
    const std::string* first = nullptr;
    bool done = false;
    for (const auto& [role, patterns] : reader.roles) {
      done = done || files.IsDone(role);
      if (first == nullptr && !files.Path(role).empty()) first = &files.Path(role);
    }
    if (first == nullptr || done) continue;
    try {
      reader.read(files, model);
    } catch (const Error& e) {
      files.CouldNotRead(*first, e.what());
    }
  }
}

}  // namespace opscope::analyze
