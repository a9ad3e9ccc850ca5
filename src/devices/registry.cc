#include "devices/registry.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "core/text.h"
#include "devices/backend.h"
#include "devices/cpu/cpu_device.h"
#include "opscope/opscope.h"

namespace opscope::devices {

const char* Name(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHostToDevice: return "h2d";
    case CopyKind::kDeviceToHost: return "d2h";
    case CopyKind::kDeviceToDevice: return "d2d";
    case CopyKind::kBidirectional: return "bidir";
  }
  return "?";
}

const char* Name(HostMemory memory) {
  return memory == HostMemory::kPinned ? "pinned" : "pageable";
}

void* Device::AllocateHost(size_t bytes, HostMemory) {
  void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (p == nullptr) {
    throw Error(ErrorCode::kResourceExhausted,
                "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  }
  return p;
}

void Device::FreeHost(void* pointer, HostMemory) { std::free(pointer); }

void Device::Upload(void* device_dst, const void* host_src, size_t bytes) {
  if (bytes > 0) std::memcpy(device_dst, host_src, bytes);
}

void Device::Download(void* host_dst, const void* device_src, size_t bytes) {
  if (bytes > 0) std::memcpy(host_dst, device_src, bytes);
}

void Device::CopyBidirectional(void*, const void*, void*, const void*, size_t) {
  throw Error(ErrorCode::kUnsupported,
              properties().id + ": " + CopyNotApplicable(CopyKind::kBidirectional));
}

const char* Name(StreamOp op) {
  switch (op) {
    case StreamOp::kCopy: return "copy";
    case StreamOp::kScale: return "scale";
    case StreamOp::kAdd: return "add";
    case StreamOp::kTriad: return "triad";
  }
  return "?";
}

std::unique_ptr<Network> Device::CreateNetwork(const NetworkSpec&, const NetworkOptions&) {
  throw Error(ErrorCode::kUnsupported, properties().id + " has no network layers in this build");
}

void ValidateNetworkSpec(const NetworkSpec& spec) {
  if (spec.batch < 1 || spec.channels < 1 || spec.height < 1 || spec.width < 1) {
    throw Error(ErrorCode::kInvalidArgument, "the network input must have positive dimensions");
  }
  if (spec.layers.empty()) throw Error(ErrorCode::kInvalidArgument, "a network needs layers");
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec& l = spec.layers[i];
    const size_t arity = l.kind == LayerKind::kAdd ? 2 : 1;
    if (l.inputs.size() != arity) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("layer {} ({}) takes {} input(s), not {}", i, l.name, arity,
                              l.inputs.size()));
    }
    for (const int in : l.inputs) {
      if (in < -1 || in >= static_cast<int>(i)) {
        throw Error(ErrorCode::kInvalidArgument,
                    fmt::format("layer {} ({}) reads layer {}, which does not run before it", i,
                                l.name, in));
      }
    }
    if (l.kind == LayerKind::kSoftmaxCrossEntropy && i + 1 != spec.layers.size()) {
      throw Error(ErrorCode::kInvalidArgument, "the loss must be the last layer");
    }
  }
}

int ArraysTouched(StreamOp op) { return op == StreamOp::kCopy || op == StreamOp::kScale ? 2 : 3; }

namespace {

std::string ProgramDirectory() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

struct LoadedBackend {
  const BackendApi* api = nullptr;
  std::string why;
  std::string directory;
};

LoadedBackend Load(const std::string& kind) {
  LoadedBackend out;
  const std::string file = "libopscope_" + kind + ".so";
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("OPSCOPE_BACKEND_DIR"); env != nullptr && *env != 0) {
    dirs.emplace_back(env);
  }
  const std::string program = ProgramDirectory();
  dirs.push_back(program);
  dirs.push_back(program + "/../lib/opscope");
  std::string tried;
  for (const std::string& dir : dirs) {
    const std::string path = dir + "/" + file;
    if (!std::filesystem::exists(path)) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    out.directory = dir;
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = ::dlerror();
      out.why = "cannot load the " + kind + " backend " + path + ": " +
                (error != nullptr ? error : "dlopen failed") +
                (kind == "cuda" && error != nullptr &&
                         std::string(error).find("cannot open shared object") != std::string::npos
                     ? " (are the CUDA 13 libraries, cuDNN 9 among them, on LD_LIBRARY_PATH?)"
                     : "");
      return out;
    }
    using Entry = const BackendApi* (*)();
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, OPSCOPE_BACKEND_ENTRY));
    const BackendApi* api = entry != nullptr ? entry() : nullptr;
    if (api == nullptr || api->abi != kBackendAbi) {
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
  return out;
}

// Accelerator kinds a plugin may provide.
constexpr const char* kPluginKinds[] = {"cuda"};

}  // namespace

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
  for (const char* kind : kPluginKinds) {
    const BackendApi* api = LoadBackend(kind, nullptr);
    if (api == nullptr) continue;
    const int count = api->count_devices(nullptr);
    for (int i = 0; i < count; ++i) devices.push_back(std::string(kind) + ":" + std::to_string(i));
  }
  devices.emplace_back("cpu");
  return devices;
}

// The CPU, which runs every workload. A CUDA device is used when asked for
// (--device cuda:0) until its backend runs all of `opscope run` (ResNet-50 on
// cuDNN is not there yet).
std::string DefaultDevice() { return "cpu"; }

std::unique_ptr<Device> OpenDevice(const std::string& name, const DeviceOptions& options) {
  if (name == "cpu" || name == "cpu:0") return cpu::CreateCpuDevice(options);
  for (const char* kind : kPluginKinds) {
    const std::string prefix = std::string(kind);
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    int ordinal = 0;
    if (!rest.empty()) {
      if (rest[0] != ':' || rest.size() < 2 || rest.size() > 5 ||
          rest.find_first_not_of("0123456789", 1) != std::string::npos) {
        break;
      }
      ordinal = std::stoi(rest.substr(1));
    }
    std::string why;
    const BackendApi* api = LoadBackend(kind, &why);
    if (api == nullptr) {
      throw Error(ErrorCode::kUnsupported,
                  "unavailable device '" + core::EscapeForTerminal(name) + "': " + why);
    }
    return api->open_device(ordinal);
  }
  throw Error(ErrorCode::kUnsupported,
              "unknown device '" + core::EscapeForTerminal(name) +
                  "': use cpu or cuda:N (devices present: " + Joined(ListDevices()) + ")");
}

}  // namespace opscope::devices
