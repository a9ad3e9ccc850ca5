/* A stand-in for libnvidia-ml.so with two GPUs and fixed readings, so the NVML
 * sampler's loading, calls and unit conversions are tested without a GPU.
 * GPU 0 supports GPM; GPU 1 reports NOT_SUPPORTED for power and GPM. */
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef union {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
} nvmlValue_t;
typedef struct {
  unsigned long long timeStamp;
  nvmlValue_t sampleValue;
} nvmlSample_t;
typedef struct {
  void* handle;
} nvmlGpmSample_t;
typedef struct {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char *s, *l, *u;
  } info;
} nvmlGpmMetric_t;
typedef struct {
  unsigned int version, numMetrics;
  nvmlGpmSample_t sample1, sample2;
  nvmlGpmMetric_t metrics[98];
} nvmlGpmMetricsGet_t;
typedef struct {
  unsigned int version, isSupportedDevice;
} nvmlGpmSupport_t;

static int devices[2];
static int samples_token;
#define DEV(h) ((int*)(h)-devices)

nvmlReturn_t nvmlInit_v2(void) { return 0; }
nvmlReturn_t nvmlShutdown(void) { return 0; }
const char* nvmlErrorString(nvmlReturn_t r) { return r == 3 ? "Not Supported" : "Unknown Error"; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* n) {
  *n = 2;
  return 0;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t* d) {
  if (i > 1) return 2;
  *d = (nvmlDevice_t)&devices[i];
  return 0;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned int n) {
  strncpy(name, DEV(d) == 0 ? "Fake H200" : "Fake A100", n);
  return 0;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  u->gpu = DEV(d) == 0 ? 87 : 5;
  u->memory = 40;
  return 0;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  (void)d;
  m->total = 150ull << 30;
  m->used = 20ull << 30;
  m->free = m->total - m->used;
  return 0;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw) {
  if (DEV(d) == 1) return 3;
  *mw = 512345;
  return 0;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, unsigned s, unsigned int* t) {
  (void)d;
  (void)s;
  *t = 61;
  return 0;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, unsigned type, unsigned int* mhz) {
  (void)d;
  *mhz = type == 1 ? 1980 : 2619;
  return 0;
}
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, unsigned c, unsigned int* kb) {
  (void)d;
  *kb = c == 0 ? 1000 : 2000;
  return 0;
}
/* Three samples (30, 90, 60) the first time, none after: the sampler must pass the
 * last timestamp it saw. */
nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t d, unsigned type, unsigned long long last,
                                  unsigned* vt, unsigned int* count, nvmlSample_t* s) {
  (void)d;
  (void)type;
  *vt = 1;
  if (last >= 300) {
    *count = 0;
    return 0;
  }
  if (s == 0) {
    *count = 3;
    return 0;
  }
  static const unsigned values[3] = {30, 90, 60};
  for (int i = 0; i < 3 && i < (int)*count; ++i) {
    s[i].timeStamp = 100 * (i + 1);
    s[i].sampleValue.uiVal = values[i];
  }
  *count = 3;
  samples_token++;
  return 0;
}
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t* s) {
  s->isSupportedDevice = DEV(d) == 0;
  return 0;
}
nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* s) {
  s->handle = (void*)s;
  return 0;
}
nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s) {
  (void)s;
  return 0;
}
nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t s) {
  (void)d;
  (void)s;
  return 0;
}
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* g) {
  if (g->version != 1 || g->numMetrics > 98) return 2;
  for (unsigned i = 0; i < g->numMetrics; ++i) {
    g->metrics[i].nvmlReturn = g->metrics[i].metricId == 10 ? 3 : 0;
    g->metrics[i].value = 10.0 * g->metrics[i].metricId + 0.5;
  }
  return 0;
}
