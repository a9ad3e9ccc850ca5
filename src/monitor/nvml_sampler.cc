#include "monitor/nvml_sampler.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/dlsym.h"

namespace opscope::monitor {
namespace {

// The subset of nvml.h used here: types, enum values and signatures.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kNotSupported = 3;
constexpr nvmlReturn_t kNoPermission = 4;
constexpr nvmlReturn_t kNotFound = 6;

struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
union nvmlValue_t {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
};
struct nvmlSample_t {
  unsigned long long timeStamp;
  nvmlValue_t sampleValue;
};
struct nvmlGpmSample_t {
  struct nvmlGpmSample_st* handle;
};
struct nvmlGpmMetric_t {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
};
constexpr int kGpmMetricMax = 98;  // NVML_GPM_METRIC_MAX: NVML reads numMetrics entries
struct nvmlGpmMetricsGet_t {
  unsigned int version;
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[kGpmMetricMax];
};
struct nvmlGpmSupport_t {
  unsigned int version;
  unsigned int isSupportedDevice;
};
constexpr unsigned kTemperatureGpu = 0;
constexpr unsigned kClockSm = 1, kClockMem = 2;
constexpr unsigned kPcieTx = 0, kPcieRx = 1;
constexpr unsigned kGpuUtilizationSamples = 1;
constexpr unsigned kValueUnsignedInt = 1;

struct Api {
  void* library = nullptr;
  nvmlReturn_t (*Init)();
  nvmlReturn_t (*Shutdown)();
  const char* (*ErrorString)(nvmlReturn_t);
  nvmlReturn_t (*GetCount)(unsigned int*);
  nvmlReturn_t (*GetHandleByIndex)(unsigned int, nvmlDevice_t*);
  nvmlReturn_t (*GetName)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*GetUtilizationRates)(nvmlDevice_t, nvmlUtilization_t*);
  nvmlReturn_t (*GetMemoryInfo)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*GetPowerUsage)(nvmlDevice_t, unsigned int*);
  nvmlReturn_t (*GetTemperature)(nvmlDevice_t, unsigned, unsigned int*);
  nvmlReturn_t (*GetClockInfo)(nvmlDevice_t, unsigned, unsigned int*);
  nvmlReturn_t (*GetPcieThroughput)(nvmlDevice_t, unsigned, unsigned int*);
  nvmlReturn_t (*GetSamples)(nvmlDevice_t, unsigned, unsigned long long, unsigned*, unsigned int*,
                             nvmlSample_t*);
  // GPM (Hopper and later); absent in older drivers.
  nvmlReturn_t (*GpmQueryDeviceSupport)(nvmlDevice_t, nvmlGpmSupport_t*) = nullptr;
  nvmlReturn_t (*GpmSampleAlloc)(nvmlGpmSample_t*) = nullptr;
  nvmlReturn_t (*GpmSampleFree)(nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*GpmSampleGet)(nvmlDevice_t, nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*GpmMetricsGet)(nvmlGpmMetricsGet_t*) = nullptr;

  std::string Why(nvmlReturn_t status) const {
    switch (status) {
      case kNotSupported: return "not supported by this GPU or driver";
      case kNoPermission: return "no permission";
      case kNotFound: return "no such counter";
      default: return std::string("NVML error: ") + (ErrorString ? ErrorString(status) : "?");
    }
  }
};

using core::LoadSymbol;

std::shared_ptr<Api> LoadApi(std::string& why) {
  const core::OpenedLibrary lib = core::OpenLibrary("OPSCOPE_NVML_LIBRARY", {"libnvidia-ml.so.1"});
  if (lib.handle == nullptr) {
    why = "no NVIDIA driver: " + lib.error;
    return nullptr;
  }
  void* library = lib.handle;
  const std::string& path = lib.path;
  auto api = std::shared_ptr<Api>(new Api, [](Api* a) {
    if (a->Shutdown != nullptr) a->Shutdown();
    ::dlclose(a->library);
    delete a;
  });
  api->library = library;
  const bool ok = LoadSymbol(library, "nvmlInit_v2", api->Init) &&
                  LoadSymbol(library, "nvmlShutdown", api->Shutdown) &&
                  LoadSymbol(library, "nvmlErrorString", api->ErrorString) &&
                  LoadSymbol(library, "nvmlDeviceGetCount_v2", api->GetCount) &&
                  LoadSymbol(library, "nvmlDeviceGetHandleByIndex_v2", api->GetHandleByIndex) &&
                  LoadSymbol(library, "nvmlDeviceGetName", api->GetName) &&
                  LoadSymbol(library, "nvmlDeviceGetUtilizationRates", api->GetUtilizationRates) &&
                  LoadSymbol(library, "nvmlDeviceGetMemoryInfo", api->GetMemoryInfo) &&
                  LoadSymbol(library, "nvmlDeviceGetPowerUsage", api->GetPowerUsage) &&
                  LoadSymbol(library, "nvmlDeviceGetTemperature", api->GetTemperature) &&
                  LoadSymbol(library, "nvmlDeviceGetClockInfo", api->GetClockInfo) &&
                  LoadSymbol(library, "nvmlDeviceGetPcieThroughput", api->GetPcieThroughput) &&
                  LoadSymbol(library, "nvmlDeviceGetSamples", api->GetSamples);
  if (!ok) {
    why = fmt::format("NVML at {} lacks a required function ({})", path, ::dlerror());
    api->Shutdown = nullptr;
    return nullptr;
  }
  LoadSymbol(library, "nvmlGpmQueryDeviceSupport", api->GpmQueryDeviceSupport);
  LoadSymbol(library, "nvmlGpmSampleAlloc", api->GpmSampleAlloc);
  LoadSymbol(library, "nvmlGpmSampleFree", api->GpmSampleFree);
  LoadSymbol(library, "nvmlGpmSampleGet", api->GpmSampleGet);
  LoadSymbol(library, "nvmlGpmMetricsGet", api->GpmMetricsGet);
  const nvmlReturn_t status = api->Init();
  if (status != kSuccess) {
    why = "NVML failed to initialise: " + std::string(api->ErrorString(status));
    api->Shutdown = nullptr;
    return nullptr;
  }
  return api;
}

class NvmlSampler final : public Sampler {
 public:
  NvmlSampler(std::shared_ptr<Api> api, nvmlDevice_t handle, unsigned index)
      : api_(std::move(api)), handle_(handle), id_("cuda:" + std::to_string(index)) {
    char name[96] = {};
    name_ = api_->GetName(handle_, name, sizeof name) == kSuccess ? name : "NVIDIA GPU";
    gpm_why_ = "GPM metrics need a Hopper or newer GPU and driver";
    nvmlGpmSupport_t support{1, 0};
    if (api_->GpmQueryDeviceSupport && api_->GpmSampleAlloc && api_->GpmSampleGet &&
        api_->GpmMetricsGet && api_->GpmQueryDeviceSupport(handle_, &support) == kSuccess &&
        support.isSupportedDevice && api_->GpmSampleAlloc(&gpm_[0]) == kSuccess &&
        api_->GpmSampleAlloc(&gpm_[1]) == kSuccess) {
      gpm_ok_ = api_->GpmSampleGet(handle_, gpm_[0]) == kSuccess;
      gpm_why_ = gpm_ok_ ? "needs a previous sample" : "GPM sampling failed";
    }
  }
  ~NvmlSampler() override {
    for (auto& s : gpm_) {
      if (s.handle != nullptr && api_->GpmSampleFree) api_->GpmSampleFree(s);
    }
  }

  std::string device() const override { return id_; }
  std::string description() const override { return name_ + " (NVML)"; }

  std::vector<Metric> Sample() override {
    std::vector<Metric> out;
    const auto add = [&](const char* name, const char* help, const char* unit, nvmlReturn_t status,
                         double value) {
      Metric m;
      m.name = name;
      m.help = help;
      m.unit = unit;
      m.labels = {{"device", id_}};
      if (status == kSuccess) {
        m.value = value;
      } else {
        m.unavailable = api_->Why(status);
      }
      out.push_back(std::move(m));
    };
    nvmlUtilization_t util{};
    nvmlReturn_t s = api_->GetUtilizationRates(handle_, &util);
    add("gpu_utilization_percent", "Time a kernel ran, over the driver's last sample period", "%",
        s, util.gpu);
    add("gpu_memory_utilization_percent", "Time device memory was read or written", "%", s,
        util.memory);
    nvmlMemory_t mem{};
    s = api_->GetMemoryInfo(handle_, &mem);
    add("gpu_memory_used_bytes", "Device memory in use", "bytes", s, static_cast<double>(mem.used));
    add("gpu_memory_total_bytes", "Device memory", "bytes", s, static_cast<double>(mem.total));
    unsigned int value = 0;
    s = api_->GetPowerUsage(handle_, &value);
    add("gpu_power_watts", "Board power", "W", s, value / 1000.0);
    s = api_->GetTemperature(handle_, kTemperatureGpu, &value);
    add("gpu_temperature_celsius", "GPU temperature", "C", s, value);
    s = api_->GetClockInfo(handle_, kClockSm, &value);
    add("gpu_sm_clock_mhz", "SM clock", "MHz", s, value);
    s = api_->GetClockInfo(handle_, kClockMem, &value);
    add("gpu_memory_clock_mhz", "Memory clock", "MHz", s, value);
    s = api_->GetPcieThroughput(handle_, kPcieTx, &value);
    add("gpu_pcie_tx_bytes_per_second", "PCIe transmit throughput", "B/s", s, value * 1024.0);
    s = api_->GetPcieThroughput(handle_, kPcieRx, &value);
    add("gpu_pcie_rx_bytes_per_second", "PCIe receive throughput", "B/s", s, value * 1024.0);
    AddSamples(out, add);
    AddGpm(out);
    return out;
  }

 private:
  // The driver's own high-rate utilization samples since the previous call: their
  // mean and maximum catch bursts that one reading misses.
  template <typename Add>
  void AddSamples(std::vector<Metric>&, Add& add) {
    unsigned type = 0, count = 0;
    nvmlReturn_t s =
        api_->GetSamples(handle_, kGpuUtilizationSamples, last_seen_, &type, &count, nullptr);
    std::vector<nvmlSample_t> samples(count);
    if (s == kSuccess && count > 0) {
      s = api_->GetSamples(handle_, kGpuUtilizationSamples, last_seen_, &type, &count,
                           samples.data());
    }
    double sum = 0, peak = 0;
    unsigned used = 0;
    for (unsigned i = 0; s == kSuccess && i < count; ++i) {
      const double v =
          type == kValueUnsignedInt ? samples[i].sampleValue.uiVal : samples[i].sampleValue.dVal;
      sum += v;
      peak = std::max(peak, v);
      last_seen_ = std::max(last_seen_, samples[i].timeStamp);
      ++used;
    }
    const nvmlReturn_t status = s == kSuccess && used == 0 ? kNotFound : s;
    add("gpu_utilization_sampled_mean_percent",
        "Mean of the driver's utilization samples since the previous call", "%", status,
        used ? sum / used : 0);
    add("gpu_utilization_sampled_max_percent",
        "Maximum of the driver's utilization samples since the previous call", "%", status, peak);
  }

  void AddGpm(std::vector<Metric>& out) {
    static const struct {
      unsigned id;
      const char* name;
      const char* help;
    } kMetrics[] = {{2, "gpu_sm_active_percent", "Share of SMs busy (GPM SM_UTIL)"},
                    {3, "gpu_sm_occupancy_percent", "Active warps vs the maximum (GPM)"},
                    {5, "gpu_tensor_active_percent", "Time SMs ran any tensor instruction (GPM)"},
                    {10, "gpu_dram_active_percent", "DRAM bandwidth used vs its maximum (GPM)"}};
    nvmlGpmMetricsGet_t get{};
    bool ok = false;
    if (gpm_ok_) {
      const int current = 1 - gpm_index_;
      if (api_->GpmSampleGet(handle_, gpm_[current]) == kSuccess) {
        get.version = 1;
        get.numMetrics = 4;
        get.sample1 = gpm_[gpm_index_];
        get.sample2 = gpm_[current];
        for (unsigned i = 0; i < 4; ++i) get.metrics[i].metricId = kMetrics[i].id;
        ok = api_->GpmMetricsGet(&get) == kSuccess;
        gpm_index_ = current;
      }
    }
    for (unsigned i = 0; i < 4; ++i) {
      Metric m;
      m.name = kMetrics[i].name;
      m.help = kMetrics[i].help;
      m.unit = "%";
      m.labels = {{"device", id_}};
      if (ok && get.metrics[i].nvmlReturn == kSuccess) {
        m.value = get.metrics[i].value;
      } else {
        m.unavailable = ok ? api_->Why(get.metrics[i].nvmlReturn) : gpm_why_;
      }
      out.push_back(std::move(m));
    }
  }

  std::shared_ptr<Api> api_;
  nvmlDevice_t handle_;
  std::string id_, name_;
  unsigned long long last_seen_ = 0;
  nvmlGpmSample_t gpm_[2] = {};
  int gpm_index_ = 0;
  bool gpm_ok_ = false;
  std::string gpm_why_;
};

}  // namespace

std::vector<std::unique_ptr<Sampler>> OpenNvmlSamplers(std::string& why) {
  std::vector<std::unique_ptr<Sampler>> samplers;
  auto api = LoadApi(why);
  if (!api) return samplers;
  unsigned count = 0;
  if (api->GetCount(&count) != kSuccess || count == 0) {
    why = "NVIDIA driver loaded, but it reports no GPU";
    return samplers;
  }
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t handle = nullptr;
    if (api->GetHandleByIndex(i, &handle) == kSuccess) {
      samplers.push_back(std::make_unique<NvmlSampler>(api, handle, i));
    }
  }
  return samplers;
}

}  // namespace opscope::monitor
