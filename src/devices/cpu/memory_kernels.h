// The CPU's own memory and arithmetic kernels, each split over a thread pool:
// copies, the four STREAM kernels, and FMA-bound loops that measure the
// arithmetic ceiling. Vector code is chosen at run time from the CPU's ISA.
#ifndef OPSCOPE_DEVICES_CPU_MEMORY_KERNELS_H_
#define OPSCOPE_DEVICES_CPU_MEMORY_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "devices/cpu/thread_pool.h"
#include "devices/device.h"

namespace opscope::devices::cpu {

// glibc memcpy over contiguous slices, one per thread.
void ParallelMemcpy(ThreadPool& pool, void* dst, const void* src, size_t bytes);
// Non-temporal (streaming) stores over slices: no read-for-ownership of the
// destination, so for arrays far larger than the caches it moves less data.
void ParallelStreamingCopy(ThreadPool& pool, void* dst, const void* src, size_t bytes);
// True when ParallelStreamingCopy uses AVX-512 or AVX stores (else it is memcpy).
bool HasStreamingCopy();

// STREAM: copy c=a, scale b=s*c, add c=a+b, triad a=b+s*c, over n doubles. Each
// thread repeats its slice `repeat` times in one dispatch, so arrays that fit in a
// cache measure the cache, not the cost of waking threads.
void RunStream(ThreadPool& pool, StreamOp kernel, double* a, double* b, double* c, double s,
               size_t n, int repeat);

// FMA-bound loops on every pool thread; return the FLOPs executed. The result of
// the arithmetic is kept so the compiler cannot drop it.
double FmaLoopFp32(ThreadPool& pool, int64_t iterations);
double FmaLoopBf16(ThreadPool& pool, int64_t iterations);
// The clock the cores run at with all pool threads busy, in GHz, from a chain of
// dependent one-cycle adds (the slowest thread's figure).
double MeasureClockGhz(ThreadPool& pool);

// Which instructions the loops use, for the report ("AVX-512 FMA", ...).
const char* FmaLoopIsaFp32();
const char* FmaLoopIsaBf16();

}  // namespace opscope::devices::cpu

#endif  // OPSCOPE_DEVICES_CPU_MEMORY_KERNELS_H_
