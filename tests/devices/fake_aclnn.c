/* A stand-in for the aclnn operator API (libnnopbase.so's tensors and
 * libopapi.so's matmul, in one library), declared as the CANN operator API
 * reference gives them: aclCreateTensor keeps the dims, type and data
 * pointer (device memory is host memory in fake_ascendcl.c), and
 * aclnnMatmul computes the product on the host, fp32 or fp16 inputs into an
 * fp32 output. FAKE_ACL_FAIL=aclnnMatmul makes the launch fail. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int64_t rows, cols;
  int type; /* 0 ACL_FLOAT, 1 ACL_FLOAT16 */
  void* data;
} Tensor;
typedef struct {
  const Tensor *a, *b;
  Tensor* c;
} Executor;

Tensor* aclCreateTensor(const int64_t* dims, uint64_t ndims, int type, const int64_t* strides,
                        int64_t offset, int format, const int64_t* storage, uint64_t nstorage,
                        void* data) {
  (void)strides;
  (void)storage;
  (void)nstorage;
  if (ndims != 2 || offset != 0 || format != 2 || (type != 0 && type != 1)) return NULL;
  Tensor* t = malloc(sizeof *t);
  t->rows = dims[0];
  t->cols = dims[1];
  t->type = type;
  t->data = data;
  return t;
}
int aclDestroyTensor(const Tensor* t) {
  free((void*)t);
  return 0;
}

static float half(uint16_t h) { /* IEEE binary16 to float */
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal: normalise */
      exp = 127 - 15 + 1;
      while (!(man & 0x400u)) man <<= 1, --exp;
      bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}
static float at(const Tensor* t, int64_t i) {
  return t->type == 0 ? ((const float*)t->data)[i] : half(((const uint16_t*)t->data)[i]);
}

int aclnnMatmulGetWorkspaceSize(const Tensor* a, const Tensor* b, Tensor* c, int8_t math,
                                uint64_t* workspace, Executor** executor) {
  if (math != 0) return 161001;
  if (a->cols != b->rows || c->rows != a->rows || c->cols != b->cols || a->type != b->type ||
      c->type != 0) {
    return 161002;
  }
  Executor* e = malloc(sizeof *e);
  e->a = a, e->b = b, e->c = c;
  *executor = e;
  *workspace = 4096;
  return 0;
}
int aclnnMatmul(void* workspace, uint64_t bytes, Executor* e, void* stream) {
  (void)stream;
  const char* fail = getenv("FAKE_ACL_FAIL");
  if (fail != NULL && strcmp(fail, "aclnnMatmul") == 0) {
    free(e);
    return 561000;
  }
  if (workspace == NULL || bytes < 4096) {
    free(e);
    return 161003;
  }
  float* c = e->c->data;
  for (int64_t i = 0; i < e->a->rows; ++i) {
    for (int64_t j = 0; j < e->b->cols; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < e->a->cols; ++p) {
        sum += (double)at(e->a, i * e->a->cols + p) * at(e->b, p * e->b->cols + j);
      }
      c[i * e->b->cols + j] = (float)sum;
    }
  }
  free(e); /* an executor serves one launch */
  return 0;
}
