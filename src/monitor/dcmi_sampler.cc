// Ascend NPUs through DCMI (dcmi_sampler.h).
#include "monitor/dcmi_sampler.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/dlsym.h"

namespace opscope::monitor {
namespace {

// What the DCMI reference declares, restated: each function returns 0 on
// success, else an error code.
struct dcmi_hbm_info {
  unsigned long long memory_size;   // MB
  unsigned int freq;                // MHz
  unsigned long long memory_usage;  // MB
  int temp;                         // Celsius
  unsigned int bandwith_util_rate;  // %
};
constexpr int kMaxChipNameLen = 32;
struct dcmi_chip_info {
  unsigned char chip_type[kMaxChipNameLen];
  unsigned char chip_name[kMaxChipNameLen];
  unsigned char chip_ver[kMaxChipNameLen];
  unsigned int aicore_cnt;
};
struct dcmi_ecc_info {
  int enable_flag;                                                      // 0: ECC detection off
  unsigned int single_bit_error_cnt, double_bit_error_cnt;              // since the last boot
  unsigned int total_single_bit_error_cnt, total_double_bit_error_cnt;  // over its life
  unsigned int single_bit_isolated_pages_cnt, double_bit_isolated_pages_cnt;
};
// dcmi_get_device_ecc_info's enum dcmi_device_type: the memory asked about.
constexpr int kEccDdr = 0, kEccHbm = 2;
// dcmi_get_device_utilization_rate's input_type.
constexpr int kUtilMemory = 1, kUtilAiCore = 2, kUtilAiCpu = 3, kUtilCtrlCpu = 4,
              kUtilMemoryBandwidth = 5, kUtilHbmBandwidth = 10, kUtilVectorCore = 12, kUtilNpu = 13;
// dcmi_get_device_frequency's enum dcmi_freq_type.
constexpr int kFreqAiCoreCurrent = 7, kFreqAiCoreRated = 9;
// dcmi_get_device_health: 0 normal, 1 minor, 2 major, 3 critical alarm;
// 0xFFFFFFFF: no such device.
constexpr unsigned kHealthNoDevice = 0xFFFFFFFFu;

struct Api {
  void* library = nullptr;
  std::string path;
  int (*Init)() = nullptr;
  int (*CardList)(int*, int*, int) = nullptr;
  int (*DeviceIdInCard)(int, int*, int*, int*) = nullptr;
  int (*Utilization)(int, int, int, unsigned int*) = nullptr;
  int (*Temperature)(int, int, int*) = nullptr;
  int (*Power)(int, int, int*) = nullptr;
  int (*Frequency)(int, int, int, unsigned int*) = nullptr;
  int (*Hbm)(int, int, dcmi_hbm_info*) = nullptr;
  int (*Health)(int, int, unsigned int*) = nullptr;
  int (*ChipInfo)(int, int, dcmi_chip_info*) = nullptr;
  int (*Ecc)(int, int, int, dcmi_ecc_info*) = nullptr;
};

using core::LoadSymbol;

std::shared_ptr<Api> LoadApi(std::string& why) {
  // The loader's path, then where the Ascend driver installs it.
  const core::OpenedLibrary lib = core::OpenLibrary(
      "OPSCOPE_DCMI_LIBRARY", {"libdcmi.so", "/usr/local/Ascend/driver/lib64/driver/libdcmi.so"});
  if (lib.handle == nullptr) {
    why = "no Ascend driver: " + lib.error;
    return nullptr;
  }
  void* library = lib.handle;
  auto api = std::shared_ptr<Api>(new Api, [](Api* a) {
    ::dlclose(a->library);
    delete a;
  });
  api->library = library;
  api->path = lib.path;
  // dcmi_get_card_list, or the older dcmi_get_card_num_list of the same signature.
  const bool ok = LoadSymbol(library, "dcmi_init", api->Init) &&
                  (LoadSymbol(library, "dcmi_get_card_list", api->CardList) ||
                   LoadSymbol(library, "dcmi_get_card_num_list", api->CardList)) &&
                  LoadSymbol(library, "dcmi_get_device_id_in_card", api->DeviceIdInCard);
  if (!ok) {
    why = fmt::format(
        "DCMI at {} lacks dcmi_init, dcmi_get_card_list or "
        "dcmi_get_device_id_in_card",
        api->path);
    return nullptr;
  }
  LoadSymbol(library, "dcmi_get_device_utilization_rate", api->Utilization);
  LoadSymbol(library, "dcmi_get_device_temperature", api->Temperature);
  LoadSymbol(library, "dcmi_get_device_power_info", api->Power);
  LoadSymbol(library, "dcmi_get_device_frequency", api->Frequency);
  LoadSymbol(library, "dcmi_get_device_hbm_info", api->Hbm);
  LoadSymbol(library, "dcmi_get_device_health", api->Health);
  LoadSymbol(library, "dcmi_get_device_chip_info", api->ChipInfo);
  LoadSymbol(library, "dcmi_get_device_ecc_info", api->Ecc);
  if (const int status = api->Init(); status != 0) {
    why = fmt::format("DCMI failed to initialise: dcmi_init returned {}", status);
    return nullptr;
  }
  return api;
}

std::string Text(const unsigned char* s) {
  return std::string(reinterpret_cast<const char*>(s),
                     strnlen(reinterpret_cast<const char*>(s), kMaxChipNameLen));
}

class DcmiSampler final : public Sampler {
 public:
  DcmiSampler(std::shared_ptr<Api> api, int card, int chip, int index)
      : api_(std::move(api)), card_(card), chip_(chip), id_("npu:" + std::to_string(index)) {
    dcmi_chip_info info{};
    if (api_->ChipInfo != nullptr && api_->ChipInfo(card_, chip_, &info) == 0) {
      const std::string type = Text(info.chip_type), name = Text(info.chip_name);
      name_ = type.empty() ? name : name.empty() ? type : type + " " + name;
    }
    if (name_.empty()) name_ = "Ascend NPU";
  }

  std::string device() const override { return id_; }
  std::string description() const override {
    return fmt::format("{} (DCMI card {} chip {})", name_, card_, chip_);
  }

  std::vector<Metric> Sample() override {
    std::vector<Metric> out;
    // A reading, or why there is none: the function absent from this driver,
    // or the code it returned.
    const auto add = [&](const char* name, const char* help, const char* unit, const char* fn,
                         bool present, int status, double value) {
      Metric m;
      m.name = name;
      m.help = help;
      m.unit = unit;
      m.labels = {
          {"device", id_}, {"card", std::to_string(card_)}, {"chip", std::to_string(chip_)}};
      if (!present) {
        m.unavailable = fmt::format("this driver's DCMI has no {}", fn);
      } else if (status != 0) {
        m.unavailable =
            fmt::format("{} returned {} (not supported here, or no permission)", fn, status);
      } else {
        m.value = value;
      }
      out.push_back(std::move(m));
    };
    const auto utilization = [&](const char* name, const char* help, int type) {
      unsigned int v = 0;
      const int s = api_->Utilization ? api_->Utilization(card_, chip_, type, &v) : -1;
      add(name, help, "%", "dcmi_get_device_utilization_rate", api_->Utilization != nullptr, s, v);
    };
    utilization("npu_aicore_utilization_percent", "AI Core busy, as npu-smi's usages show it",
                kUtilAiCore);
    utilization("npu_vector_core_utilization_percent", "Vector Core busy", kUtilVectorCore);
    utilization("npu_aicpu_utilization_percent", "AI CPU busy", kUtilAiCpu);
    utilization("npu_ctrlcpu_utilization_percent", "Control CPU busy", kUtilCtrlCpu);
    utilization("npu_utilization_percent", "The NPU as a whole", kUtilNpu);
    utilization("npu_memory_utilization_percent", "DDR memory in use", kUtilMemory);
    utilization("npu_memory_bandwidth_utilization_percent", "DDR bandwidth in use",
                kUtilMemoryBandwidth);
    utilization("npu_hbm_bandwidth_utilization_percent", "HBM bandwidth in use", kUtilHbmBandwidth);
    dcmi_hbm_info hbm{};
    const int hs = api_->Hbm ? api_->Hbm(card_, chip_, &hbm) : -1;
    const bool has_hbm = api_->Hbm != nullptr;
    constexpr double kMiB = 1024.0 * 1024.0;  // DCMI's MB
    add("npu_hbm_used_bytes", "On-chip memory (HBM) in use", "bytes", "dcmi_get_device_hbm_info",
        has_hbm, hs, static_cast<double>(hbm.memory_usage) * kMiB);
    add("npu_hbm_total_bytes", "On-chip memory (HBM)", "bytes", "dcmi_get_device_hbm_info", has_hbm,
        hs, static_cast<double>(hbm.memory_size) * kMiB);
    add("npu_hbm_temperature_celsius", "On-chip memory temperature", "C",
        "dcmi_get_device_hbm_info", has_hbm, hs, hbm.temp);
    int value = 0;
    int s = api_->Temperature ? api_->Temperature(card_, chip_, &value) : -1;
    add("npu_temperature_celsius", "Chip temperature", "C", "dcmi_get_device_temperature",
        api_->Temperature != nullptr, s, value);
    s = api_->Power ? api_->Power(card_, chip_, &value) : -1;
    add("npu_power_watts", "Chip power", "W", "dcmi_get_device_power_info", api_->Power != nullptr,
        s, value / 10.0);  // in 0.1 W
    unsigned int mhz = 0;
    s = api_->Frequency ? api_->Frequency(card_, chip_, kFreqAiCoreCurrent, &mhz) : -1;
    add("npu_aicore_clock_mhz", "AI Core clock now", "MHz", "dcmi_get_device_frequency",
        api_->Frequency != nullptr, s, mhz);
    s = api_->Frequency ? api_->Frequency(card_, chip_, kFreqAiCoreRated, &mhz) : -1;
    add("npu_aicore_rated_clock_mhz", "AI Core rated clock (sustained at TDP)", "MHz",
        "dcmi_get_device_frequency", api_->Frequency != nullptr, s, mhz);
    AddEcc(out);
    unsigned int health = 0;
    s = api_->Health ? api_->Health(card_, chip_, &health) : -1;
    add("npu_health", "Health: 0 normal, 1 minor, 2 major, 3 critical alarm", "",
        "dcmi_get_device_health", api_->Health != nullptr, s, health);
    if (s == 0 && health == kHealthNoDevice) {
      out.back().value.reset();
      out.back().unavailable = "dcmi_get_device_health says the chip does not exist";
    }
    return out;
  }

 private:
  // ECC error counts of the on-chip memory (HBM), else of the DDR where the
  // part answers only for it (the reference: "DDR supported at present").
  void AddEcc(std::vector<Metric>& out) const {
    dcmi_ecc_info ecc{};
    const char* memory = "hbm";
    int s = api_->Ecc ? api_->Ecc(card_, chip_, kEccHbm, &ecc) : -1;
    if (api_->Ecc && s != 0) {
      memory = "ddr";
      ecc = {};
      s = api_->Ecc(card_, chip_, kEccDdr, &ecc);
    }
    const auto add = [&](const char* name, const char* help, unsigned int value) {
      Metric m;
      m.name = name;
      m.help = help;
      m.unit = "";
      m.labels = {{"device", id_},
                  {"card", std::to_string(card_)},
                  {"chip", std::to_string(chip_)},
                  {"memory", memory}};
      if (api_->Ecc == nullptr) {
        m.unavailable = "this driver's DCMI has no dcmi_get_device_ecc_info";
      } else if (s != 0) {
        m.unavailable = fmt::format(
            "dcmi_get_device_ecc_info returned {} (not supported here, or no permission)", s);
      } else if (ecc.enable_flag == 0) {
        m.unavailable = "ECC detection is off on this chip";
      } else {
        m.value = value;
      }
      out.push_back(std::move(m));
    };
    add("npu_ecc_single_bit_errors", "Single-bit ECC errors since the last boot",
        ecc.single_bit_error_cnt);
    add("npu_ecc_double_bit_errors",
        "Multi-bit ECC errors since the last boot (any one calls for a look)",
        ecc.double_bit_error_cnt);
  }

  std::shared_ptr<Api> api_;
  int card_, chip_;
  std::string id_, name_;
};

// Where DCMI is absent (containers often lack the driver's management
// library), AscendCL's runtime gives the utilization alone:
// aclrtGetDeviceUtilizationRate, as the AscendCL reference declares it.
struct aclrtUtilizationInfo {
  int32_t cubeUtilization;
  int32_t vectorUtilization;
  int32_t aicpuUtilization;
  int32_t memoryUtilization;  // reserved: -1
  void* utilizationExtend;    // reserved: null
};

struct AclApi {
  void* library = nullptr;
  int (*Init)(const char*) = nullptr;
  int (*DeviceCount)(uint32_t*) = nullptr;
  int (*Utilization)(int32_t, aclrtUtilizationInfo*) = nullptr;
  const char* (*SocName)() = nullptr;
};

std::shared_ptr<AclApi> LoadAcl(std::string& why) {
  const core::OpenedLibrary lib = core::OpenLibrary("OPSCOPE_ACL_LIBRARY", {"libascendcl.so"});
  if (lib.handle == nullptr) {
    why = "nor AscendCL: " + lib.error;
    return nullptr;
  }
  void* library = lib.handle;
  auto api = std::shared_ptr<AclApi>(new AclApi, [](AclApi* a) {
    ::dlclose(a->library);
    delete a;
  });
  api->library = library;
  if (!LoadSymbol(library, "aclInit", api->Init) ||
      !LoadSymbol(library, "aclrtGetDeviceCount", api->DeviceCount) ||
      !LoadSymbol(library, "aclrtGetDeviceUtilizationRate", api->Utilization)) {
    why = fmt::format(
        "nor AscendCL: {} lacks aclInit, aclrtGetDeviceCount or "
        "aclrtGetDeviceUtilizationRate",
        lib.path);
    return nullptr;
  }
  LoadSymbol(library, "aclrtGetSocName", api->SocName);
  // 0: initialised now; AscendCL's "repeat initialize" (100002) is fine too.
  if (const int status = api->Init(nullptr); status != 0 && status != 100002) {
    why = fmt::format("nor AscendCL: aclInit returned {}", status);
    return nullptr;
  }
  return api;
}

class AclSampler final : public Sampler {
 public:
  AclSampler(std::shared_ptr<AclApi> api, int32_t device)
      : api_(std::move(api)), device_(device), id_("npu:" + std::to_string(device)) {
    const char* soc = api_->SocName != nullptr ? api_->SocName() : nullptr;
    name_ = soc != nullptr && *soc != 0 ? soc : "Ascend NPU";
  }

  std::string device() const override { return id_; }
  std::string description() const override {
    return name_ + " (AscendCL utilization only; no DCMI here)";
  }

  std::vector<Metric> Sample() override {
    aclrtUtilizationInfo info{};
    const int status = api_->Utilization(device_, &info);
    std::vector<Metric> out;
    const auto add = [&](const char* name, const char* help, int32_t value) {
      Metric m;
      m.name = name;
      m.help = help;
      m.unit = "%";
      m.labels = {{"device", id_}};
      if (status != 0) {
        m.unavailable = fmt::format("aclrtGetDeviceUtilizationRate returned {}", status);
      } else if (value < 0) {
        m.unavailable = "AscendCL gives -1: this part has no such unit, or it is not recorded";
      } else {
        m.value = value;
      }
      m.note = "meaningless while the profiler records (AscendCL's reference)";
      out.push_back(std::move(m));
    };
    add("npu_cube_utilization_percent", "Cube (matrix) units busy", info.cubeUtilization);
    add("npu_vector_utilization_percent", "Vector units busy", info.vectorUtilization);
    add("npu_aicpu_utilization_percent", "AI CPU busy", info.aicpuUtilization);
    add("npu_memory_utilization_percent", "Device memory in use", info.memoryUtilization);
    return out;
  }

 private:
  std::shared_ptr<AclApi> api_;
  int32_t device_;
  std::string id_, name_;
};

std::vector<std::unique_ptr<Sampler>> OpenAclSamplers(std::string& why) {
  std::vector<std::unique_ptr<Sampler>> samplers;
  std::string acl_why;
  auto api = LoadAcl(acl_why);
  if (!api) {
    why += ", " + acl_why;
    return samplers;
  }
  uint32_t count = 0;
  if (const int s = api->DeviceCount(&count); s != 0 || count == 0) {
    why += s != 0 ? fmt::format(", and aclrtGetDeviceCount returned {}", s)
                  : std::string(", and AscendCL reports no device");
    return samplers;
  }
  for (uint32_t d = 0; d < count && d < 64; ++d) {
    samplers.push_back(std::make_unique<AclSampler>(api, static_cast<int32_t>(d)));
  }
  why.clear();
  return samplers;
}

}  // namespace

std::vector<std::unique_ptr<Sampler>> OpenDcmiSamplers(std::string& why) {
  std::vector<std::unique_ptr<Sampler>> samplers;
  auto api = LoadApi(why);
  if (!api) return OpenAclSamplers(why);
  constexpr int kMaxCards = 64;  // the reference's limit
  int cards[kMaxCards] = {};
  int count = 0;
  if (const int s = api->CardList(&count, cards, kMaxCards); s != 0 || count <= 0) {
    why = s != 0 ? fmt::format("Ascend driver loaded, but dcmi_get_card_list returned {}", s)
                 : std::string("Ascend driver loaded, but it reports no NPU");
    return samplers;
  }
  int index = 0;
  for (int c = 0; c < std::min(count, kMaxCards); ++c) {
    int chips = 0, mcu = -1, cpu = -1;
    if (api->DeviceIdInCard(cards[c], &chips, &mcu, &cpu) != 0) continue;
    for (int chip = 0; chip < chips && chip < 64; ++chip) {
      samplers.push_back(std::make_unique<DcmiSampler>(api, cards[c], chip, index++));
    }
  }
  if (samplers.empty()) why = "Ascend driver loaded, but its cards report no NPU chip";
  return samplers;
}

}  // namespace opscope::monitor
