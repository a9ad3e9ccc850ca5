/* A stand-in for the aclnn operator API (libnnopbase.so's tensors and
 * libopapi.so's matmul, in one library), declared as the CANN operator API
 * reference gives them: aclCreateTensor keeps the dims, type and data
 * pointer (device memory is host memory in fake_ascendcl.c), and
 * aclnnMatmul computes the product on the host in double: fp32 in and out,
 * fp16 inputs into an fp16 or fp32 output, bf16 in and out; aclnnConvolution
 * a direct NCHW convolution with its output in the inputs' type. A narrow
 * output is rounded to nearest even, as the chip stores it.
 * FAKE_ACL_FAIL=aclnnMatmul makes the launch fail. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int64_t rows, cols; /* a matrix's; for NCHW tensors dims[] */
  int64_t dims[4];
  uint64_t ndims;
  int type; /* 0 ACL_FLOAT, 1 ACL_FLOAT16, 27 ACL_BF16 */
  void* data;
} Tensor;
typedef struct {
  int64_t v[2];
} IntArray;
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
  if (offset != 0 || (type != 0 && type != 1 && type != 27)) return NULL;
  if (!(ndims == 2 && format == 2) && !(ndims == 4 && format == 0)) return NULL;
  Tensor* t = calloc(1, sizeof *t);
  t->ndims = ndims;
  for (uint64_t i = 0; i < ndims; ++i) t->dims[i] = dims[i];
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
static float bf16(uint16_t b) {
  const uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}
static float at(const Tensor* t, int64_t i) {
  if (t->type == 0) return ((const float*)t->data)[i];
  const uint16_t v = ((const uint16_t*)t->data)[i];
  return t->type == 1 ? half(v) : bf16(v);
}
/* Float to bf16 or binary16, round to nearest even (finite values; a value
 * past binary16's range becomes infinity). */
static uint16_t to_bf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}
static uint16_t to_half(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  const uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  const float a = fabsf(f);
  if (a >= 65520.0f) return sign | 0x7c00u;
  if (a < 6.103515625e-05f) { /* subnormal: a multiple of 2^-24 */
    return sign | (uint16_t)nearbyintf(a * 16777216.0f);
  }
  memcpy(&bits, &a, sizeof bits);
  const uint32_t exp = (bits >> 23) - 127 + 15, man = bits & 0x7fffffu;
  uint32_t h = (exp << 10) | (man >> 13);
  const uint32_t rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h; /* may carry into the exponent */
  return sign | (uint16_t)h;
}
static void put(Tensor* t, int64_t i, double v) {
  if (t->type == 0) {
    ((float*)t->data)[i] = (float)v;
  } else {
    ((uint16_t*)t->data)[i] = t->type == 1 ? to_half((float)v) : to_bf16((float)v);
  }
}

int aclnnMatmulGetWorkspaceSize(const Tensor* a, const Tensor* b, Tensor* c, int8_t math,
                                uint64_t* workspace, Executor** executor) {
  if (math != 0) return 161001;
  /* out in the inputs' type, or fp32 from fp16 (the reference's exception) */
  if (a->cols != b->rows || c->rows != a->rows || c->cols != b->cols || a->type != b->type ||
      (c->type != a->type && !(a->type == 1 && c->type == 0))) {
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
  for (int64_t i = 0; i < e->a->rows; ++i) {
    for (int64_t j = 0; j < e->b->cols; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < e->a->cols; ++p) {
        sum += (double)at(e->a, i * e->a->cols + p) * at(e->b, p * e->b->cols + j);
      }
      put(e->c, i * e->b->cols + j, sum);
    }
  }
  free(e); /* an executor serves one launch */
  return 0;
}

IntArray* aclCreateIntArray(const int64_t* v, uint64_t n) {
  if (n != 2) return NULL;
  IntArray* a = malloc(sizeof *a);
  a->v[0] = v[0], a->v[1] = v[1];
  return a;
}
int aclDestroyIntArray(const IntArray* a) {
  free((void*)a);
  return 0;
}

typedef struct {
  const Tensor *in, *w;
  Tensor* out;
  int64_t sh, sw, ph, pw, groups;
} ConvExecutor;

/* The reference's two stages for a 2-D convolution: NCHW, the output in the
 * inputs' type, no bias, no dilation, not transposed. */
int aclnnConvolutionGetWorkspaceSize(const Tensor* in, const Tensor* w, const Tensor* bias,
                                     const IntArray* stride, const IntArray* padding,
                                     const IntArray* dilation, bool transposed,
                                     const IntArray* out_padding, int64_t groups, Tensor* out,
                                     int8_t math, uint64_t* workspace, ConvExecutor** executor) {
  (void)out_padding;
  if (bias != NULL || transposed || math != 0 || dilation->v[0] != 1 || dilation->v[1] != 1 ||
      in->ndims != 4 || w->ndims != 4 || out->ndims != 4 || in->type != w->type ||
      out->type != in->type ||
      groups < 1 || in->dims[1] != w->dims[1] * groups) {
    return 161002;
  }
  ConvExecutor* e = malloc(sizeof *e);
  e->in = in, e->w = w, e->out = out;
  e->sh = stride->v[0], e->sw = stride->v[1], e->ph = padding->v[0], e->pw = padding->v[1];
  e->groups = groups;
  *executor = e;
  *workspace = 0;
  return 0;
}
int aclnnConvolution(void* workspace, uint64_t bytes, ConvExecutor* e, void* stream) {
  (void)workspace;
  (void)bytes;
  (void)stream;
  const int64_t n = e->in->dims[0], cin = e->in->dims[1], h = e->in->dims[2], w = e->in->dims[3];
  const int64_t cout = e->out->dims[1], ho = e->out->dims[2], wo = e->out->dims[3];
  const int64_t kh = e->w->dims[2], kw = e->w->dims[3], cg = cin / e->groups;
  const int64_t og = cout / e->groups;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < cout; ++o)
      for (int64_t i = 0; i < ho; ++i)
        for (int64_t j = 0; j < wo; ++j) {
          double sum = 0;
          const int64_t g = o / og;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t p = 0; p < kh; ++p)
              for (int64_t q = 0; q < kw; ++q) {
                const int64_t yy = i * e->sh - e->ph + p, xx = j * e->sw - e->pw + q;
                if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                sum += (double)at(e->in, ((b * cin + g * cg + c) * h + yy) * w + xx) *
                       at(e->w, ((o * cg + c) * kh + p) * kw + q);
              }
          put(e->out, ((b * cout + o) * ho + i) * wo + j, sum);
        }
  free(e);
  return 0;
}
