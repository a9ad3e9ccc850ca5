/* A stand-in for AscendCL's libascendcl.so (the runtime's utilization query
 * alone), as the AscendCL reference declares it: two devices; device 1 has no
 * vector units (-1) and the memory figure is reserved (-1) on both. */
#include <stdint.h>

typedef struct {
  int32_t cubeUtilization, vectorUtilization, aicpuUtilization, memoryUtilization;
  void* utilizationExtend;
} aclrtUtilizationInfo;

int aclInit(const char* config) {
  (void)config;
  return 0;
}
int aclrtGetDeviceCount(uint32_t* count) {
  *count = 2;
  return 0;
}
const char* aclrtGetSocName(void) { return "Ascend910B3"; }
int aclrtGetDeviceUtilizationRate(int32_t device, aclrtUtilizationInfo* info) {
  if (device < 0 || device > 1) return 107001;
  info->cubeUtilization = device == 0 ? 64 : 3;
  info->vectorUtilization = device == 0 ? 21 : -1;
  info->aicpuUtilization = 1;
  info->memoryUtilization = -1;
  info->utilizationExtend = 0;
  return 0;
}
