#include "devices/registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::devices {
namespace {

constexpr std::string_view kPluginPrefix = "libopscope_backend_";
constexpr std::string_view kPluginSuffix = ".so";

std::string ProgramDirectory() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

// Where plugins are looked for, in order.
std::vector<std::string> PluginDirectories() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("OPSCOPE_BACKEND_DIR"); env != nullptr && *env != 0) {
    dirs.emplace_back(env);
  }
  const std::string program = ProgramDirectory();
  dirs.push_back(program);
  dirs.push_back(program + "/../lib/opscope");
  return dirs;
}

const BackendApi* Builtin(const std::string& kind) {
  for (const BackendApi* api : BuiltinBackends()) {
    if (api->kind == kind) return api;
  }
  return nullptr;
}

struct LoadedBackend {
  const BackendApi* api = nullptr;
  std::string why;
  std::string directory;
};

LoadedBackend Load(const std::string& kind) {
  LoadedBackend out;
  if (const BackendApi* api = Builtin(kind)) {
    out.api = api;
    return out;
  }
  const std::string file = std::string(kPluginPrefix) + kind + std::string(kPluginSuffix);
  std::string tried;
  for (const std::string& dir : PluginDirectories()) {
    const std::string path = dir + "/" + file;
    if (!std::filesystem::exists(path)) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    out.directory = dir;
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = ::dlerror();
      const bool missing_library =
          error != nullptr &&
          std::string(error).find("cannot open shared object") != std::string::npos;
      out.why = "cannot load the " + kind + " backend " + path + ": " +
                (error != nullptr ? error : "dlopen failed") +
                (missing_library ? " (are the libraries of its SDK on LD_LIBRARY_PATH?)" : "");
      return out;
    }
    using Entry = const BackendApi* (*)();
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, OPSCOPE_BACKEND_ENTRY));
    const BackendApi* api = entry != nullptr ? entry() : nullptr;
    if (api == nullptr || api->abi != kBackendAbi || api->kind != kind) {
      out.why = path + " is not an opscope " + kind + " backend of this version";
      return out;
    }
    out.api = api;
    return out;
  }
  out.why = "this build of opscope has no " + kind + " backend (looked for " + tried + ")";
  return out;
}

std::mutex& BackendMutex() {
  static std::mutex mutex;
  return mutex;
}

const LoadedBackend& Backend(const std::string& kind) {
  static std::map<std::string, LoadedBackend> loaded;
  std::lock_guard lock(BackendMutex());
  auto it = loaded.find(kind);
  if (it == loaded.end()) it = loaded.emplace(kind, Load(kind)).first;
  return it->second;
}

std::string Joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<std::string> BackendKinds() {
  std::vector<std::string> kinds;
  for (const BackendApi* api : BuiltinBackends()) kinds.emplace_back(api->kind);
  for (const std::string& dir : PluginDirectories()) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (!name.starts_with(kPluginPrefix) || !name.ends_with(kPluginSuffix)) continue;
      const std::string kind = name.substr(
          kPluginPrefix.size(), name.size() - kPluginPrefix.size() - kPluginSuffix.size());
      if (!kind.empty() &&
          kind.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") == std::string::npos) {
        kinds.push_back(kind);
      }
    }
  }
  std::sort(kinds.begin(), kinds.end());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  // Accelerators first: the CPU is the fallback.
  std::stable_partition(kinds.begin(), kinds.end(),
                        [](const std::string& k) { return k != "cpu"; });
  return kinds;
}

const BackendApi* LoadBackend(const std::string& kind, std::string* why) {
  const LoadedBackend& b = Backend(kind);
  if (b.api == nullptr && why != nullptr) *why = b.why;
  return b.api;
}

std::string BackendDirectory(const std::string& kind) {
  const LoadedBackend& b = Backend(kind);
  return b.directory.empty() ? ProgramDirectory() : b.directory;
}

std::vector<std::string> ListDevices() {
  std::vector<std::string> devices;
  for (const std::string& kind : BackendKinds()) {
    const BackendApi* api = LoadBackend(kind, nullptr);
    if (api == nullptr) continue;
    const int count = api->count_devices(nullptr);
    if (kind == "cpu" && count == 1) {
      devices.emplace_back("cpu");
      continue;
    }
    for (int i = 0; i < count; ++i) devices.push_back(kind + ":" + std::to_string(i));
  }
  return devices;
}

// The CPU, which runs every workload. A CUDA device is used when asked for
// (--device cuda:0) until its backend runs all of `opscope run` (ResNet-50 on
// cuDNN is not there yet).
std::string DefaultDevice() { return "cpu"; }

std::unique_ptr<Device> OpenDevice(const std::string& name, const DeviceOptions& options) {
  // KIND or KIND:N, N at most 4 digits.
  const size_t colon = name.find(':');
  const std::string kind = name.substr(0, colon);
  int ordinal = 0;
  bool well_formed =
      !kind.empty() &&
      kind.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") == std::string::npos;
  if (well_formed && colon != std::string::npos) {
    const std::string digits = name.substr(colon + 1);
    well_formed = !digits.empty() && digits.size() <= 4 &&
                  digits.find_first_not_of("0123456789") == std::string::npos;
    if (well_formed) ordinal = std::stoi(digits);
  }
  if (!well_formed) {
    std::string forms;
    for (const std::string& k : BackendKinds()) {
      forms += (forms.empty() ? "" : ", ") + k + (k == "cpu" ? "" : ":N");
    }
    throw Error(
        ErrorCode::kUnsupported,
        "unknown device '" + core::EscapeForTerminal(name) + "': use " +
            (forms.empty() ? std::string("a device of a backend this build has (it has none)")
                           : forms) +
            " (devices present: " + Joined(ListDevices()) + ")");
  }
  std::string why;
  const BackendApi* api = LoadBackend(kind, &why);
  if (api == nullptr) {
    throw Error(ErrorCode::kUnsupported, "unavailable device '" + core::EscapeForTerminal(name) +
                                             "': " + why +
                                             " (devices present: " + Joined(ListDevices()) + ")");
  }
  return api->open_device(ordinal, options);
}

}  // namespace opscope::devices
