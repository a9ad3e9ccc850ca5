/* A stand-in for AscendCL's runtime (libascendcl.so) with the functions the
 * NPU backend calls, declared as Huawei's AscendCL reference gives them:
 * two devices ("Ascend910B3"), device memory is host memory behind the
 * pointers, copies run at once (so events record real copy times), streams
 * and events are plain objects. Faults on request: FAKE_ACL_FAIL=<function
 * name> makes that function return 507000 and aclGetRecentErrMsg say so;
 * FAKE_ACL_LOSE_AFTER=<n> loses the device after n calls;
 * FAKE_ACL_MEMORY=<bytes> caps the device memory. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char message[256];

static long calls;
static int fail(const char* name) {
  /* FAKE_ACL_LOSE_AFTER=N: the device disappears after N calls, and every
   * call after that fails as a lost device's do. */
  const char* lose = getenv("FAKE_ACL_LOSE_AFTER");
  if (lose != NULL && ++calls > atol(lose)) {
    strcpy(message, "EL9999: fake: the device is lost (heartbeat lost)");
    return 507899;
  }
  const char* which = getenv("FAKE_ACL_FAIL");
  if (which != NULL && strcmp(which, name) == 0) {
    strcpy(message, "EE9999: fake failure of ");
    strncat(message, name, sizeof message - strlen(message) - 1);
    return 507000;
  }
  return 0;
}
#define FAIL(name)          \
  do {                      \
    int r_ = fail(name);    \
    if (r_ != 0) return r_; \
  } while (0)

static size_t used;
static size_t capacity(void) {
  const char* cap = getenv("FAKE_ACL_MEMORY");
  return cap != NULL ? (size_t)strtoull(cap, NULL, 10) : (size_t)64 << 30;
}

int aclInit(const char* config) {
  (void)config;
  FAIL("aclInit");
  return 0;
}
const char* aclGetRecentErrMsg(void) { return message; }
int aclrtGetDeviceCount(uint32_t* count) {
  FAIL("aclrtGetDeviceCount");
  *count = 2;
  return 0;
}
int aclrtSetDevice(int32_t device) {
  FAIL("aclrtSetDevice");
  return device >= 0 && device < 2 ? 0 : 107001;
}
int aclrtResetDevice(int32_t device) { return device >= 0 && device < 2 ? 0 : 107001; }
const char* aclrtGetSocName(void) { return "Ascend910B3"; }
int aclrtGetMemInfo(int attr, size_t* free_bytes, size_t* total) {
  FAIL("aclrtGetMemInfo");
  if (attr != 1) return 107000;
  *total = capacity();
  *free_bytes = *total - used;
  return 0;
}
/* Each block carries its size before the pointer handed out. */
int aclrtMalloc(void** p, size_t size, int policy) {
  (void)policy;
  FAIL("aclrtMalloc");
  if (used + size > capacity()) {
    strcpy(message, "EL0004: fake: out of device memory");
    return 207001;
  }
  size_t* block = malloc(size + 16);
  if (block == NULL) return 207001;
  block[0] = size;
  used += size;
  *p = (char*)block + 16;
  return 0;
}
int aclrtFree(void* p) {
  FAIL("aclrtFree");
  if (p == NULL) return 107000;
  size_t* block = (size_t*)((char*)p - 16);
  used -= block[0];
  free(block);
  return 0;
}
int aclrtMallocHost(void** p, size_t size) {
  FAIL("aclrtMallocHost");
  *p = malloc(size);
  return *p != NULL ? 0 : 207001;
}
int aclrtFreeHost(void* p) {
  free(p);
  return 0;
}
int aclrtMemcpy(void* dst, size_t max, const void* src, size_t count, int kind) {
  (void)kind;
  FAIL("aclrtMemcpy");
  if (count > max) return 107000;
  memcpy(dst, src, count);
  return 0;
}
int aclrtMemcpyAsync(void* dst, size_t max, const void* src, size_t count, int kind, void* stream) {
  (void)kind;
  (void)stream;
  FAIL("aclrtMemcpyAsync");
  if (count > max) return 107000;
  memcpy(dst, src, count);
  return 0;
}
int aclrtCreateStream(void** stream) {
  FAIL("aclrtCreateStream");
  *stream = malloc(1);
  return 0;
}
int aclrtDestroyStream(void* stream) {
  free(stream);
  return 0;
}
int aclrtSynchronizeStream(void* stream) {
  (void)stream;
  FAIL("aclrtSynchronizeStream");
  return 0;
}
int aclrtCreateEvent(void** event) {
  FAIL("aclrtCreateEvent");
  *event = calloc(1, sizeof(struct timespec));
  return 0;
}
int aclrtDestroyEvent(void* event) {
  free(event);
  return 0;
}
int aclrtRecordEvent(void* event, void* stream) {
  (void)stream;
  FAIL("aclrtRecordEvent");
  clock_gettime(CLOCK_MONOTONIC, (struct timespec*)event);
  return 0;
}
int aclrtStreamWaitEvent(void* stream, void* event) {
  (void)stream;
  (void)event;
  return 0;
}
int aclrtEventElapsedTime(float* ms, void* start, void* end) {
  FAIL("aclrtEventElapsedTime");
  const struct timespec* a = start;
  const struct timespec* b = end;
  *ms = (float)((b->tv_sec - a->tv_sec) * 1e3 + (b->tv_nsec - a->tv_nsec) / 1e6);
  return 0;
}

/* The device's core counts: aclrtGetDeviceInfo (101 AI Cores, 201 Vector
 * Cores) and the older aclGetDeviceCapability (2: the L2 buffer). */
int aclrtGetDeviceInfo(uint32_t device, int attr, int64_t* value) {
  if (device > 1) return 107001;
  if (attr == 101)
    *value = 20;
  else if (attr == 201)
    *value = 40;
  else
    return 107000;
  return 0;
}
int aclGetDeviceCapability(uint32_t device, int info, int64_t* value) {
  if (device > 1) return 107001;
  if (info == 0)
    *value = 20;
  else if (info == 1)
    *value = 40;
  else if (info == 2)
    *value = 192 << 20;
  else
    return 107000;
  return 0;
}
