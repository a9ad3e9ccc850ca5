#include "devices/cpu/memory_kernels.h"

#include <immintrin.h>

// GCC 12's _mm512_reduce_add_ps starts from _mm512_undefined_ps(), which
// -Wuninitialized flags in the header; the value is fully overwritten.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <vector>

namespace opscope::devices::cpu {
namespace {

// Thread i's share of [0, n), in units aligned to `align` elements.
void Slice(size_t n, int parts, int i, size_t align, size_t& begin, size_t& end) {
  const size_t units = (n + align - 1) / align;
  const size_t per = units / parts, extra = units % parts;
  const size_t b = i * per + std::min<size_t>(i, extra);
  const size_t e = b + per + (static_cast<size_t>(i) < extra ? 1 : 0);
  begin = std::min(n, b * align);
  end = std::min(n, e * align);
}

std::atomic<double> g_sink{0};  // keeps FMA results alive

__attribute__((target("avx512f"))) void StreamingCopyAvx512(char* dst, const char* src,
                                                            size_t bytes) {
  size_t i = 0;
  // Align the destination to 64 bytes for the streaming stores.
  const size_t head = std::min(bytes, (64 - reinterpret_cast<uintptr_t>(dst) % 64) % 64);
  std::memcpy(dst, src, head);
  i = head;
  for (; i + 256 <= bytes; i += 256) {
    const __m512i a = _mm512_loadu_si512(src + i);
    const __m512i b = _mm512_loadu_si512(src + i + 64);
    const __m512i c = _mm512_loadu_si512(src + i + 128);
    const __m512i d = _mm512_loadu_si512(src + i + 192);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), a);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 64), b);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 128), c);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 192), d);
  }
  _mm_sfence();
  std::memcpy(dst + i, src + i, bytes - i);
}

__attribute__((target("avx"))) void StreamingCopyAvx(char* dst, const char* src, size_t bytes) {
  const size_t head = std::min(bytes, (32 - reinterpret_cast<uintptr_t>(dst) % 32) % 32);
  std::memcpy(dst, src, head);
  size_t i = head;
  for (; i + 128 <= bytes; i += 128) {
    for (int k = 0; k < 4; ++k) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 32 * k));
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 32 * k), v);
    }
  }
  _mm_sfence();
  std::memcpy(dst + i, src + i, bytes - i);
}

// Ten independent accumulators cover the FMA latency of two pipes.
__attribute__((target("avx512f"))) double FmaAvx512(int64_t iterations) {
  __m512 acc[10];
  for (int k = 0; k < 10; ++k) acc[k] = _mm512_set1_ps(1.0f + k * 1e-3f);
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int k = 0; k < 10; ++k) acc[k] = _mm512_fmadd_ps(acc[k], m, a);
  }
  __m512 sum = acc[0];
  for (int k = 1; k < 10; ++k) sum = _mm512_add_ps(sum, acc[k]);
  return _mm512_reduce_add_ps(sum);
}

__attribute__((target("avx2,fma"))) double FmaAvx2(int64_t iterations) {
  __m256 acc[10];
  for (int k = 0; k < 10; ++k) acc[k] = _mm256_set1_ps(1.0f + k * 1e-3f);
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int k = 0; k < 10; ++k) acc[k] = _mm256_fmadd_ps(acc[k], m, a);
  }
  __m256 sum = acc[0];
  for (int k = 1; k < 10; ++k) sum = _mm256_add_ps(sum, acc[k]);
  alignas(32) float out[8];
  _mm256_store_ps(out, sum);
  double total = 0;
  for (float v : out) total += v;
  return total;
}

// VDPBF16PS has a longer latency than FMA: sixteen accumulators keep both pipes fed.
__attribute__((target("avx512f,avx512bf16"))) double DotBf16Avx512(int64_t iterations) {
  __m512 acc[16];
  for (int k = 0; k < 16; ++k) acc[k] = _mm512_setzero_ps();
  const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3F80);  // bf16 1.0
  const __m512bh y = (__m512bh)_mm512_set1_epi16(0x3380);  // bf16 ~6e-8
  for (int64_t i = 0; i < iterations; ++i) {
    for (int k = 0; k < 16; ++k) acc[k] = _mm512_dpbf16_ps(acc[k], x, y);
  }
  __m512 sum = acc[0];
  for (int k = 1; k < 16; ++k) sum = _mm512_add_ps(sum, acc[k]);
  return _mm512_reduce_add_ps(sum);
}

bool CpuHas(const char* feature) {
  __builtin_cpu_init();
  if (std::strcmp(feature, "avx512f") == 0) return __builtin_cpu_supports("avx512f");
  if (std::strcmp(feature, "avx2") == 0) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }
  if (std::strcmp(feature, "avx") == 0) return __builtin_cpu_supports("avx");
  if (std::strcmp(feature, "avx512bf16") == 0) return __builtin_cpu_supports("avx512bf16");
  return false;
}

// STREAM loops: compiled once per ISA, picked at load time. The copy loop must stay
// a loop: GCC would otherwise turn it into a call to memcpy, which measures glibc.
#if defined(__clang__)
#define OPSCOPE_KEEP_LOOP  // no per-function switch in clang
#else
#define OPSCOPE_KEEP_LOOP optimize("no-tree-loop-distribute-patterns")
#endif
__attribute__((target_clones("avx512f", "avx2", "default"), OPSCOPE_KEEP_LOOP)) void CopyLoop(
    double* c, const double* a, size_t b, size_t e) {
  for (size_t j = b; j < e; ++j) c[j] = a[j];
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void ScaleLoop(double* b_out,
                                                                            const double* c,
                                                                            double s, size_t b,
                                                                            size_t e) {
  for (size_t j = b; j < e; ++j) b_out[j] = s * c[j];
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void AddLoop(double* c,
                                                                          const double* a,
                                                                          const double* b_in,
                                                                          size_t b, size_t e) {
  for (size_t j = b; j < e; ++j) c[j] = a[j] + b_in[j];
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void TriadLoop(
    double* a, const double* b_in, const double* c, double s, size_t b, size_t e) {
  for (size_t j = b; j < e; ++j) a[j] = b_in[j] + s * c[j];
}

constexpr size_t kLineDoubles = 8;  // slices start on cache lines

}  // namespace

void ParallelMemcpy(ThreadPool& pool, void* dst, const void* src, size_t bytes) {
  // Below this, waking threads costs more than the copy saves.
  constexpr size_t kParallelBytes = size_t{1} << 20;
  if (bytes < kParallelBytes || pool.size() == 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  pool.Run([&](int i) {
    size_t b, e;
    Slice(bytes, pool.size(), i, 4096, b, e);
    if (e > b) std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b);
  });
}

bool HasStreamingCopy() { return CpuHas("avx512f") || CpuHas("avx"); }

void ParallelStreamingCopy(ThreadPool& pool, void* dst, const void* src, size_t bytes) {
  const bool avx512 = CpuHas("avx512f"), avx = CpuHas("avx");
  pool.Run([&](int i) {
    size_t b, e;
    Slice(bytes, pool.size(), i, 4096, b, e);
    if (e <= b) return;
    char* d = static_cast<char*>(dst) + b;
    const char* s = static_cast<const char*>(src) + b;
    if (avx512) {
      StreamingCopyAvx512(d, s, e - b);
    } else if (avx) {
      StreamingCopyAvx(d, s, e - b);
    } else {
      std::memcpy(d, s, e - b);
    }
  });
}

void RunStream(ThreadPool& pool, StreamOp kernel, double* a, double* b, double* c, double s,
               size_t n, int repeat) {
  pool.Run([&](int i) {
    size_t begin, end;
    Slice(n, pool.size(), i, kLineDoubles, begin, end);
    for (int r = 0; r < repeat; ++r) {
      switch (kernel) {
        case StreamOp::kCopy: CopyLoop(c, a, begin, end); break;
        case StreamOp::kScale: ScaleLoop(b, c, s, begin, end); break;
        case StreamOp::kAdd: AddLoop(c, a, b, begin, end); break;
        case StreamOp::kTriad: TriadLoop(a, b, c, s, begin, end); break;
      }
    }
  });
}

double FmaLoopFp32(ThreadPool& pool, int64_t iterations) {
  const bool avx512 = CpuHas("avx512f"), avx2 = CpuHas("avx2");
  const int lanes = avx512 ? 16 : avx2 ? 8 : 1;
  pool.Run([&](int) {
    double r = 0;
    if (avx512) {
      r = FmaAvx512(iterations);
    } else if (avx2) {
      r = FmaAvx2(iterations);
    } else {
      float acc[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
      for (int64_t i = 0; i < iterations; ++i) {
        for (float& v : acc) v = v * 0.999999f + 1e-7f;
      }
      for (float v : acc) r += v;
    }
    g_sink.store(r, std::memory_order_relaxed);
  });
  return static_cast<double>(iterations) * 10 * lanes * 2 * pool.size();
}

double FmaLoopBf16(ThreadPool& pool, int64_t iterations) {
  if (!CpuHas("avx512bf16")) return FmaLoopFp32(pool, iterations);
  pool.Run([&](int) { g_sink.store(DotBf16Avx512(iterations), std::memory_order_relaxed); });
  // Each VDPBF16PS: 16 fp32 lanes x 2 bf16 products x (multiply + add).
  return static_cast<double>(iterations) * 16 * 16 * 4 * pool.size();
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double MeasureClockGhz(ThreadPool& pool) {
  // A chain of dependent register adds runs at one add per cycle on every x86 core
  // since the P6, so adds per second of the thread's own CPU time is the clock it
  // runs at; CPU time, not wall time, so other processes sharing the core do not
  // count. Register to register: Golden Cove and later fold chains of
  // add-immediate in the renamer (measured here: 21 "GHz" with `add $1`, 3.7
  // with `add reg, reg`, agreeing with a 3-cycle imul chain).
  std::vector<double> ghz(pool.size());
  pool.Run([&](int thread) {
    double best = 0;
    for (int attempt = 0; attempt < 5; ++attempt) {
      constexpr int64_t kIterations = 200000;
      uint64_t x = 0;
      const uint64_t one = 1;
      const double start = ThreadCpuSeconds();
      for (int64_t i = 0; i < kIterations; ++i) {
#if defined(__x86_64__)
        asm volatile(
            ".rept 100\n\t"
            "add %1, %0\n\t"
            ".endr"
            : "+r"(x)
            : "r"(one));
#else
        for (int k = 0; k < 100; ++k) asm volatile("" : "+r"(x) : "0"(x + 1));
#endif
      }
      const double seconds = ThreadCpuSeconds() - start;
      best = std::max(best, static_cast<double>(kIterations) * 100 / seconds / 1e9);
    }
    ghz[thread] = best;
  });
  return *std::min_element(ghz.begin(), ghz.end());
}

const char* FmaLoopIsaFp32() {
  return CpuHas("avx512f") ? "AVX-512 VFMADD (zmm)"
         : CpuHas("avx2")  ? "AVX2 VFMADD (ymm)"
                           : "scalar";
}

const char* FmaLoopIsaBf16() {
  return CpuHas("avx512bf16") ? "AVX512-BF16 VDPBF16PS (zmm)" : "none: fp32 FMA stands in";
}

}  // namespace opscope::devices::cpu
